package gateway

import (
	"context"
	"io"
	"maps"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/transport"
)

// scriptedCutter is a Cutter whose Due answers come from a script, one
// per step of the appends' uploads (then false): the test says which
// step of an upload cuts, with no clock.
type scriptedCutter struct {
	mu     sync.Mutex
	script []bool
	made   []time.Duration // the every of each append's cutter
}

func (c *scriptedCutter) set(due ...bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.script = due
}

func (c *scriptedCutter) make(every time.Duration) Cutter {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.made = append(c.made, every)
	return c
}

func (c *scriptedCutter) Due() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.script) == 0 {
		return false
	}
	due := c.script[0]
	c.script = c.script[1:]
	return due
}

func (c *scriptedCutter) Cut() {}

// steppedUpload is an upload stream whose frames come one step at a
// time: the i-th frame only once the gateway acknowledged i times (its
// start, then each step), so that every data frame is one step.
type steppedUpload struct {
	grpc.ServerStream
	ctx    context.Context
	frames []*wololov1.UploadRequest
	mu     sync.Mutex
	next   int
	sent   []*wololov1.UploadResponse
	acked  chan struct{} // a token per Send
}

func newSteppedUpload(ctx context.Context, start *wololov1.UploadStart, chunks []string, finish int64) *steppedUpload {
	s := &steppedUpload{ctx: ctx, frames: []*wololov1.UploadRequest{{Frame: &wololov1.UploadRequest_Start{Start: start}}}, acked: make(chan struct{}, 64)}
	for _, c := range chunks {
		s.frames = append(s.frames, &wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: []byte(c)}})
	}
	if finish > 0 {
		s.frames = append(s.frames, &wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: finish}}})
	}
	return s
}

func (s *steppedUpload) Context() context.Context { return s.ctx }

func (s *steppedUpload) Recv() (*wololov1.UploadRequest, error) {
	s.mu.Lock()
	i := s.next
	s.next++
	s.mu.Unlock()
	if i >= len(s.frames) {
		return nil, io.EOF // the client pauses: its stream ends
	}
	if i > 0 {
		select { // the step before is acknowledged
		case <-s.acked:
		case <-s.ctx.Done():
			return nil, s.ctx.Err()
		}
	}
	return s.frames[i], nil
}

func (s *steppedUpload) Send(r *wololov1.UploadResponse) error {
	s.mu.Lock()
	s.sent = append(s.sent, r)
	s.mu.Unlock()
	s.acked <- struct{}{}
	return nil
}

// uploadSteps uploads an input of job id in chunks, one step each, from
// its current offset; finish (the file's size) ends it, 0 pauses after
// the chunks.
func uploadSteps(t *testing.T, svc wololov1.JobServiceServer, id string, start *wololov1.UploadStart, chunks []string, finish int64) {
	t.Helper()
	start.JobId = id
	if err := svc.Upload(newSteppedUpload(t.Context(), start, chunks, finish)); err != nil {
		t.Fatalf("upload of %v %s, epoch %d: %v", start.File, start.Table, start.Epoch, err)
	}
}

// epochEnds reads the job's EpochEnd records from the store, end/1 on.
func epochEnds(t *testing.T, g *Gateway, store transport.Store, name string) []*wololov1.EpochEnd {
	t.Helper()
	j, err := g.jobs.lookup("", name)
	if err != nil {
		t.Fatal(err)
	}
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	records := img.Jobs[j.id].Records
	var out []*wololov1.EpochEnd
	for e := int64(1); records[epochEndKey(e)] != nil; e++ {
		var rec wololov1.EpochEnd
		if err := proto.Unmarshal(records[epochEndKey(e)], &rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, &rec)
	}
	for key := range records {
		if epoch, ok := endKeyEpoch(key); ok && epoch > int64(len(out)) {
			t.Errorf("record %s past the last contiguous end (%d)", key, len(out))
		}
	}
	return out
}

// endKeyEpoch reads an end/E key.
func endKeyEpoch(key string) (int64, bool) {
	for e := int64(1); e < 100; e++ {
		if key == epochEndKey(e) {
			return e, true
		}
	}
	return 0, false
}

// wantEnds checks the job's epoch ends: each one's append, whether it
// was cut, and its rows of matches and match_players.
func wantEnds(t *testing.T, what string, got []*wololov1.EpochEnd, want ...*wololov1.EpochEnd) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d epochs ended, want %d: %v", what, len(got), len(want), got)
	}
	for i := range want {
		if got[i].Append != want[i].Append || got[i].Cut != want[i].Cut || !maps.Equal(got[i].Rows, want[i].Rows) {
			t.Errorf("%s: end of epoch %d = append %d cut %v rows %v; want append %d cut %v rows %v", what, i+1,
				got[i].Append, got[i].Cut, got[i].Rows, want[i].Append, want[i].Cut, want[i].Rows)
		}
	}
}

func ended(append int64, cut bool, matches, players int64) *wololov1.EpochEnd {
	return &wololov1.EpochEnd{Append: append, Cut: cut, Rows: map[string]int64{sqljob.FileTable(schema.Matches): matches, sqljob.FileTable(schema.Players): players}}
}

// TestEpochEveryCutsWhileUploading: with --epoch-every a standing job's
// upload ends an epoch in the step where one is due (every table's
// Source's marker, and its EpochEnd record with the rows so far), not
// one past another, and none with no row since the last; the append's
// end ends one more, unless nothing came since its last cut; the
// appends' last epochs (Job.append_epochs) and the versions' rows follow;
// a gateway restarted mid-upload goes on after the cuts committed,
// cutting none twice and losing none.
func TestEpochEveryCutsWhileUploading(t *testing.T) {
	store := transport.NewMemStore()
	fake := &fakeEpochs{}
	cutter := &scriptedCutter{}
	cfg := Config{Retention: time.Hour, Epochs: fake.runtime(), EpochCutter: cutter.make}
	g := newTestGateway(t, store, cfg, make(chan string, 8))
	svc := g.Service()
	ctx := context.Background()
	matches := csvFile{schema.RequiredColumns[schema.Matches], matchRows(0, 30)}
	req := &wololov1.CreateJobRequest{JobId: "s", Matches: matches.header(), Players: tPlayers.header(), Standing: true, EpochEveryMs: 1000}
	if _, err := svc.CreateJob(ctx, req); err != nil {
		t.Fatal(err)
	}
	// Matches in steps: a first one due with no row cuts nothing, the
	// next not due, the third and fourth cut (after 20 rows, after 30),
	// a fifth due finds no row since and cuts nothing.
	cutter.set(true, false, true, true, true)
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 1},
		[]string{"", matchRows(0, 10), matchRows(10, 20), matchRows(20, 30), ""}, matches.size())
	if n := fake.endCalls(); n != 4 {
		t.Fatalf("EndEpoch called %d times after two cuts; want one per table and cut (4)", n)
	}
	if j := getJob(t, svc, "s"); j.EpochsCommitted != 2 || j.Epochs != 3 || len(j.AppendEpochs) != 0 {
		t.Fatalf("after the cuts, append 1 open: %+v", j)
	}
	// Players: its end ends append 1, and epoch 3.
	cutter.set()
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_PLAYERS, Epoch: 1}, []string{tPlayers.body}, tPlayers.size())
	wantEnds(t, "append 1", epochEnds(t, g, store, "s"), ended(1, true, 20, 0), ended(1, true, 30, 0), ended(1, false, 30, 3))
	if j := getJob(t, svc, "s"); j.EpochsCommitted != 3 || j.Epochs != 3 || !equalInts(j.AppendEpochs, 3) {
		t.Fatalf("after append 1: %+v", j)
	}

	// Append 2, its own --epoch-every: its matches cut at their end,
	// and its players (none) bring no row: its end ends no epoch.
	a := appendRequest("s", csvFile{tPlayers.cols, ""})
	a.EpochEveryMs = 500
	if _, err := svc.AppendJob(ctx, a); err != nil {
		t.Fatal(err)
	}
	cutter.set(true)
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 2}, []string{sMatches.body}, sMatches.size())
	calls := fake.endCalls()
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_PLAYERS, Epoch: 2}, []string{""}, int64(len(tPlayers.head())))
	if n := fake.endCalls(); n != calls {
		t.Errorf("the end of an append with no row since its cut called EndEpoch %d more times", n-calls)
	}
	wantEnds(t, "append 2", epochEnds(t, g, store, "s"), ended(1, true, 20, 0), ended(1, true, 30, 0), ended(1, false, 30, 3), ended(2, true, 33, 3))
	if j := getJob(t, svc, "s"); j.EpochsCommitted != 4 || !equalInts(j.AppendEpochs, 3, 4) {
		t.Fatalf("after append 2: %+v", j)
	}
	if every := cutter.made; len(every) != 2 || every[0] != time.Second || every[1] != 500*time.Millisecond {
		t.Errorf("cutters made with %v; want one an append: 1s for append 1, 500ms for append 2", every)
	}

	// Append 3: a cut, then the gateway restarts mid-upload; the
	// restarted one resumes after the cut and cuts the next epoch once.
	more := csvFile{schema.RequiredColumns[schema.Matches], matchRows(40, 50)}
	a = &wololov1.AppendJobRequest{JobId: "s", Matches: more.header(), Players: sPlayers.header()}
	if _, err := svc.AppendJob(ctx, a); err != nil {
		t.Fatal(err)
	}
	cutter.set(true)
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 3}, []string{matchRows(40, 45)}, 0)
	g = newTestGateway(t, store, cfg, make(chan string, 8))
	svc = g.Service()
	if j := getJob(t, svc, "s"); j.EpochsCommitted != 5 || !equalInts(j.AppendEpochs, 3, 4) {
		t.Fatalf("restarted mid-append: %+v", j)
	}
	cutter.set(true)
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 3}, []string{matchRows(45, 50)}, more.size())
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_PLAYERS, Epoch: 3}, []string{sPlayers.body}, sPlayers.size())
	wantEnds(t, "append 3", epochEnds(t, g, store, "s"), ended(1, true, 20, 0), ended(1, true, 30, 0), ended(1, false, 30, 3), ended(2, true, 33, 3),
		ended(3, true, 38, 3), ended(3, true, 43, 3), ended(3, false, 43, 5))
	if j := getJob(t, svc, "s"); j.EpochsCommitted != 7 || !equalInts(j.AppendEpochs, 3, 4, 7) {
		t.Fatalf("after append 3: %+v", j)
	}
	// Version 6's rows, as GetResults says them, once published.
	publishAll(t, g, store, "s", 7)
	s := &rowsStream{resultsStream: &resultsStream{got: map[string]string{}}}
	if err := svc.GetResults(&wololov1.GetResultsRequest{JobId: "s", Epoch: 6}, s); err != nil {
		t.Fatal(err)
	}
	if r := s.rows; r[sqljob.FileTable(schema.Matches)] != 43 || r[sqljob.FileTable(schema.Players)] != 3 {
		t.Errorf("version 6 is over %v rows; want 43 matches, 3 players", r)
	}
	if r, err := svc.CloseJob(ctx, &wololov1.CloseJobRequest{JobId: "s"}); err != nil || r.Epochs != 7 {
		t.Fatalf("close: %+v, %v; want 7 epochs", r, err)
	}
}

// TestEpochEveryWaitsForTheOtherUploads: no epoch is cut while another
// file of the job uploads (its Source would not see the cut); the next
// step due after it ended cuts.
func TestEpochEveryWaitsForTheOtherUploads(t *testing.T) {
	store := transport.NewMemStore()
	fake := &fakeEpochs{}
	cutter := &scriptedCutter{}
	g := newTestGateway(t, store, Config{Retention: time.Hour, Epochs: fake.runtime(), EpochCutter: cutter.make}, make(chan string, 8))
	svc := g.Service()
	matches := csvFile{schema.RequiredColumns[schema.Matches], matchRows(0, 20)}
	req := &wololov1.CreateJobRequest{JobId: "s", Matches: matches.header(), Players: tPlayers.header(), Standing: true, EpochEveryMs: 1000}
	if _, err := svc.CreateJob(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	j, _ := g.jobs.lookup("", "s")
	j.mu.Lock()
	j.files[schema.Players].uploading = true // another upload holds its slot
	j.mu.Unlock()
	cutter.set(true)
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 1}, []string{matchRows(0, 10)}, 0)
	if ends := epochEnds(t, g, store, "s"); len(ends) != 0 || fake.endCalls() != 0 {
		t.Fatalf("cut while another file uploaded: %v", ends)
	}
	j.mu.Lock()
	j.files[schema.Players].uploading = false
	j.mu.Unlock()
	cutter.set(true)
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 1}, []string{matchRows(10, 20)}, 0)
	wantEnds(t, "once alone", epochEnds(t, g, store, "s"), ended(1, true, 20, 0))
}

func equalInts(got []int64, want ...int64) bool {
	return len(got) == len(want) && (len(want) == 0 || maps.Equal(index(got), index(want)))
}

func index(xs []int64) map[int]int64 {
	out := map[int]int64{}
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// publishAll publishes versions 1..n of every query.
func publishAll(t *testing.T, g *Gateway, store transport.Store, name string, n int64) {
	t.Helper()
	for k := int64(1); k <= n; k++ {
		publish(t, g, store, name, versionRecords(k, q1to4...))
	}
}

// rowsStream is a results stream that also keeps the rows sent.
type rowsStream struct {
	*resultsStream
	rows map[string]int64
}

func (s *rowsStream) Send(r *wololov1.GetResultsResponse) error {
	s.rows = r.Rows
	return s.resultsStream.Send(r)
}
