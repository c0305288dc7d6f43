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
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/pki"
)

// TestTheOperatorCancelsAnyJob: `wololo client cancel --operator --job ID`, as
// the operator credential, drops another client's job (a job left
// uploading, here) by the id `wololo top` shows; its client then hears
// that the operator deleted it. A client credential asking the same is
// refused, and so is an id the gateway does not hold.
func TestTheOperatorCancelsAnyJob(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice := jobsAs(t, c, "alice")
	if _, err := alice.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: "costly", Matches: headerOf(schema.Matches, 64, 1<<20), Players: headerOf(schema.Players, 64, 1<<20)}); err != nil {
		t.Fatal(err)
	}
	listed, err := alice.ListJobs(ctx, &wololov1.ListJobsRequest{})
	if err != nil || len(listed.GetJobs()) != 1 {
		t.Fatalf("alice's jobs: %v, %v", listed, err)
	}
	id := listed.GetJobs()[0].GetId()

	dir := clientDir(t, c, "bob")
	if _, err := c.CA.Ensure(dir, pki.Spec{ID: pki.Identity{Kind: pki.Operator, Name: "operator"}}); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var stdout, stderr bytes.Buffer
		err := client.Run(ctx, append([]string{"cancel", "--server", c.GatewayAddr(), "--tls-dir", dir}, args...), &stdout, &stderr)
		return stdout.String() + stderr.String(), err
	}
	if out, err := run("--operator", "--job", id, "--name", "bob"); err == nil || !strings.Contains(err.Error(), "operator credential") {
		t.Fatalf("a client's credential cancelling as the operator: %v %s, want it refused naming the operator credential", err, out)
	}
	if out, err := run("--operator", "--job", "no-such-job"); err == nil {
		t.Fatalf("the operator cancelling a job the gateway does not hold: no error (%s)", out)
	}
	out, err := run("--operator", "--job", id)
	if err != nil || !strings.Contains(out, "cancelled job "+id) {
		t.Fatalf("the operator's cancel: %v %s", err, out)
	}
	_, err = alice.GetJob(ctx, &wololov1.GetJobRequest{JobId: "costly"})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("alice's job after the operator's cancel: %v, want NotFound", err)
	}
}
