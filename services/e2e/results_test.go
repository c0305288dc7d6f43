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
	"github.com/wololo/wololo/services/client"
	"github.com/wololo/wololo/services/node"
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
