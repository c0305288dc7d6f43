package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
)

// TestAPendingIntroductionIsNoLoss: a job the gateway has introduced to
// shard-1 but not yet to shard-0 (the gateway introduces to every
// instance at once, and shard-0 was restarting) is not failed as lost
// when shard-0's new incarnation announces itself to shard-1 first:
// shard-1 checks its channels to a peer only where it sent something,
// and only the gateway's "not introduced" means lost. The job, a query
// that shuffles from shard to shard, then runs to its exact answer,
// never lost and submitted again by its client. Seen
// in CI as TestSQLJobRestartsRecoverExactly's "shard-0 was never told of
// job ... this sender holds the job, so shard-0 lost this job's state".
func TestAPendingIntroductionIsNoLoss(t *testing.T) {
	d := testDatasets(t)[0]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	qs := []sqljob.Query{userQueries[1]} // "twice": a shuffle from shard to shard
	o := client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: d.matches, Players: d.players, Out: t.TempDir(), Queries: qs, JobID: "pending"}
	req, err := client.Request(o)
	if err != nil {
		t.Fatal(err)
	}
	jobs := jobsAs(t, c, "client")
	if _, err := jobs.CreateJob(ctx, req); err != nil {
		t.Fatal(err)
	}
	listed, err := jobs.ListJobs(ctx, &wololov1.ListJobsRequest{})
	if err != nil || len(listed.GetJobs()) != 1 {
		t.Fatalf("jobs %v, %v", listed, err)
	}
	id := listed.GetJobs()[0].GetId()
	plan, ok := c.Nodes["gateway-0"].Gateway.PlanOf(id)
	if !ok || len(plan) == 0 {
		t.Fatalf("no plan for job %s", id)
	}
	// The gateway's introduction reaches shard-1 only, as when shard-0
	// is restarting.
	creds, err := c.CA.Credentials(pki.Identity{Kind: pki.Instance, Name: "gateway-0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wololov1.NewStageServiceClient(dialAs(t, c, "shard-1", creds.ClientTLS("shard-1"))).IntroduceJob(ctx, &wololov1.IntroduceJobRequest{JobId: id, Plan: plan}); err != nil {
		t.Fatal(err)
	}
	// shard-0 restarts and announces itself to shard-1; then the client
	// resumes the job, whose upload introduces it everywhere.
	if err := c.Restart("shard-0"); err != nil {
		t.Fatal(err)
	}
	status := wololov1.NewStatusClient(dialAs(t, c, "shard-0", operatorTLS(t, c, "shard-0")))
	testkit.WaitForNil(t, "shard-1 to hear of shard-0's new incarnation (Status.announced)", time.Minute, func() error {
		st, err := status.Get(ctx, &wololov1.GetRequest{})
		if err == nil && !st.GetAnnounced() {
			err = errors.New("not announced yet")
		}
		return err
	})
	sum, err := client.Submit(ctx, o)
	if err != nil {
		t.Fatalf("the job after its pending introduction: %v", err)
	}
	if len(sum.Rebuilds) != 0 {
		t.Fatalf("the job was lost and submitted again: %q", sum.Rebuilds)
	}
	compareSQL(t, d, qs, o.Out)
}

// dialAs connects to an instance's internal port with cfg.
func dialAs(t *testing.T, c *node.Cluster, instance string, cfg *tls.Config) *grpc.ClientConn {
	t.Helper()
	conn, err := rpc.NewClient(c.Addrs[instance], cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
