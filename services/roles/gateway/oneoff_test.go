package gateway

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/transport"
)

// The files of TestOneOffQueryOfRetainedEpochs: epoch 1's players with
// a column more than the job's queries read, epoch 2's in another column
// order and without it; a matches file of its header alone.
var (
	nPlayers = csvFile{[]string{"match", "rating", "civ", "winner", "note"}, "tok0000,1200,Aztecs,True,a\ntok0001,1000,Aztecs,False,b\n"}
	rPlayers = csvFile{[]string{"winner", "civ", "match", "rating"}, "True,Franks,tok0002,1200\nFalse,Aztecs,tok0003,1000\n"}
	hMatches = csvFile{schema.RequiredColumns[schema.Matches], ""}
)

// queryStream is the server side of a QueryJob call.
type queryStream struct {
	grpc.ServerStream
	ctx    context.Context
	got    strings.Builder
	epochs int64
}

func (s *queryStream) Context() context.Context { return s.ctx }
func (s *queryStream) Send(r *wololov1.QueryJobResponse) error {
	s.got.Write(r.Data)
	s.epochs = r.Epochs
	return nil
}

func queryJob(svc wololov1.JobServiceServer, id, sql string) (string, int64, error) {
	s := &queryStream{ctx: context.Background()}
	err := svc.QueryJob(&wololov1.QueryJobRequest{JobId: id, Sql: sql}, s)
	return s.got.String(), s.epochs, err
}

// queryOf is the one-off query's job g holds, nil while there is none.
func queryOf(g *Gateway) *job {
	g.jobs.mu.Lock()
	defer g.jobs.mu.Unlock()
	for _, j := range g.jobs.byID {
		if strings.HasPrefix(j.name, "query.") {
			return j
		}
	}
	return nil
}

// TestOneOffQueryOfRetainedEpochs: a standing job's gateway retains each
// epoch's files and headers; a one-off query of it is refused, before
// anything runs, for an unknown job, a batch job, SQL the engine refuses
// (line:column), a column an epoch lacks, and a job with no version yet.
// Otherwise it runs as an internal batch job over every epoch's file,
// each read with its own header, each table's channels ended once, after
// its last epoch's rows; its answer is that job's result, and the job is
// dropped everywhere once answered.
func TestOneOffQueryOfRetainedEpochs(t *testing.T) {
	store, cfg := transport.NewMemStore(), retainingConfig(t)
	inputs := cfg.Inputs
	dropped := make(chan string, 8)
	g := newTestGateway(t, store, cfg, dropped)
	svc := g.Service()
	ctx := context.Background()

	_, _, err := queryJob(svc, "nope", "SELECT count(*) AS n FROM matches")
	wantCode(t, "an unknown job", err, codes.NotFound, `no job "nope"`)
	if _, err := svc.CreateJob(ctx, createRequest("batch")); err != nil {
		t.Fatal(err)
	}
	_, _, err = queryJob(svc, "batch", "SELECT count(*) AS n FROM matches")
	wantCode(t, "a batch job", err, codes.FailedPrecondition, "is a batch job")

	req := &wololov1.CreateJobRequest{JobId: "s", Matches: tMatches.header(), Players: nPlayers.header(), Standing: true}
	if _, err := svc.CreateJob(ctx, req); err != nil {
		t.Fatal(err)
	}
	_, _, err = queryJob(svc, "s", "SELECT count(*) AS n FROM match_players")
	wantCode(t, "no version yet", err, codes.FailedPrecondition, "no version yet")
	_, _, err = queryJob(svc, "s", "SELECT count(* AS n FROM matches")
	wantCode(t, "SQL the engine refuses", err, codes.InvalidArgument, "1:")
	uploadEpoch(t, svc, "s", 1, tMatches, nPlayers)
	publish(t, g, store, "s", versionRecords(1, q1to4...))
	if _, err := svc.AppendJob(ctx, &wololov1.AppendJobRequest{JobId: "s", Matches: sMatches.header(), Players: rPlayers.header()}); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 2, sMatches, rPlayers)
	publish(t, g, store, "s", versionRecords(2, q1to4...))
	// Epoch 3: a matches file of its header alone (no copy to read).
	if _, err := svc.AppendJob(ctx, &wololov1.AppendJobRequest{JobId: "s", Matches: hMatches.header(), Players: oPlayers.header()}); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 3, hMatches, oPlayers)
	publish(t, g, store, "s", versionRecords(3, q1to4...))

	// Every epoch's files are retained, and their headers beside them.
	id := internalID(t, g, "s")
	for name, size := range map[string]int64{"0": tMatches.size(), "1": nPlayers.size(), "2.0": sMatches.size(), "2.1": rPlayers.size()} {
		if got := inputs.Size(id, name); got != size {
			t.Errorf("retained copy %s: %d bytes, want %d", name, got, size)
		}
	}
	if h, err := g.jobs.retainedHeaders(g.jobs.byID[id], 2); err != nil || !slices.Equal(h[schema.Players].Columns, rPlayers.cols) {
		t.Fatalf("epoch 2's retained headers: %v, %v", h, err)
	}

	_, _, err = queryJob(svc, "s", "SELECT max(note) AS n FROM match_players")
	wantCode(t, "a column epoch 2 lacks", err, codes.InvalidArgument, `epoch 2's match_players.csv has no column "note"`)
	if q := queryOf(g); q != nil {
		t.Fatalf("a refused query made job %s", q.id)
	}

	type answer struct {
		csv    string
		epochs int64
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		csv, epochs, err := queryJob(svc, "s", "SELECT civ, count(*) AS n FROM match_players GROUP BY civ ORDER BY civ")
		answered <- answer{csv, epochs, err}
	}()
	var q *job
	testkit.WaitFor(t, "the one-off query's job", 10*time.Second, func() bool { q = queryOf(g); return q != nil })
	testkit.WaitFor(t, "its input replayed", 10*time.Second, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.state == wololov1.JobState_JOB_STATE_RUNNING
	})
	// One input per epoch's file, each read by its own header; the
	// first of each table flushed, not ended.
	var more []bool
	var civ []int
	for _, fs := range q.files {
		more = append(more, fs.more)
		civ = append(civ, slices.Index(fs.names, "civ"))
	}
	if !slices.Equal(more, []bool{true, true, true, true, false, false}) || !slices.Equal(civ, []int{-1, 2, -1, 1, -1, 2}) || q.files[3].report.Rows != 2 {
		t.Fatalf("the query's inputs: more %v, civ at %v, epoch 2's players %+v", more, civ, q.files[3].report)
	}
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	for ch, entries := range img.Jobs[q.id].Outbox {
		eofs := 0
		for _, e := range entries {
			if e.EOF {
				eofs++
			}
		}
		if eofs != 1 || !entries[len(entries)-1].EOF {
			t.Errorf("channel %v: %d EOFs, the last entry EOF: %v; want one, last", ch, eofs, entries[len(entries)-1].EOF)
		}
	}
	if len(img.Jobs[q.id].Outbox) == 0 {
		t.Fatal("the query's job sent nothing")
	}

	g.Finished(q.id, map[string][]byte{schema.ResultRecord("oneoff.csv"): []byte("civ,n\nAztecs,3\nFranks,1\n")})
	got := <-answered
	if got.err != nil || got.csv != "civ,n\nAztecs,3\nFranks,1\n" || got.epochs != 3 {
		t.Fatalf("the one-off answer: %q over %d epochs, %v", got.csv, got.epochs, got.err)
	}
	select {
	case d := <-dropped:
		if d != q.id {
			t.Fatalf("dropped %s everywhere, want the query's job %s", d, q.id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the query's job was not dropped everywhere")
	}
	if queryOf(g) != nil {
		t.Fatal("the answered query's job is still held")
	}
	if img, err = store.Load(); err != nil || img.Jobs[q.id] != nil {
		t.Fatalf("the answered query's job is still in the store (%v)", err)
	}
}

// TestOneOffQueryJobDroppedOnRestart: a gateway that restarts while a
// one-off query runs drops its job (the call is gone; its client asks
// again).
func TestOneOffQueryJobDroppedOnRestart(t *testing.T) {
	store := transport.NewMemStore()
	rec := &wololov1.JobRecord{Name: "query.x", QueryOf: "standing1",
		Files: []*wololov1.FileRecord{{Columns: tMatches.cols, Size: 100, DataOffset: 10}, {Columns: tPlayers.cols, Size: 100, DataOffset: 10}}}
	b, err := proto.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(&transport.Commit{Job: "queryjob01", Records: map[string][]byte{recordMeta: b}}); err != nil {
		t.Fatal(err)
	}
	dropped := make(chan string, 1)
	g := newTestGateway(t, store, Config{Retention: time.Hour}, dropped)
	if _, err := g.jobs.get("queryjob01"); err == nil {
		t.Fatal("a restarted gateway holds a one-off query's job")
	}
	select {
	case id := <-dropped:
		if id != "queryjob01" {
			t.Fatalf("dropped %s everywhere, want queryjob01", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the one-off query's job was not dropped everywhere")
	}
}
