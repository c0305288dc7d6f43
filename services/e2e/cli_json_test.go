package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/roles/node"
)

// TestClientJSONAndEnvironment runs `wololo client submit --json` and
// `client status --json` in process against a cluster: stdout is exactly
// one JSON object with the report's fields and the same numbers as the
// files written, progress stays on stderr; the gateway and credential come
// from WOLOLO_SERVER and WOLOLO_TLS_DIR; a request the gateway refuses
// exits 4, and submit --json prints its object with error and hint then.
func TestClientJSONAndEnvironment(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	d := testDatasets(t)[0]
	other := testDatasets(t)[1]
	t.Setenv(client.EnvServer, c.GatewayAddr())
	t.Setenv(tlsflags.EnvDir, clientDir(t, c, "client"))
	t.Setenv(tlsflags.EnvClient, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(args ...string) (map[string]any, string, error) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		err := client.Run(ctx, args, &stdout, &stderr)
		if stdout.Len() == 0 {
			return nil, stderr.String(), err
		}
		if strings.Count(stdout.String(), "\n") != 1 {
			t.Fatalf("%q: stdout is not one line:\n%s", args, stdout.String())
		}
		var obj map[string]any
		if jerr := json.Unmarshal(stdout.Bytes(), &obj); jerr != nil {
			t.Fatalf("%q: stdout is not JSON (%v):\n%s", args, jerr, stdout.String())
		}
		return obj, stderr.String(), err
	}

	out := t.TempDir()
	rep, progress, err := run("submit", "--json", "--job", "scripted", "--keep", "--matches", d.matches, "--players", d.players, "--out", out)
	if err != nil {
		t.Fatalf("submit --json: %v\n%s", err, progress)
	}
	compareOutputs(t, d, out)
	if !strings.Contains(progress, "job scripted created on "+c.GatewayAddr()) {
		t.Errorf("no progress on stderr:\n%s", progress)
	}
	for _, k := range []string{"job_id", "state", "elapsed_seconds", "inputs", "result_rows", "outputs", "uploaded_bytes", "upload_seconds", "total_seconds"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("submit --json lacks %q: %v", k, rep)
		}
	}
	if rep["job_id"] != "scripted" || rep["state"] != "done" || rep["error"] != nil {
		t.Errorf("submit --json: job_id %v state %v error %v", rep["job_id"], rep["state"], rep["error"])
	}
	if rep["total_seconds"].(float64) <= 0 || rep["upload_seconds"].(float64) <= 0 || rep["total_seconds"].(float64) < rep["upload_seconds"].(float64) {
		t.Errorf("durations: upload %v total %v", rep["upload_seconds"], rep["total_seconds"])
	}
	mInfo, _ := os.Stat(d.matches)
	pInfo, _ := os.Stat(d.players)
	if rep["uploaded_bytes"].(float64) != float64(mInfo.Size()+pInfo.Size()) {
		t.Errorf("uploaded_bytes %v, want %d", rep["uploaded_bytes"], mInfo.Size()+pInfo.Size())
	}
	outputs := rep["outputs"].([]any)
	names := schema.ResultFiles(queries.Names)
	if len(outputs) != len(names) {
		t.Fatalf("outputs: %v", outputs)
	}
	want := d.want.Files()
	for i, o := range outputs {
		o := o.(map[string]any)
		name := names[i]
		rows := bytes.Count(want[name], []byte("\n")) - 1
		if o["name"] != name || o["path"] != out+"/"+name || o["rows"].(float64) != float64(rows) || o["bytes"].(float64) != float64(len(want[name])) {
			t.Errorf("output %d: %v, want %s with %d rows and %d bytes", i, o, name, rows, len(want[name]))
		}
	}
	inputs := rep["inputs"].([]any)
	if len(inputs) != 2 || inputs[0].(map[string]any)["rows"].(float64) != float64(d.want.Report.Matches.Rows) {
		t.Errorf("inputs: %v, want the matches file first with %d rows", inputs, d.want.Report.Matches.Rows)
	}

	st, _, err := run("status", "--json", "--job", "scripted")
	if err != nil {
		t.Fatalf("status --json: %v", err)
	}
	if st["job_id"] != "scripted" || st["state"] != "done" || len(st["inputs"].([]any)) != 2 || st["result_rows"] == nil {
		t.Errorf("status --json: %v", st)
	}
	for _, k := range names {
		if st["result_rows"].(map[string]any)[k] != rep["result_rows"].(map[string]any)[k] {
			t.Errorf("status and submit disagree on %s: %v vs %v", k, st["result_rows"], rep["result_rows"])
		}
	}

	// Refusals: exit status 4; status prints nothing on stdout, submit
	// its object with error and hint (a job name reused with other files).
	args := []string{"status", "--json", "--job", "no-such-job"}
	if obj, _, err := run(args...); cli.ExitCode(err) != cli.ExitRefused || obj != nil {
		t.Errorf("%q: err %v (exit %d), stdout %v; want exit %d and no output", args, err, cli.ExitCode(err), obj, cli.ExitRefused)
	}
	args = []string{"submit", "--json", "--job", "scripted", "--keep", "--matches", other.matches, "--players", other.players, "--out", t.TempDir()}
	obj, _, err := run(args...)
	if cli.ExitCode(err) != cli.ExitRefused || obj == nil || obj["job_id"] != "scripted" || obj["error"] == nil || obj["hint"] == nil ||
		!strings.Contains(obj["error"].(string), "was created with another") {
		t.Errorf("%q: err %v (exit %d), stdout %v; want exit %d and the object with error and hint", args, err, cli.ExitCode(err), obj, cli.ExitRefused)
	}
}
