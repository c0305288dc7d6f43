package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/schema"
	"github.com/wololo/wololo/transport"
)

// TestFailedJob: a job reported failed shows the reason to its client,
// refuses uploads, ignores results that come later, and is still failed
// after the gateway restarts. A job that is done stays done.
func TestFailedJob(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGateway(t, store, time.Hour, make(chan string, 4))
	g := svc.(jobService).g
	ctx := context.Background()
	for _, name := range []string{"lost", "done"} {
		if _, err := svc.CreateJob(ctx, createRequest(name)); err != nil {
			t.Fatal(err)
		}
	}
	id := func(name string) string {
		j, err := g.jobs.lookup("", name)
		if err != nil {
			t.Fatal(err)
		}
		return j.id
	}
	results := map[string][]byte{}
	for _, f := range schema.ResultFiles {
		results[schema.ResultRecord(f)] = []byte("header\n")
	}
	g.Finished(id("done"), results)

	const reason = "channel state lost: shard-0 is at batch 0 of matches from gateway-0 but had acknowledged batch 7"
	for _, name := range []string{"lost", "done"} {
		if err := g.FailJob(id(name), "gateway-0", reason); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.FailJob("nosuchjob", "shard-1", reason); err != nil {
		t.Fatalf("a failure of an unknown job: %v", err)
	}
	g.Finished(id("lost"), results) // too late

	if r, err := svc.GetJob(ctx, &wololov1.GetJobRequest{JobId: "done"}); err != nil || r.Job.State != wololov1.JobState_JOB_STATE_DONE {
		t.Fatalf("done job %+v, %v; want done still", r.GetJob(), err)
	}
	check := func(when string, svc wololov1.JobServiceServer) {
		t.Helper()
		r, err := svc.GetJob(ctx, &wololov1.GetJobRequest{JobId: "lost"})
		if err != nil || r.Job.State != wololov1.JobState_JOB_STATE_FAILED || r.Job.Message != reason {
			t.Fatalf("%s: lost job %+v, %v; want failed with the reason", when, r.GetJob(), err)
		}
		_, err = uploadMatches(svc, "lost", []string{"x"}, 0)
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), reason) {
			t.Fatalf("%s: upload to the failed job: %v; want FailedPrecondition with the reason", when, err)
		}
	}
	check("live", svc)
	check("after a restart", testGateway(t, store, time.Hour, make(chan string, 4)))
}
