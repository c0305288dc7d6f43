package inmem

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/ingest"
	"github.com/wololo/wololo/services/dataflow/operators"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/transport"
)

// rejected is a matches batch whose columns disagree (one token, no
// ladder): every operator that reads matches rejects it.
func rejected() *wololov1.RowBatch {
	return &wololov1.RowBatch{Rows: &wololov1.RowBatch_Matches{Matches: &wololov1.MatchRows{
		Token: &wololov1.TextColumn{Data: []byte("x"), Ends: []uint32{1}},
	}}}
}

// TestRejectedBatchDroppedInBothModes: a batch the operator rejects,
// arriving among a file's rows, is dropped and counted by the stage
// runtime and by the in-memory executor alike (stage.Driver's rule), and
// both give the reference's answers, which the batch has no part in.
func TestRejectedBatchDroppedInBothModes(t *testing.T) {
	dir := t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: 1500, Seed: 7}, dir); err != nil {
		t.Fatal(err)
	}
	matches, players := filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv")
	want, err := reference.EvaluateFiles(matches, players)
	if err != nil {
		t.Fatal(err)
	}
	top, err := deploy.Plan(deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	// The bad batch comes from the gateway on the matches stream to the
	// first instance that reads it.
	st, ok := top.Stream(schema.MatchesStream)
	if !ok {
		t.Fatal("the topology has no matches stream")
	}
	bad := transport.ChannelID{Job: job, Stream: st.Name, Sender: deploy.Instance{Stage: st.From}.Name(), Receiver: deploy.Instance{Stage: st.To}.Name()}

	check := func(mode string, files map[string][]byte, dropped int64) {
		t.Helper()
		if dropped != 1 {
			t.Errorf("%s dropped %d batches, want the rejected one", mode, dropped)
		}
		for name, w := range want.Files() {
			if !bytes.Equal(files[name], w) {
				t.Errorf("%s: %s differs from the reference\n got: %.200q\nwant: %.200q", mode, name, files[name], w)
			}
		}
	}

	res, err := run(context.Background(), Options{Topology: top, Matches: matches, Players: players, BatchRows: 200, Parsers: 2}, func(g *graph) {
		g.tasks[bad.Receiver].inbox <- message{stream: bad.Stream, sender: bad.Sender, rows: rejected()}
	})
	if err != nil {
		t.Fatalf("in memory: %v", err)
	}
	check("in memory", res.Files, res.DroppedBatches)

	files, dropped := runStages(t, top, matches, players, stage.Emitted{Channel: bad, Rows: rejected()})
	check("stage runtime", files, dropped)
}

// runStages runs every instance of a planned topology as a stage.Runtime on
// a MemStore, with no network: each process's Publisher hands what it
// commits to the receiver's Deliver, in order, and acknowledges it back.
// The files are uploaded as the gateway's Ingest parses them, extra
// committed among the matches. It returns the answers the gateway's
// instance finished with, and the batches every runtime dropped.
func runStages(t *testing.T, top deploy.Topology, matches, players string, extra ...stage.Emitted) (map[string][]byte, int64) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runtimes := map[string]*stage.Runtime{}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	newCommitter := func() *transport.Committer {
		store := transport.NewMemStore()
		r := &relay{outbox: transport.NewOutbox(store), runtimes: runtimes, t: t, changed: make(chan struct{}, 1)}
		wg.Go(func() { r.pump(ctx) })
		return transport.NewCommitter(store, r.outbox, transport.NewInbox(), r)
	}
	finished := make(chan map[string][]byte, 1)
	gw := deploy.Instance{Stage: top.Gateway().Name}
	for _, in := range top.Instances() {
		st, _ := top.Stage(in.Stage)
		spec, err := operators.SpecFor(top, st)
		if err != nil {
			t.Fatal(err)
		}
		cfg := stage.Config{Topology: top, Instance: in, Spec: spec, Committer: newCommitter(), BatchRows: 200}
		if in == gw {
			cfg.OnFinish = func(_ string, records map[string][]byte) { finished <- records }
		}
		rt, err := stage.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.IntroduceJob(job, nil); err != nil {
			t.Fatal(err)
		}
		runtimes[in.Name()] = rt
		wg.Go(func() {
			if err := rt.Serve(ctx); err != nil {
				t.Errorf("%s: %v", in.Name(), err)
			}
		})
	}

	upload := newCommitter()
	for f, path := range map[schema.File]string{schema.Matches: matches, schema.Players: players} {
		h, err := readHeader(path, f)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		in, err := ingest.New(f, h.Columns, f.Stream(), h.DataOffset, schema.FileReport{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := stage.NewOutputs(top, gw, job, []string{f.Stream()}, 200)
		if err != nil {
			t.Fatal(err)
		}
		in.Feed(data[h.DataOffset:], true, out)
		rows, _ := out.Drain(false)
		if f == schema.Matches {
			rows = append(rows, extra...)
		}
		ends, _ := out.Drain(true)
		emit, err := stage.Encode(append(rows, ends...))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := upload.Commit(&transport.Step{Commit: transport.Commit{Job: job}, Emit: emit}); err != nil {
			t.Fatal(err)
		}
	}

	var records map[string][]byte
	select {
	case records = <-finished:
	case <-ctx.Done():
		t.Fatal("the graph of stage runtimes did not finish within a minute")
	}
	files := map[string][]byte{}
	for _, name := range schema.ResultFiles(queries.Names) {
		files[name] = records[schema.ResultRecord(name)]
	}
	var dropped int64
	for _, rt := range runtimes {
		n, _ := rt.Dropped(job)
		dropped += n
	}
	return files, dropped
}

// relay is the Publisher of one process of runStages: it keeps what is
// committed in the process's outbox, as the Sender does, and pump delivers
// it to the receivers in commit order.
type relay struct {
	t        *testing.T
	outbox   *transport.Outbox
	runtimes map[string]*stage.Runtime // read-only once pumping

	mu      sync.Mutex
	queue   []transport.Entry
	changed chan struct{} // a token when queue has grown
}

// Publish implements transport.Publisher.
func (r *relay) Publish(entries []transport.Entry) {
	r.outbox.Publish(entries)
	r.mu.Lock()
	r.queue = append(r.queue, entries...)
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// pump delivers the published entries until ctx ends; each acknowledgement
// trims the outbox, which makes room for the sender's actor.
func (r *relay) pump(ctx context.Context) {
	for {
		r.mu.Lock()
		entries := r.queue
		r.queue = nil
		r.mu.Unlock()
		for _, e := range entries {
			rt, ok := r.runtimes[e.Channel.Receiver]
			if !ok {
				r.t.Errorf("%s goes to %s, which is no instance", e.Channel.Stream, e.Channel.Receiver)
				return
			}
			done := func(err error) {
				if err != nil {
					r.t.Errorf("%s refused %d: %v", e.Channel, e.Seq, err)
					return
				}
				if _, err := r.outbox.Ack(e.Channel, e.Seq); err != nil {
					r.t.Errorf("ack %s %d: %v", e.Channel, e.Seq, err)
				}
			}
			if err := rt.Deliver(ctx, e.Channel, &wololov1.Batch{Seq: e.Seq, Eof: e.EOF, Rows: e.Rows}, done); err != nil {
				return // ctx ended
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-r.changed:
		}
	}
}
