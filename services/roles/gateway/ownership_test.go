package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// streamAs and resultsAs are server streams of a client for the streaming
// handlers, which must refuse a stranger before they send anything.
type streamAs struct {
	grpc.ServerStream
	ctx context.Context
}

func (s streamAs) Context() context.Context              { return s.ctx }
func (s streamAs) Send(*wololov1.WatchJobResponse) error { return nil }

type resultsAs struct {
	grpc.ServerStream
	ctx context.Context
}

func (s resultsAs) Context() context.Context                { return s.ctx }
func (s resultsAs) Send(*wololov1.GetResultsResponse) error { return nil }

// TestJobsBelongToTheirClient: a job is its creator's. For any other client
// every call on it is NotFound, with the same message as a job that never
// existed; two clients may use the same name for two jobs; and a restarted
// gateway keeps all of that.
func TestJobsBelongToTheirClient(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGateway(t, store, time.Hour, make(chan string, 16))
	rows := matchRows(0, 3)
	req := createRequest("nightly")
	req.Matches.Size = req.Matches.DataOffset + int64(len(rows)) + 100 // not complete after this upload
	if _, err := svc.CreateJob(as("alice"), req); err != nil {
		t.Fatal(err)
	}
	if _, err := uploadMatchesAs(svc, "alice", "nightly", rows); err != nil {
		t.Fatal(err)
	}
	_, missing := svc.GetJob(as("bob"), &wololov1.GetJobRequest{JobId: "never-created"})
	calls := map[string]func(ctx context.Context) error{
		"GetJob": func(ctx context.Context) error {
			_, err := svc.GetJob(ctx, &wololov1.GetJobRequest{JobId: "nightly"})
			return err
		},
		"WatchJob": func(ctx context.Context) error {
			return svc.WatchJob(&wololov1.WatchJobRequest{JobId: "nightly"}, streamAs{ctx: ctx})
		},
		"GetResults": func(ctx context.Context) error {
			return svc.GetResults(&wololov1.GetResultsRequest{JobId: "nightly"}, resultsAs{ctx: ctx})
		},
		"Upload": func(ctx context.Context) error {
			return svc.Upload(&fakeUpload{ctx: ctx, in: []*wololov1.UploadRequest{{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: "nightly", File: wololov1.InputFile_INPUT_FILE_PLAYERS}}}}})
		},
		"DeleteJob": func(ctx context.Context) error {
			_, err := svc.DeleteJob(ctx, &wololov1.DeleteJobRequest{JobId: "nightly"})
			return err
		},
	}
	// check checks that the strangers see nothing of alice's job: bob, once
	// he deleted a "nightly" of his own, hears of his own deletion, and
	// else the NotFound of a job that does not exist.
	check := func(svcName string, bobDeleted bool) {
		for name, call := range calls {
			for _, stranger := range []string{"bob", ""} { // another client, and the anonymous one
				err := call(as(stranger))
				want := strings.ReplaceAll(missing.Error(), "never-created", "X")
				if stranger == "bob" && bobDeleted {
					want = `rpc error: code = NotFound desc = job "X" was cancelled by its client`
				}
				if status.Code(err) != codes.NotFound || strings.ReplaceAll(err.Error(), "nightly", "X") != want {
					t.Errorf("%s: %s of alice's job by %q: %v; want %s", svcName, name, stranger, err, want)
				}
			}
		}
		r, err := svc.GetJob(as("alice"), &wololov1.GetJobRequest{JobId: "nightly"})
		if err != nil || r.Job.JobId != "nightly" || r.Job.Matches.Rows != 3 {
			t.Fatalf("%s: alice's own job: %v, %v", svcName, r, err)
		}
	}
	check("first gateway", false)

	// Bob's "nightly" is a job of his own, and alice's is untouched.
	if _, err := svc.CreateJob(as("bob"), createRequest("nightly")); err != nil {
		t.Fatal(err)
	}
	if r, err := svc.GetJob(as("bob"), &wololov1.GetJobRequest{JobId: "nightly"}); err != nil || r.Job.Matches.Rows != 0 {
		t.Fatalf("bob's nightly: %v, %v", r, err)
	}
	if _, err := svc.DeleteJob(as("bob"), &wololov1.DeleteJobRequest{JobId: "nightly"}); err != nil {
		t.Fatal(err)
	}
	check("after bob's delete", true)

	svc = testGateway(t, store, time.Hour, make(chan string, 16))
	check("restarted gateway", true)
}

func uploadMatchesAs(svc wololov1.JobServiceServer, client, id, data string) (int64, error) {
	s := &fakeUpload{ctx: as(client), in: []*wololov1.UploadRequest{
		{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: id, File: wololov1.InputFile_INPUT_FILE_MATCHES}}},
		{Frame: &wololov1.UploadRequest_Data{Data: []byte(data)}},
	}}
	err := svc.Upload(s)
	var off int64
	if n := len(s.sent); n > 0 {
		off = s.sent[n-1].Offset
	}
	return off, err
}

// TestQuotasPerClient: each quota refuses the client over it with
// ResourceExhausted naming its flag, resuming a held job still works, and
// another client is not affected.
func TestQuotasPerClient(t *testing.T) {
	svc := testGatewayWith(t, transport.NewMemStore(), Config{ClientMaxJobs: 3, MaxJobBytes: 250, ClientMaxBytes: 450}, make(chan string, 16))
	sized := func(name string, size int64) *wololov1.CreateJobRequest {
		r := createRequest(name)
		r.Matches.Size, r.Players.Size = size/2, size/2
		return r
	}
	mustCreate := func(client string, r *wololov1.CreateJobRequest) {
		t.Helper()
		if _, err := svc.CreateJob(as(client), r); err != nil {
			t.Fatalf("%s creates %s: %v", client, r.JobId, err)
		}
	}
	refused := func(client string, r *wololov1.CreateJobRequest, flag string) {
		t.Helper()
		_, err := svc.CreateJob(as(client), r)
		if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), flag) {
			t.Fatalf("%s creates %s: %v; want ResourceExhausted naming %s", client, r.JobId, err, flag)
		}
	}
	refused("alice", sized("huge", 252), "--max-job-bytes")
	mustCreate("alice", sized("a1", 200))
	mustCreate("alice", sized("a2", 200))
	refused("alice", sized("a3", 60), "--client-max-bytes") // 460 > 450
	mustCreate("alice", sized("a3", 40))                    // 440
	refused("alice", sized("a4", 20), "--client-max-jobs")  // a fourth
	mustCreate("alice", sized("a1", 200))                   // resuming is not a new job
	mustCreate("bob", sized("b1", 250))                     // another client is not affected
	mustCreate("bob", sized("b2", 200))
	if _, err := svc.DeleteJob(as("alice"), &wololov1.DeleteJobRequest{JobId: "a2"}); err != nil {
		t.Fatal(err)
	}
	mustCreate("alice", sized("a4", 200)) // a2's room is free again
}

// TestResumeWithOtherFilesIsRefused: a job resumed with a file of another
// size or fingerprint is FailedPrecondition, saying which file; the same
// files resume it.
func TestResumeWithOtherFilesIsRefused(t *testing.T) {
	svc := testGateway(t, transport.NewMemStore(), time.Hour, make(chan string, 1))
	req := func(size int64, print string) *wololov1.CreateJobRequest {
		r := createRequest("j")
		r.Players.Size, r.Players.Fingerprint = size, []byte(print)
		return r
	}
	if _, err := svc.CreateJob(as("alice"), req(100, "A")); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*wololov1.CreateJobRequest{"other content": req(100, "B"), "another size": req(101, "A")} {
		_, err := svc.CreateJob(as("alice"), r)
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "another match_players.csv") {
			t.Errorf("%s: %v, want FailedPrecondition naming match_players.csv", name, err)
		}
	}
	if _, err := svc.CreateJob(as("alice"), req(100, "A")); err != nil {
		t.Errorf("the same files: %v", err)
	}
}
