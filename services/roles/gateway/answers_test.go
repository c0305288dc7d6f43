package gateway

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// sinkResults are the built-in job's four answers as the sink's final
// commit holds them, each of rows data rows (a header, then rows lines of
// "r,1"), finished at the given Unix millisecond.
func sinkResults(rows int, finishedMs int64) map[string][]byte {
	out := map[string][]byte{"stage/finished": []byte(strconv.FormatInt(finishedMs, 10))}
	for _, f := range schema.ResultFiles(queries.Names) {
		out[schema.ResultRecord(f)] = []byte("a,b\n" + strings.Repeat("r,1\n", rows))
	}
	return out
}

// finishAs commits the sink's final commit of the client's job to the
// store, as the gateway's stage runtime does, then hands it to Finished.
func finishAs(t *testing.T, g *Gateway, store transport.Store, client, name string, records map[string][]byte) string {
	t.Helper()
	j, err := g.jobs.lookup(client, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(&transport.Commit{Job: j.id, Records: records}); err != nil {
		t.Fatal(err)
	}
	g.Finished(j.id, records)
	return j.id
}

// TestAnswersPastTheJobBoundFailTheJob: a job whose answers together pass
// --max-answer-bytes is failed with a reason naming the flag instead of
// being held: it has no results to fetch, the store's copy of its answers
// is replaced by nothing, and a restarted gateway says the same. A job
// within the bound is done.
func TestAnswersPastTheJobBoundFailTheJob(t *testing.T) {
	store := transport.NewMemStore()
	cfg := Config{MaxAnswerBytes: 100, ClientMaxAnswerBytes: 1000}
	svc := testGatewayWith(t, store, cfg, make(chan string, 4))
	g := svc.(jobService).g
	for _, name := range []string{"big", "small"} {
		if _, err := svc.CreateJob(as("alice"), createRequest(name)); err != nil {
			t.Fatal(err)
		}
	}
	big := finishAs(t, g, store, "alice", "big", sinkResults(6, time.Now().UnixMilli())) // 4 x 28 = 112 bytes
	finishAs(t, g, store, "alice", "small", sinkResults(5, time.Now().UnixMilli()))      // 4 x 24 = 96 bytes
	check := func(when string, svc wololov1.JobServiceServer) {
		t.Helper()
		r, err := svc.GetJob(as("alice"), &wololov1.GetJobRequest{JobId: "big"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Job.State != wololov1.JobState_JOB_STATE_FAILED || !strings.Contains(r.Job.Message, "--max-answer-bytes") || !strings.Contains(r.Job.Message, "112 bytes") {
			t.Errorf("%s: a job of 112 bytes of answers, 100 allowed: %v %q; want failed naming --max-answer-bytes and its size", when, r.Job.State, r.Job.Message)
		}
		if len(r.Job.ResultRows) != 0 {
			t.Errorf("%s: the failed job lists result rows %v", when, r.Job.ResultRows)
		}
		if err := svc.GetResults(&wololov1.GetResultsRequest{JobId: "big"}, resultsAs{ctx: as("alice")}); status.Code(err) != codes.FailedPrecondition {
			t.Errorf("%s: GetResults of the failed job: %v; want FailedPrecondition", when, err)
		}
		r, err = svc.GetJob(as("alice"), &wololov1.GetJobRequest{JobId: "small"})
		if err != nil || r.Job.State != wololov1.JobState_JOB_STATE_DONE || r.Job.ResultRows["q1.csv"] != 5 {
			t.Errorf("%s: a job of 96 bytes of answers: %v, %v; want done, 5 rows in q1.csv", when, r.GetJob(), err)
		}
	}
	check("live", svc)
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range schema.ResultFiles(queries.Names) {
		if n := len(img.Jobs[big].Records[schema.ResultRecord(f)]); n != 0 {
			t.Errorf("the store still holds %d bytes of the failed job's %s", n, f)
		}
	}
	check("restarted", testGatewayWith(t, store, cfg, make(chan string, 4)))
}

// TestClientAnswersPastTheirBoundDropTheOldest: a client's finished jobs'
// answers together are held up to --client-max-answer-bytes; a job whose
// answers would pass it drops the client's oldest finished jobs first
// (here, in the store and everywhere else), never the new one, and never
// another client's.
func TestClientAnswersPastTheirBoundDropTheOldest(t *testing.T) {
	store := transport.NewMemStore()
	dropped := make(chan string, 16)
	cfg := Config{MaxAnswerBytes: 100, ClientMaxAnswerBytes: 250, ClientMaxJobs: 8, ClientMaxHeldJobs: 8}
	svc := testGatewayWith(t, store, cfg, dropped)
	g := svc.(jobService).g
	base := time.Now().Add(-time.Hour).UnixMilli()
	finish := func(client, name string, at int64) string {
		t.Helper()
		if _, err := svc.CreateJob(as(client), createRequest(name)); err != nil {
			t.Fatal(err)
		}
		return finishAs(t, g, store, client, name, sinkResults(4, at)) // 4 x 20 = 80 bytes
	}
	bob := finish("bob", "b1", base)
	// Finished out of their creation order: the oldest to finish goes first.
	m1 := finish("mallory", "m1", base+20)
	m2 := finish("mallory", "m2", base+10)
	finish("mallory", "m3", base+30) // 240 bytes held: all fit
	held := func(client string, names ...string) {
		t.Helper()
		for _, name := range names {
			r, err := svc.GetJob(as(client), &wololov1.GetJobRequest{JobId: name})
			if err != nil || r.Job.State != wololov1.JobState_JOB_STATE_DONE {
				t.Errorf("%s's %s: %v, %v; want it done and held", client, name, r.GetJob(), err)
			}
		}
	}
	gone := func(client string, names ...string) {
		t.Helper()
		for _, name := range names {
			if _, err := svc.GetJob(as(client), &wololov1.GetJobRequest{JobId: name}); status.Code(err) != codes.NotFound {
				t.Errorf("%s's %s: %v; want it dropped (NotFound)", client, name, err)
			}
		}
	}
	held("mallory", "m1", "m2", "m3")
	finish("mallory", "m4", base+40) // 320 bytes: m2, the oldest finished, goes
	gone("mallory", "m2")
	held("mallory", "m1", "m3", "m4")
	held("bob", "b1")
	select {
	case id := <-dropped:
		if id != m2 {
			t.Errorf("dropped everywhere: %s; want m2 (%s)", id, m2)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("m2 was not dropped everywhere")
	}
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := img.Jobs[m2]; ok || !slices.Contains(img.Dropped, m2) {
		t.Errorf("the store still holds m2, or holds no tombstone of it (dropped %v)", img.Dropped)
	}
	if _, ok := img.Jobs[m1]; !ok {
		t.Errorf("the store lost m1")
	}
	if _, ok := img.Jobs[bob]; !ok {
		t.Errorf("the store lost bob's job")
	}
}

// TestRowsAreCountedOnceNotOnGetJob: a done job's result rows are counted
// when its results come in, once per file, with neither the job's lock nor
// the job table's held, and once more per file when a restarted gateway
// recovers them; GetJob, WatchJob and GetResults count nothing.
func TestRowsAreCountedOnceNotOnGetJob(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGateway(t, store, time.Hour, make(chan string, 4))
	g := svc.(jobService).g
	var (
		mu       sync.Mutex
		counted  int
		underLck int
		watched  *job
	)
	t.Cleanup(func() { countRows = schema.ResultRows })
	countRows = func(data []byte) int {
		mu.Lock()
		defer mu.Unlock()
		counted++
		if watched != nil {
			if !watched.mu.TryLock() {
				underLck++
			} else {
				watched.mu.Unlock()
			}
			if !g.jobs.mu.TryLock() {
				underLck++
			} else {
				g.jobs.mu.Unlock()
			}
		}
		return schema.ResultRows(data)
	}
	if _, err := svc.CreateJob(context.Background(), createRequest("done")); err != nil {
		t.Fatal(err)
	}
	j, err := g.jobs.lookup("", "done")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	watched = j
	mu.Unlock()
	finishAs(t, g, store, "", "done", sinkResults(3, time.Now().UnixMilli()))
	mu.Lock()
	if counted != len(queries.Names) || underLck != 0 {
		t.Errorf("when the results came in: %d files counted, %d times under a lock; want %d, none", counted, underLck, len(queries.Names))
	}
	watched, counted = nil, 0
	mu.Unlock()
	calls := func(svc wololov1.JobServiceServer) {
		t.Helper()
		for range 10 {
			r, err := svc.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "done"})
			if err != nil || r.Job.ResultRows["q4.csv"] != 3 || len(r.Job.ResultRows) != len(queries.Names) {
				t.Fatalf("GetJob: %v, %v; want 3 rows in each of the 4 files", r.GetJob(), err)
			}
		}
		if err := svc.WatchJob(&wololov1.WatchJobRequest{JobId: "done"}, streamAs{ctx: context.Background()}); err != nil {
			t.Fatal(err)
		}
		if err := svc.GetResults(&wololov1.GetResultsRequest{JobId: "done"}, resultsAs{ctx: context.Background()}); err != nil {
			t.Fatal(err)
		}
	}
	calls(svc)
	mu.Lock()
	if counted != 0 {
		t.Errorf("10 GetJobs, a WatchJob and a GetResults counted rows %d times; want none", counted)
	}
	mu.Unlock()
	restarted := testGateway(t, store, time.Hour, make(chan string, 4))
	mu.Lock()
	if counted != len(queries.Names) {
		t.Errorf("a restarted gateway counted %d files; want each once, %d", counted, len(queries.Names))
	}
	counted = 0
	mu.Unlock()
	calls(restarted)
	mu.Lock()
	defer mu.Unlock()
	if counted != 0 {
		t.Errorf("after a restart, GetJobs counted rows %d times; want none", counted)
	}
}

// TestEvictAnswers: the decision of which finished jobs make room for a
// new job's answers.
func TestEvictAnswers(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	held := []heldAnswers{{"c", 50, at(3)}, {"a", 50, at(1)}, {"b", 50, at(1)}, {"d", 10, at(4)}}
	for _, tc := range []struct {
		fresh, limit int64
		want         []string
	}{
		{fresh: 40, limit: 200, want: nil},           // 200: fits exactly
		{fresh: 41, limit: 200, want: []string{"a"}}, // the oldest; a before b at the same time
		{fresh: 100, limit: 200, want: []string{"a", "b"}},
		{fresh: 200, limit: 200, want: []string{"a", "b", "c", "d"}},
	} {
		if got := evictAnswers(held, tc.fresh, tc.limit); !slices.Equal(got, tc.want) {
			t.Errorf("evictAnswers(%d new, limit %d) = %v; want %v", tc.fresh, tc.limit, got, tc.want)
		}
	}
}

// TestClientAnswerBoundBelowTheJobsIsRefused: a config whose client bound
// is below its job bound names both flags.
func TestClientAnswerBoundBelowTheJobsIsRefused(t *testing.T) {
	store := transport.NewMemStore()
	cfg := Config{Topology: deploy.Default(), Committer: transport.NewCommitter(store, transport.NewOutbox(store), transport.NewInbox(), nil), MaxAnswerBytes: 2 << 30}
	_, err := New(cfg)
	if err == nil || !strings.Contains(err.Error(), "--client-max-answer-bytes") || !strings.Contains(err.Error(), "--max-answer-bytes") {
		t.Errorf("a job bound above the default client bound: %v; want an error naming both flags", err)
	}
}
