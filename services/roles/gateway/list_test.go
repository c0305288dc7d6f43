package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/wire/rpc"
	"github.com/wololo/wololo/transport"
)

// TestListJobsListsOnlyTheCallersOwn: ListJobs gives a client its own jobs,
// oldest first, with their state and progress, and never another client's
// (not even one of the same name); a deleted job leaves the list; a
// restarted gateway lists the same.
func TestListJobsListsOnlyTheCallersOwn(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGateway(t, store, time.Hour, make(chan string, 16))
	rows := matchRows(0, 3)
	big := createRequest("nightly")
	big.Matches.Size = big.Matches.DataOffset + int64(len(rows)) + 100 // not complete after this upload
	for _, c := range []struct {
		client string
		req    *wololov1.CreateJobRequest
	}{{"alice", big}, {"bob", createRequest("nightly")}, {"alice", createRequest("weekly")}, {"bob", createRequest("bobs")}} {
		if _, err := svc.CreateJob(as(c.client), c.req); err != nil {
			t.Fatal(err)
		}
		testkit.NextMillisecond() // distinct creation times, in the store's milliseconds: the order is theirs
	}
	if _, err := uploadMatchesAs(svc, "alice", "nightly", rows); err != nil {
		t.Fatal(err)
	}
	list := func(client string) []*wololov1.JobSummary {
		t.Helper()
		r, err := svc.ListJobs(as(client), &wololov1.ListJobsRequest{})
		if err != nil {
			t.Fatalf("%s lists: %v", client, err)
		}
		return r.Jobs
	}
	names := func(js []*wololov1.JobSummary) []string {
		var out []string
		for _, j := range js {
			out = append(out, j.Name)
		}
		return out
	}
	check := func(when string) {
		t.Helper()
		alice, bob := list("alice"), list("bob")
		if got := names(alice); len(got) != 2 || got[0] != "nightly" || got[1] != "weekly" {
			t.Fatalf("%s: alice lists %v, want [nightly weekly]", when, got)
		}
		if got := names(bob); len(got) != 2 || got[0] != "nightly" || got[1] != "bobs" {
			t.Fatalf("%s: bob lists %v, want [nightly bobs]", when, got)
		}
		if alice[0].Id == bob[0].Id || alice[0].Id == "" {
			t.Errorf("%s: alice's and bob's nightly have ids %q and %q", when, alice[0].Id, bob[0].Id)
		}
		for _, stranger := range []string{"carol", ""} { // another client, and the anonymous one
			if got := list(stranger); len(got) != 0 {
				t.Errorf("%s: %q lists %v, want none", when, stranger, names(got))
			}
		}
		n := alice[0]
		if n.State != wololov1.JobState_JOB_STATE_UPLOADING || n.BytesTotal != big.Matches.Size+big.Players.Size ||
			n.BytesUploaded != big.Matches.DataOffset+int64(len(rows))+big.Players.DataOffset || n.Created.AsTime().IsZero() || n.ElapsedSeconds <= 0 {
			t.Errorf("%s: alice's nightly: %v", when, n)
		}
		r, err := svc.GetJob(as("alice"), &wololov1.GetJobRequest{JobId: "nightly"})
		if err != nil || r.Job.Matches.Offset != n.BytesUploaded-big.Players.DataOffset {
			t.Errorf("%s: GetJob says %v (%v); the list %d bytes in", when, r, err, n.BytesUploaded)
		}
	}
	check("first gateway")
	svc = testGateway(t, store, time.Hour, make(chan string, 16))
	check("restarted gateway")

	if _, err := svc.DeleteJob(as("alice"), &wololov1.DeleteJobRequest{JobId: "weekly"}); err != nil {
		t.Fatal(err)
	}
	if got := names(list("alice")); len(got) != 1 || got[0] != "nightly" {
		t.Errorf("after deleting weekly alice lists %v", got)
	}
	if got := names(list("bob")); len(got) != 2 {
		t.Errorf("after alice deleted hers bob lists %v", got)
	}
}

// TestListingIsNotActivity: a job only listed is dropped after the
// retention all the same; listing must not keep a client's jobs forever.
func TestListingIsNotActivity(t *testing.T) {
	dropped := make(chan string, 1)
	svc := testGateway(t, transport.NewMemStore(), 300*time.Millisecond, dropped)
	if _, err := svc.CreateJob(as("alice"), createRequest("idle")); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case <-dropped:
			if r, err := svc.ListJobs(as("alice"), &wololov1.ListJobsRequest{}); err != nil || len(r.Jobs) != 0 {
				t.Fatalf("after the drop alice lists %v (%v)", r, err)
			}
			return
		case <-deadline:
			t.Fatal("a job listed every 50 ms was never dropped for its retention")
		case <-time.After(50 * time.Millisecond):
			if _, err := svc.ListJobs(as("alice"), &wololov1.ListJobsRequest{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// watchRecorder is a WatchJob stream of a client that keeps what it hears.
type watchRecorder struct {
	grpc.ServerStream
	ctx  context.Context
	sent chan *wololov1.Job
}

func (s watchRecorder) Context() context.Context { return s.ctx }
func (s watchRecorder) Send(r *wololov1.WatchJobResponse) error {
	s.sent <- r.Job
	return nil
}

// TestDeletedJobEndsItsWatchers: a job deleted while a client watches it
// (`wololo client cancel` of a job another terminal follows) ends the
// watch with the job failed and why, then the deletion's error (not a
// loss: rpc.IsJobDeleted); the watch used to go on for ever, sending the
// state of a job no longer there. Asked after, the job is still said
// deleted, not missing.
func TestDeletedJobEndsItsWatchers(t *testing.T) {
	svc := testGateway(t, transport.NewMemStore(), time.Hour, make(chan string, 16))
	if _, err := svc.CreateJob(as("alice"), createRequest("followed")); err != nil {
		t.Fatal(err)
	}
	rec := watchRecorder{ctx: as("alice"), sent: make(chan *wololov1.Job, 64)}
	done := make(chan error, 1)
	go func() { done <- svc.WatchJob(&wololov1.WatchJobRequest{JobId: "followed"}, rec) }()
	<-rec.sent // the first state: the watch is on
	if _, err := svc.DeleteJob(as("alice"), &wololov1.DeleteJobRequest{JobId: "followed"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !rpc.IsJobDeleted(err) || !strings.Contains(err.Error(), `job "followed" was cancelled by its client`) {
			t.Fatalf("the watch ended with %v, want the deletion (rpc.IsJobDeleted) saying the job was cancelled by its client", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the watch of a deleted job still runs 5 s after the delete")
	}
	var last *wololov1.Job
	for len(rec.sent) > 0 {
		last = <-rec.sent
	}
	if last == nil || last.State != wololov1.JobState_JOB_STATE_FAILED || last.Message != "cancelled by its client" {
		t.Errorf("the watch's last state: %v, want failed, cancelled by its client", last)
	}
	if _, err := svc.GetJob(as("alice"), &wololov1.GetJobRequest{JobId: "followed"}); !rpc.IsJobDeleted(err) {
		t.Errorf("GetJob of the deleted job: %v, want the deletion (rpc.IsJobDeleted)", err)
	}
	if _, err := svc.CreateJob(as("alice"), createRequest("followed")); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.GetJob(as("alice"), &wololov1.GetJobRequest{JobId: "followed"}); err != nil {
		t.Errorf("GetJob of a new job under the deleted one's name: %v", err)
	}
}
