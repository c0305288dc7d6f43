package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/roles/node"
)

// TestElapsedTimeSurvivesGatewayRestart: a finished job's elapsed time, as
// `client status --json` prints it (top and the web page show the same
// field), is the same after the gateway restarts as before. It used to be
// counted again from the restart: 0.1 s became 20.4 s.
func TestElapsedTimeSurvivesGatewayRestart(t *testing.T) {
	top := deploy.Default()
	c := startCluster(t, top, node.ClusterOptions{})
	d := testDatasets(t)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := t.TempDir()
	if _, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: d.matches, Players: d.players, Out: out, JobID: "timed", Keep: true}); err != nil {
		t.Fatal(err)
	}
	compareOutputs(t, d, out)
	dir := clientDir(t, c, "client")
	elapsed := func(when string) float64 {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args := []string{"status", "--json", "--tls-dir", dir, "--server", c.GatewayAddr(), "--job", "timed", "--connect-timeout", "30s"}
		if err := client.Run(ctx, args, &stdout, &stderr); err != nil {
			t.Fatalf("%s: client status: %v\n%s", when, err, stderr.String())
		}
		var r client.JobReport
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			t.Fatalf("%s: status --json: %v\n%s", when, err, stdout.String())
		}
		if r.State != "done" {
			t.Fatalf("%s: the job is %q, not done", when, r.State)
		}
		return r.ElapsedSeconds
	}
	before := elapsed("before the restart")
	testkit.NextMillisecond() // the clock moved on since: a live clock would show it
	if again := elapsed("a while later"); again != before {
		t.Fatalf("a finished job's elapsed time grew from %.3f s to %.3f s", before, again)
	}
	gateway := deploy.Instance{Stage: top.Gateway().Name, Index: 0}.Name()
	if err := c.Restart(gateway); err != nil {
		t.Fatal(err)
	}
	if after := elapsed("after the restart"); after != before {
		t.Fatalf("elapsed %.3f s after the gateway restarted, %.3f s before", after, before)
	}
}
