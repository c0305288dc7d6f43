package e2e

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/client"
	gw "github.com/wololo/wololo/services/roles/gateway"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/rpc"
	"github.com/wololo/wololo/transport"
)

// TestCancelEndsTheAttachedSubmit: `client cancel` of a job whose
// `client submit` is still uploading it ends that submit with the cancel
// (an error marked cli.ErrCancelled, exit 7, that says it was cancelled by
// its client), not with "lost" and a resubmission: the job does not come
// back in the client's list. The operator's cancel ends it the same way,
// saying so; and so does a cancel the submit hears of only from the
// gateway restarted since (which used to say "no such job", a job lost
// and submitted again).
func TestCancelEndsTheAttachedSubmit(t *testing.T) {
	medium := testDatasets(t)[2]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{BatchRows: 64, OutboxLimit: 2})
	dir := clientDir(t, c, "client")
	tlsConfig, err := c.ClientTLS("client")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rpc.NewClient(c.GatewayAddr(), tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	jobs := wololov1.NewJobServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	operator := operatorDir(t, c)
	gateway := []string{"--server", c.GatewayAddr(), "--tls-dir", dir, "--name", "client"}

	for _, tc := range []struct {
		job, says string
		cancel    func(t *testing.T, job string)
	}{
		{"by-client", "cancelled by its client", func(t *testing.T, job string) {
			var out bytes.Buffer
			if err := client.Run(ctx, append([]string{"cancel", "--job", job}, gateway...), &out, &out); err != nil {
				t.Fatalf("client cancel: %v\n%s", err, out.String())
			}
		}},
		{"by-operator", "deleted by the operator", func(t *testing.T, job string) {
			listed, err := jobs.ListJobs(ctx, &wololov1.ListJobsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range listed.GetJobs() {
				if j.GetName() == job {
					var out bytes.Buffer
					if err := client.Run(ctx, []string{"cancel", "--operator", "--job", j.GetId(), "--server", c.GatewayAddr(), "--tls-dir", operator}, &out, &out); err != nil {
						t.Fatalf("client cancel --operator: %v\n%s", err, out.String())
					}
					return
				}
			}
			t.Fatalf("job %s is not listed: %v", job, listed)
		}},
		{"across-a-restart", "cancelled by its client", func(t *testing.T, job string) {
			if err := c.StopInstance("gateway-0"); err != nil {
				t.Fatal(err)
			}
			cancelOnStore(t, c, "gateway-0", job)
			if err := c.StartInstance("gateway-0"); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.job, func(t *testing.T) {
			var stderr bytes.Buffer
			done := make(chan error, 1)
			go func() {
				var stdout bytes.Buffer
				done <- client.Run(ctx, append([]string{"submit", "--quiet", "--job", tc.job, "--matches", medium.matches, "--players", medium.players, "--out", t.TempDir()}, gateway...), &stdout, &stderr)
			}()
			uploadedPast(t, jobs, tc.job, 0)
			tc.cancel(t, tc.job)
			var err error
			select {
			case err = <-done:
			case <-ctx.Done():
				t.Fatal("the submit did not end after its job was cancelled")
			}
			if err == nil || !errors.Is(err, cli.ErrCancelled) || cli.ExitCode(err) != cli.ExitCancelled || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("the attached submit of a cancelled job: %v (exit %d), want exit %d saying %q\n%s", err, cli.ExitCode(err), cli.ExitCancelled, tc.says, stderr.String())
			}
			if strings.Contains(stderr.String(), "submitting it again") || strings.Contains(err.Error(), "lost") {
				t.Fatalf("a cancelled job was taken for a lost one: %v\n%s", err, stderr.String())
			}
			listed, err := jobs.ListJobs(ctx, &wololov1.ListJobsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range listed.GetJobs() {
				if j.GetName() == tc.job {
					t.Fatalf("the cancelled job is back at the gateway: %v", j)
				}
			}
		})
	}
}

// cancelOnStore cancels the client's job named job on the store of the
// stopped gateway instance, as the gateway did just before it stopped,
// so that the attached submit hears of the cancel only from the gateway
// started again: by a gateway of the test's on that store, serving the
// job's client its DeleteJob.
func cancelOnStore(t *testing.T, c *node.Cluster, instance, job string) {
	t.Helper()
	store := c.Store(instance)
	var owner string
	g, err := gw.New(gw.Config{
		Topology:  c.Topology,
		Committer: transport.NewCommitter(store, transport.NewOutbox(store), transport.NewInbox(), nil),
		Identify:  func(context.Context) (string, error) { return owner, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Recover(img); err != nil {
		t.Fatal(err)
	}
	for _, j := range g.ClusterJobs() {
		if j.GetName() == job {
			owner = j.GetClient()
		}
	}
	if _, err := g.Service().DeleteJob(context.Background(), &wololov1.DeleteJobRequest{JobId: job}); err != nil {
		t.Fatalf("cancel %s on the stopped gateway's store: %v", job, err)
	}
}
