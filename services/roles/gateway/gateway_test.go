package gateway

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/transport"
)

// testGateway serves a gateway on store, without a network, and returns its
// JobService.
func testGateway(t *testing.T, store transport.Store, retention time.Duration, dropped chan<- string) wololov1.JobServiceServer {
	t.Helper()
	return testGatewayWith(t, store, Config{Retention: retention}, dropped)
}

// clientKey carries a test's client name in a context.
type clientKey struct{}

// as is a context whose calls come from the named client; a context
// without one is the anonymous client's.
func as(name string) context.Context {
	return context.WithValue(context.Background(), clientKey{}, name)
}

// testGatewayWith is testGateway with the given config's limits; its
// Identify reads the client from the context (see as).
func testGatewayWith(t *testing.T, store transport.Store, cfg Config, dropped chan<- string) wololov1.JobServiceServer {
	t.Helper()
	return newTestGateway(t, store, cfg, dropped).Service()
}

// newTestGateway is testGatewayWith's gateway itself.
func newTestGateway(t *testing.T, store transport.Store, cfg Config, dropped chan<- string) *Gateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg.Topology = deploy.Default()
	cfg.Committer = transport.NewCommitter(store, transport.NewOutbox(store), transport.NewInbox(), nil)
	cfg.Identify = func(ctx context.Context) (string, error) {
		name, _ := ctx.Value(clientKey{}).(string)
		return name, nil
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g.SetDropper(func(_ context.Context, job string, _ bool) error {
		dropped <- job
		return nil
	})
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Recover(img); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return g
}

func header(cols []string) *wololov1.FileHeader {
	return &wololov1.FileHeader{Columns: cols, Size: 100, DataOffset: 10}
}

func createRequest(id string) *wololov1.CreateJobRequest {
	return &wololov1.CreateJobRequest{JobId: id, Matches: header(schema.RequiredColumns[schema.Matches]), Players: header(schema.RequiredColumns[schema.Players])}
}

// TestJobSurvivesRestart: a job created on one gateway is known, with its
// description, to a gateway restarted on the same store.
func TestJobSurvivesRestart(t *testing.T) {
	store := transport.NewMemStore()
	g := testGateway(t, store, time.Hour, make(chan string, 1))
	if _, err := g.CreateJob(context.Background(), createRequest("j1")); err != nil {
		t.Fatal(err)
	}
	g2 := testGateway(t, store, time.Hour, make(chan string, 1))
	r, err := g2.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "j1"})
	if err != nil {
		t.Fatalf("restarted gateway: %v", err)
	}
	if r.Job.State != wololov1.JobState_JOB_STATE_UPLOADING || r.Job.Matches.Offset != 10 || r.Job.Players.Size != 100 {
		t.Fatalf("recovered job = %+v", r.Job)
	}
}

// TestAbandonedJobIsDropped: a job without client activity for longer than
// the retention is dropped here and everywhere.
func TestAbandonedJobIsDropped(t *testing.T) {
	store := transport.NewMemStore()
	dropped := make(chan string, 1)
	g := testGateway(t, store, 100*time.Millisecond, dropped)
	if _, err := g.CreateJob(context.Background(), createRequest("idle")); err != nil {
		t.Fatal(err)
	}
	var id string // the job's internal id
	select {
	case id = <-dropped:
	case <-time.After(5 * time.Second):
		t.Fatal("the abandoned job was never dropped")
	}
	if _, err := g.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "idle"}); err == nil {
		t.Fatal("the dropped job is still served")
	}
	// The store holds nothing of it but its tombstone and the memory of
	// its deletion (deleted.go), which says why.
	img, _ := store.Load()
	if len(img.Jobs) != 1 || img.Jobs[DeletionsJob] == nil || len(img.Dropped) != 1 || img.Dropped[0] != id {
		t.Fatalf("store after the drop of %q: jobs %v, dropped %v", id, slices.Collect(maps.Keys(img.Jobs)), img.Dropped)
	}
}

// TestJobsBeyondTheLimitAreRefused: the gateway holds at most MaxJobs jobs;
// one more is ResourceExhausted, naming the limit, and resuming a job it
// holds still works.
func TestJobsBeyondTheLimitAreRefused(t *testing.T) {
	store := transport.NewMemStore()
	committer := transport.NewCommitter(store, transport.NewOutbox(store), transport.NewInbox(), nil)
	g, err := New(Config{Topology: deploy.Default(), Committer: committer, MaxJobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	svc := g.Service()
	if _, err := svc.CreateJob(context.Background(), createRequest("first")); err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateJob(context.Background(), createRequest("second"))
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-jobs") {
		t.Fatalf("a job beyond the limit: %v, want ResourceExhausted naming --max-jobs", err)
	}
	if _, err := svc.CreateJob(context.Background(), createRequest("first")); err != nil {
		t.Fatalf("resuming a held job: %v", err)
	}
}

// TestUploadBeyondTheDeclaredSizeIsRefused: a file may not grow past the
// size its header declared (ResourceExhausted, naming the limit), and a
// header that contradicts itself is refused at creation.
func TestUploadBeyondTheDeclaredSizeIsRefused(t *testing.T) {
	svc := testGateway(t, transport.NewMemStore(), time.Hour, make(chan string, 1))
	bad := createRequest("bad")
	bad.Players.DataOffset = bad.Players.Size + 1
	if _, err := svc.CreateJob(context.Background(), bad); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a header whose data starts past its end: %v, want InvalidArgument", err)
	}
	req := createRequest("j")
	req.Matches.Size = req.Matches.DataOffset + 10
	if _, err := svc.CreateJob(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_, err := uploadMatches(svc, "j", []string{"0123456789", "overflow"}, 0)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "declared") {
		t.Fatalf("an upload past the declared size: %v, want ResourceExhausted naming the declared size", err)
	}
}

// stalledUpload starts an upload and then sends nothing.
type stalledUpload struct {
	fakeUpload
	stall chan struct{}
}

func (s *stalledUpload) Recv() (*wololov1.UploadRequest, error) {
	if len(s.in) > 0 {
		return s.fakeUpload.Recv()
	}
	<-s.stall
	return nil, context.Canceled
}

// TestIdleUploadIsEnded: an upload that sends nothing for UploadIdle is
// ended with DeadlineExceeded and its file is free for the next upload.
func TestIdleUploadIsEnded(t *testing.T) {
	store := transport.NewMemStore()
	committer := transport.NewCommitter(store, transport.NewOutbox(store), transport.NewInbox(), nil)
	g, err := New(Config{Topology: deploy.Default(), Committer: committer, UploadIdle: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	svc := g.Service()
	if _, err := svc.CreateJob(context.Background(), createRequest("j")); err != nil {
		t.Fatal(err)
	}
	start := &wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: "j", File: wololov1.InputFile_INPUT_FILE_MATCHES}}}
	stalled := &stalledUpload{fakeUpload: fakeUpload{ctx: context.Background(), in: []*wololov1.UploadRequest{start}}, stall: make(chan struct{})}
	defer close(stalled.stall)
	began := time.Now()
	if err := svc.Upload(stalled); status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "--upload-idle") {
		t.Fatalf("an idle upload: %v, want DeadlineExceeded naming --upload-idle", err)
	}
	if waited := time.Since(began); waited > 5*time.Second {
		t.Fatalf("the idle upload was ended only after %s", waited)
	}
	if _, err := uploadMatches(svc, "j", []string{"0123"}, 0); err != nil {
		t.Fatalf("the file is still held after the idle upload ended: %v", err)
	}
}

// internalID is the id under which g holds the job the anonymous client
// named name.
func internalID(t *testing.T, g *Gateway, name string) string {
	t.Helper()
	j, err := g.jobs.lookup("", name)
	if err != nil {
		t.Fatal(err)
	}
	return j.id
}

// headerOnlyResults are the sink's result records of a job whose every
// answer is empty: each file its header alone.
func headerOnlyResults() map[string][]byte {
	results := map[string][]byte{}
	for _, f := range schema.ResultFiles(queries.Names) {
		results[schema.ResultRecord(f)] = []byte("header\n")
	}
	return results
}
