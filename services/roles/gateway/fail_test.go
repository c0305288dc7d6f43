package gateway

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// TestFailedJob: a job reported failed shows the reason to its client,
// refuses uploads, ignores results that come later, and is still failed
// after the gateway restarts, saying whether it was lost state (an
// attached client submits such a job again). A job that is done stays
// done.
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
	id := func(name string) string { return internalID(t, g, name) }
	results := headerOnlyResults()
	g.Finished(id("done"), results)

	const reason = "channel state lost: shard-0 is at batch 0 of matches from gateway-0 but had acknowledged batch 7"
	for _, name := range []string{"lost", "done"} {
		if err := g.FailJob(transport.JobFailure{Job: id(name), Reporter: "gateway-0", Reason: reason, StateLost: true}); err != nil {
			t.Fatal(err)
		}
	}
	// A job the gateway does not hold: the reporter is told it is
	// dropped, and drops what it keeps of it.
	if err := g.FailJob(transport.JobFailure{Job: "nosuchjob", Reporter: "shard-1", Reason: reason}); !errors.Is(err, transport.ErrJobDropped) {
		t.Fatalf("a failure of an unknown job: %v; want ErrJobDropped", err)
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
		if !r.Job.StateLost {
			t.Fatalf("%s: lost job %+v: not marked state_lost", when, r.GetJob())
		}
		_, err = uploadMatches(svc, "lost", []string{"x"}, 0)
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), reason) {
			t.Fatalf("%s: upload to the failed job: %v; want FailedPrecondition with the reason", when, err)
		}
	}
	check("live", svc)
	check("after a restart", testGateway(t, store, time.Hour, make(chan string, 4)))
}

// TestFinishTimeSurvivesRestart: a done job's and a failed job's elapsed
// time is the same after the gateway restarts (it used to restart the
// clock at the recovery: 0.1 s became 20.4 s). A done job's finish time is
// the sink's final commit's, which also holds its results.
func TestFinishTimeSurvivesRestart(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGateway(t, store, time.Hour, make(chan string, 4))
	g := svc.(jobService).g
	ctx := context.Background()
	for _, name := range []string{"done", "failed"} {
		if _, err := svc.CreateJob(ctx, createRequest(name)); err != nil {
			t.Fatal(err)
		}
	}
	id := func(name string) string { return internalID(t, g, name) }
	testkit.NextMillisecond() // an elapsed time that is not 0, in the store's milliseconds
	// The sink's final commit, as the stage runtime writes it in the
	// gateway's store, then its OnFinish.
	records := headerOnlyResults()
	records["stage/finished"] = []byte(strconv.FormatInt(time.Now().UnixMilli(), 10))
	if err := store.Commit(&transport.Commit{Job: id("done"), Records: records}); err != nil {
		t.Fatal(err)
	}
	g.Finished(id("done"), records)
	if err := g.FailJob(transport.JobFailure{Job: id("failed"), Reporter: "shard-0", Reason: "channel state lost", StateLost: true}); err != nil {
		t.Fatal(err)
	}
	elapsed := func(svc wololov1.JobServiceServer, name string) float64 {
		t.Helper()
		r, err := svc.GetJob(ctx, &wololov1.GetJobRequest{JobId: name})
		if err != nil {
			t.Fatal(err)
		}
		return r.Job.ElapsedSeconds
	}
	// What top and the web page show (the cluster view's job summary).
	summarized := func(svc wololov1.JobServiceServer, name string) float64 {
		t.Helper()
		j, err := svc.(jobService).g.jobs.lookup("", name)
		if err != nil {
			t.Fatal(err)
		}
		return j.summary().ElapsedSeconds
	}
	live := map[string]float64{"done": elapsed(svc, "done"), "failed": elapsed(svc, "failed")}
	for name, want := range live {
		if got := summarized(svc, name); got != want {
			t.Fatalf("%s job: the cluster view says %.3f s, GetJob %.3f s", name, got, want)
		}
	}
	testkit.NextMillisecond() // the gateway comes back later than the jobs ended
	restarted := testGateway(t, store, time.Hour, make(chan string, 4))
	for name, want := range live {
		if want <= 0 {
			t.Fatalf("%s: elapsed %.3f s live; the test needs one of 1 ms at least", name, want)
		}
		if got := elapsed(restarted, name); got != want {
			t.Errorf("%s job: elapsed %.3f s after a restart, %.3f s before", name, got, want)
		}
		if got := summarized(restarted, name); got != want {
			t.Errorf("%s job: the cluster view says %.3f s after a restart, %.3f s before", name, got, want)
		}
	}
}

// TestFailJobOnlyFromTheJobsInstances: a FailJob whose reporter runs no
// job of the topology (an instance certificate outside it, a master) is
// refused with PermissionDenied and changes nothing: the job runs on, the
// store holds no failure, and no rebuild is made of a "lost" report; nor
// of a report that names as lost an instance that is not one. An
// instance of the topology fails the job, and the reason its client sees
// (GetJob, ListJobs, an upload's refusal, after a restart too) has no
// control characters left: no terminal escape, no carriage return, no
// line break.
func TestFailJobOnlyFromTheJobsInstances(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGateway(t, store, time.Hour, make(chan string, 4))
	g := svc.(jobService).g
	ctx := context.Background()
	if _, err := svc.CreateJob(ctx, createRequest("j")); err != nil {
		t.Fatal(err)
	}
	id := internalID(t, g, "j")
	// The gateway's StageService, as a process serves it (claims taken
	// as made: the reporter's certificate is checked before the gateway
	// is asked, see transport.Server.RequireIdentity).
	server := transport.NewServer("gateway-0", 1, nil, nil)
	server.OnFailJob(g.FailJob)
	const forged = "\x1b[31mlost: re-submit at https://evil.example/\x1b[0m\r\nsecond line\x07"
	const cleaned = " [31mlost: re-submit at https://evil.example/ [0m  second line "
	for _, reporter := range []string{"evil-9", "master-1", "shard-2", "gateway-1"} {
		for _, lost := range []bool{false, true} {
			_, err := server.FailJob(ctx, &wololov1.FailJobRequest{JobId: id, Reporter: reporter, Reason: forged, StateLost: lost})
			if status.Code(err) != codes.PermissionDenied {
				t.Fatalf("a failure reported by %s (state lost %v): %v; want PermissionDenied", reporter, lost, err)
			}
		}
	}
	r, err := svc.GetJob(ctx, &wololov1.GetJobRequest{JobId: "j"})
	if err != nil || r.Job.State != wololov1.JobState_JOB_STATE_UPLOADING || r.Job.Message != "" || len(r.Job.Rebuilds) != 0 || internalID(t, g, "j") != id {
		t.Fatalf("after refused reports the job is %+v, %v; want it uploading, unchanged", r.GetJob(), err)
	}
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if rec := img.Jobs[id].Records[recordFailed]; rec != nil {
		t.Fatalf("the store holds a failure after refused reports: %q", rec)
	}

	// An instance of the topology that names as lost one that is not.
	_, err = server.FailJob(ctx, &wololov1.FailJobRequest{JobId: id, Reporter: "shard-1", Reason: forged, StateLost: true, Lost: "evil-9"})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a failure naming evil-9 lost: %v; want InvalidArgument", err)
	}
	if img, err = store.Load(); err != nil || img.Jobs[id].Records[recordFailed] != nil || internalID(t, g, "j") != id {
		t.Fatalf("after a report naming evil-9 lost, the job was failed or run again (%v)", err)
	}

	if _, err := server.FailJob(ctx, &wololov1.FailJobRequest{JobId: id, Reporter: "shard-1", Reason: forged}); err != nil {
		t.Fatalf("a failure reported by shard-1: %v", err)
	}
	check := func(when string, svc wololov1.JobServiceServer) {
		t.Helper()
		r, err := svc.GetJob(ctx, &wololov1.GetJobRequest{JobId: "j"})
		if err != nil || r.Job.State != wololov1.JobState_JOB_STATE_FAILED || r.Job.Message != cleaned {
			t.Fatalf("%s: GetJob says %+v, %v; want failed with %q", when, r.GetJob(), err, cleaned)
		}
		l, err := svc.ListJobs(ctx, &wololov1.ListJobsRequest{})
		if err != nil || len(l.Jobs) != 1 || l.Jobs[0].Message != cleaned {
			t.Fatalf("%s: ListJobs says %v, %v; want the cleaned reason", when, l.GetJobs(), err)
		}
		_, err = uploadMatches(svc, "j", []string{"x"}, 0)
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), cleaned) {
			t.Fatalf("%s: upload to the failed job: %v; want FailedPrecondition with the cleaned reason", when, err)
		}
	}
	check("live", svc)
	check("after a restart", testGateway(t, store, time.Hour, make(chan string, 4)))

	// A store written before reasons were cleaned: what it holds is
	// cleaned when shown.
	if _, err := svc.CreateJob(ctx, createRequest("old")); err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(&transport.Commit{Job: internalID(t, g, "old"), Records: map[string][]byte{recordFailed: []byte(forged), recordFailedAt: failedRecord(time.Now())}}); err != nil {
		t.Fatal(err)
	}
	r, err = testGateway(t, store, time.Hour, make(chan string, 4)).GetJob(ctx, &wololov1.GetJobRequest{JobId: "old"})
	if err != nil || r.Job.Message != cleaned {
		t.Fatalf("a raw reason in the store: GetJob says %+v, %v; want %q", r.GetJob(), err, cleaned)
	}
}
