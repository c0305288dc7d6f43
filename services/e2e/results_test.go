package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/roles/node"
)

// TestResultsReleasesTheJob: `wololo client results` of a kept job writes
// the four files byte-equal to the reference and then releases the job at
// the gateway, as the README says; with --keep it stays.
func TestResultsReleasesTheJob(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	d := testDatasets(t)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: d.matches, Players: d.players, Out: t.TempDir(), JobID: "kept", Keep: true}); err != nil {
		t.Fatal(err)
	}
	gw, err := client.Open(c.GatewayAddr(), clientTLS(t, c), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	dir := clientDir(t, c, "client")
	results := func(extra ...string) string {
		t.Helper()
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		args := append([]string{"results", "--tls-dir", dir, "--server", c.GatewayAddr(), "--job", "kept", "--out", out}, extra...)
		if err := client.Run(ctx, args, &stdout, &stderr); err != nil {
			t.Fatalf("client results: %v\n%s", err, stderr.String())
		}
		compareOutputs(t, d, out)
		return stdout.String()
	}
	if out := results("--keep"); strings.Contains(out, "released") {
		t.Fatalf("--keep released the job:\n%s", out)
	}
	if _, err := gw.Get(ctx, "kept"); err != nil {
		t.Fatalf("after results --keep: %v", err)
	}
	if out := results(); !strings.Contains(out, "released job kept") {
		t.Fatalf("results did not say it released the job:\n%s", out)
	}
	if _, err := gw.Get(ctx, "kept"); status.Code(err) != codes.NotFound {
		t.Fatalf("after results the job is still there: %v", err)
	}
}

// TestJobIdsAreFingerprintedNames: a job id used again after its job was
// fetched and released runs a new job (it used to hang on the old job's
// tombstones); the id of a kept job with the same files gives its answers
// at once; with other files it is refused at once, saying so.
func TestJobIdsAreFingerprintedNames(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	sets := testDatasets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	run := func(d *dataset, keep bool) error {
		out := t.TempDir()
		progress.Reset()
		_, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: d.matches, Players: d.players, Out: out, JobID: "nightly", Keep: keep, Reach: 5 * time.Second, Progress: &progress})
		if err == nil {
			compareOutputs(t, d, out)
		}
		return err
	}
	if err := run(sets[0], false); err != nil {
		t.Fatal(err)
	}
	if err := run(sets[1], true); err != nil { // the name again, after a release: a new job
		t.Fatalf("the id again after its job was released: %v", err)
	}
	if err := run(sets[1], true); err != nil { // kept, same files: its answers
		t.Fatalf("the id of a kept job with its files: %v", err)
	}
	if !strings.Contains(progress.String(), "job nightly resumed") {
		t.Errorf("a resumed job did not say so:\n%s", progress.String())
	}
	err := run(sets[0], true) // kept, other files
	if err == nil || !strings.Contains(err.Error(), `job "nightly" was created with another matches.csv`) {
		t.Fatalf("the id of a kept job with other files: %v, want a refusal saying so", err)
	}
}
