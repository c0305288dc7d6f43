package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
)

// TestAPendingIntroductionIsNoLoss: a job the gateway has introduced to
// shard-1 but not yet to shard-0 (the gateway introduces to every
// instance at once, and shard-0 was restarting) is not failed as lost
// when shard-0's new incarnation announces itself to shard-1 first:
// shard-1 checks its channels to a peer only where it sent something,
// and only the gateway's "not introduced" means lost. Seen in CI as
// TestSQLJobRestartsRecoverExactly's "shard-0 was never told of job ...
// this sender holds the job, so shard-0 lost this job's state".
func TestAPendingIntroductionIsNoLoss(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	jobs := jobsAs(t, c, "client")
	// Queries that shuffle from shard to shard (userQueries' "twice").
	mcols, pcols := datagen.Headers()
	header := func(cols []string) *wololov1.FileHeader {
		return &wololov1.FileHeader{Columns: cols, Size: 1 << 20, DataOffset: 256}
	}
	if _, err := jobs.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: "pending", Matches: header(mcols), Players: header(pcols),
		Queries: []*wololov1.Query{{Name: userQueries[1].Name, Sql: userQueries[1].Text}}}); err != nil {
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
	// The gateway's introduction reaches shard-1 only.
	creds, err := c.CA.Credentials(pki.Identity{Kind: pki.Instance, Name: "gateway-0"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rpc.NewClient(c.Addrs["shard-1"], creds.ClientTLS("shard-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := wololov1.NewStageServiceClient(conn).IntroduceJob(ctx, &wololov1.IntroduceJobRequest{JobId: id, Plan: plan}); err != nil {
		t.Fatal(err)
	}
	// shard-0 restarts and announces itself to shard-1.
	if err := c.Restart("shard-0"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second) // a failure guard: the lost report came within milliseconds
	for time.Now().Before(deadline) {
		got, err := jobs.GetJob(ctx, &wololov1.GetJobRequest{JobId: "pending"})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetJob().GetState() == wololov1.JobState_JOB_STATE_FAILED {
			t.Fatalf("the job failed while its introduction was pending: %s", got.GetJob().GetMessage())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
