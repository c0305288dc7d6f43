package stage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/transport"
	"google.golang.org/protobuf/proto"
)

// startRuntime runs the instance self of the default topology on store,
// its jobs' plans those of testPlans, the way a process does after a
// (re)start, with no network: the Committer publishes to the outbox
// alone. stop ends it and returns what Serve returned. set, if any,
// changes the runtime's config first.
func startRuntime(t *testing.T, self deploy.Instance, store transport.Store, set ...func(*stage.Config)) (rt *stage.Runtime, outbox *transport.Outbox, stop func() error) {
	t.Helper()
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	outbox = transport.NewOutbox(store)
	committer := transport.NewCommitter(store, outbox, transport.NewInbox(), nil)
	cfg := stage.Config{Topology: deploy.Default(), Instance: self, Plans: plans, Committer: committer}
	for _, f := range set {
		f(&cfg)
	}
	rt, err = stage.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Recover(img); err != nil { // it reaps first: before Restore
		t.Fatal(err)
	}
	committer.Restore(img)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- rt.Serve(ctx) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-served
	}
	t.Cleanup(func() { _ = stop() })
	return rt, outbox, stop
}

// shard0 is the tests' instance (see testPlans).
var shard0 = deploy.Instance{Stage: "shard", Index: 0}

// sumRuntime is shard-0 of the default topology with a MemStore and no
// network: what it emits stays in its outbox.
func sumRuntime(t *testing.T) (*stage.Runtime, *transport.MemStore, *transport.Outbox) {
	t.Helper()
	store := transport.NewMemStore()
	rt, outbox, _ := startRuntime(t, shard0, store)
	return rt, store, outbox
}

// introduce introduces jobs of the plan "sum" to a runtime, as the
// gateway does before it sends anything of them.
func introduce(t *testing.T, rt *stage.Runtime, jobs ...string) {
	t.Helper()
	for _, job := range jobs {
		if err := rt.IntroduceJob(job, []byte("sum")); err != nil {
			t.Fatal(err)
		}
	}
}

// fromShard is the channel of job's sumRows from shard sender to shard-0.
func fromShard(job string, sender int) transport.ChannelID {
	return transport.ChannelID{Job: job, Stream: sumRows, Sender: deploy.Instance{Stage: "shard", Index: sender}.Name(), Receiver: shard0.Name()}
}

// toGateway is the channel of job's sums from shard-0 to the gateway.
func toGateway(job string) transport.ChannelID {
	return transport.ChannelID{Job: job, Stream: sumOut, Sender: shard0.Name(), Receiver: "gateway-0"}
}

// deliver hands a batch over and waits for its outcome.
func deliver(t *testing.T, rt *stage.Runtime, ch transport.ChannelID, b *wololov1.Batch) error {
	t.Helper()
	res := make(chan error, 1)
	if err := rt.Deliver(context.Background(), ch, b, func(err error) { res <- err }); err != nil {
		return err
	}
	select {
	case err := <-res:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("delivery never completed")
		return nil
	}
}

func TestRuntimeAppliesOnceAndFinishesAfterEveryEOF(t *testing.T) {
	rt, store, outbox := sumRuntime(t)
	from0, from1 := fromShard("j1", 0), fromShard("j1", 1)
	introduce(t, rt, "j1")
	if wm, err := rt.Open(from0); err != nil || wm != 0 {
		t.Fatalf("Open = %d, %v", wm, err)
	}
	bogus := from0
	bogus.Stream = "c9-other"
	if _, err := rt.Open(bogus); !errors.Is(err, transport.ErrUnknownChannel) {
		t.Fatalf("Open of a stream the stage does not read: %v", err)
	}

	rows := rowsOf("A 1", "A 1", "B 1")
	if err := deliver(t, rt, from0, &wololov1.Batch{Seq: 1, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	// The same batch again (a resend after a lost ack) is acknowledged and dropped.
	if err := deliver(t, rt, from0, &wololov1.Batch{Seq: 1, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	if err := deliver(t, rt, from0, &wololov1.Batch{Seq: 3}); !errors.Is(err, transport.ErrSeqGap) {
		t.Fatalf("seq 3 after 1: %v, want ErrSeqGap", err)
	}
	if wm := store.Watermark(from0); wm != 1 {
		t.Fatalf("committed watermark %d, want 1", wm)
	}
	if wm, _ := rt.Open(from0); wm != 1 {
		t.Fatalf("Hello watermark %d, want 1", wm)
	}
	if err := deliver(t, rt, from0, &wololov1.Batch{Seq: 2, Eof: true}); err != nil {
		t.Fatal(err)
	}
	out := toGateway("j1")
	if n := store.OutboxLen(out); n != 0 {
		t.Fatalf("emitted %d batches before every upstream ended", n)
	}
	before := time.UnixMilli(time.Now().UnixMilli())
	if err := deliver(t, rt, from1, &wololov1.Batch{Seq: 1, Eof: true}); err != nil {
		t.Fatal(err)
	}
	// The final commit says when the job finished, for a restarted process.
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := stage.FinishedAt(img.Jobs["j1"].Records); !ok || at.Before(before) || at.After(time.Now()) {
		t.Fatalf("FinishedAt of the final commit = %v, %v; want a time from %v to now", at, ok, before)
	}
	// One batch with the sum over 1, then the EOF, in the outbox.
	if n := store.OutboxLen(out); n != 2 {
		t.Fatalf("outbox holds %d entries after finishing, want 2 (rows + EOF)", n)
	}
	pending, err := outbox.Pending(context.Background(), out, 0)
	if err != nil || len(pending) != 2 || !pending[1].EOF {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	if got, want := string(pending[0].Rows), string(rowsOf("A 2")); got != want {
		t.Fatalf("emitted %q, want %q", got, want)
	}
	p := rt.Progress()
	if len(p) != 1 || p[0].RowsIn != 3 || !p[0].Finished || p[0].RowsOut != 1 {
		t.Fatalf("progress = %+v", p)
	}
	// A late duplicate EOF after finishing changes nothing.
	if err := deliver(t, rt, from1, &wololov1.Batch{Seq: 1, Eof: true}); err != nil {
		t.Fatal(err)
	}
	if n := store.OutboxLen(out); n != 2 {
		t.Fatalf("outbox grew to %d after a duplicate EOF", n)
	}
}

func TestRuntimeDropsUnreadableBatchWithoutStalling(t *testing.T) {
	rt, store, _ := sumRuntime(t)
	ch := fromShard("j2", 0)
	introduce(t, rt, "j2")
	// A row the operator cannot read: it refuses the batch.
	if err := deliver(t, rt, ch, &wololov1.Batch{Seq: 1, Rows: rowsOf("x")}); err != nil {
		t.Fatal(err)
	}
	if wm := store.Watermark(ch); wm != 1 {
		t.Fatalf("watermark %d: an unreadable batch must still advance the channel", wm)
	}
}

func TestConfigRefusesWhatCannotRun(t *testing.T) {
	cfg := stage.Config{
		Topology: deploy.Default(), Instance: shard0,
		Committer: transport.NewCommitter(transport.NewMemStore(), transport.NewOutbox(transport.NewMemStore()), transport.NewInbox(), nil),
	}
	if err := cfg.Validate(); err == nil {
		t.Fatal("a runtime that makes nothing of a job's plan was accepted")
	}
	cfg.Plans = plans
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg.Instance.Index = 7
	if err := cfg.Validate(); err == nil {
		t.Fatal("instance index beyond the replica count was accepted")
	}
}

func TestRouteIsStableAndSpreads(t *testing.T) {
	// Fixed values: changing the hash would send keys of a running job to
	// other instances after an upgrade.
	cases := []struct {
		key  string
		n    int
		want int
	}{{"", 1, 0}, {"abc", 2, 1}, {"-0ZDtxkFJRBzxhLf", 3, 2}, {"A", 7, 3}}
	for _, c := range cases {
		if got := stage.Route([]byte(c.key), c.n); got != c.want {
			t.Errorf("Route(%q, %d) = %d, want %d", c.key, c.n, got, c.want)
		}
	}
	for i := 0; i < 1000; i++ { // the same function as the standard library's FNV-1a
		key := []byte{byte(i), byte(i * 7), 'q', byte(i >> 3)}
		h := fnv.New64a()
		h.Write(key)
		if got, want := stage.Route(key, 5), int(h.Sum64()%5); got != want {
			t.Fatalf("Route(%v, 5) = %d, FNV-1a says %d", key, got, want)
		}
		// Among two, of keys of every length up to 40 (read eight bytes
		// at a time, then one): FNV-1a's parity.
		long := bytes.Repeat(key, 10)[:i%41]
		hl := fnv.New64a()
		hl.Write(long)
		if got, want := stage.Route(long, 2), int(hl.Sum64()%2); got != want {
			t.Fatalf("Route(%v, 2) = %d, FNV-1a says %d", long, got, want)
		}
		if got, want := stage.FNV1a(key), h.Sum64(); got != want {
			t.Fatalf("FNV1a(%v) = %#x, hash/fnv says %#x", key, got, want)
		}
	}
	counts := make([]int, 4)
	for i := 0; i < 4000; i++ {
		counts[stage.Route([]byte{byte(i), byte(i >> 8), 'k'}, 4)]++
	}
	for i, c := range counts {
		if c < 800 || c > 1200 {
			t.Errorf("instance %d got %d of 4000 keys", i, c)
		}
	}
}

// TestRecoverReplaysLogAndSnapshots restarts a stateful operator's
// runtime on its store after every batch, with snapshots forced on; the
// rebuilt operator must give the same totals as one that never restarted.
func TestRecoverReplaysLogAndSnapshots(t *testing.T) {
	old := stage.SnapshotMinBytes
	stage.SnapshotMinBytes = 1
	t.Cleanup(func() { stage.SnapshotMinBytes = old })

	store := transport.NewMemStore()
	from := []transport.ChannelID{fromShard("j", 0), fromShard("j", 1)}
	steps := []struct {
		ch int
		b  *wololov1.Batch
	}{
		{0, &wololov1.Batch{Seq: 1, Rows: rowsOf("Aztecs 2", "Celts 1")}},
		{1, &wololov1.Batch{Seq: 1, Rows: rowsOf("Aztecs 3")}},
		{0, &wololov1.Batch{Seq: 2, Rows: rowsOf("Celts 1")}},
		{0, &wololov1.Batch{Seq: 2, Rows: rowsOf("Celts 1")}}, // a resend: dropped
		{0, &wololov1.Batch{Seq: 3, Eof: true}},
		{1, &wololov1.Batch{Seq: 2, Rows: rowsOf("Britons 4")}},
		{1, &wololov1.Batch{Seq: 3, Eof: true}},
	}
	var outbox *transport.Outbox
	for i, s := range steps {
		rt, ob, stop := startRuntime(t, shard0, store)
		if i == 0 {
			introduce(t, rt, "j") // once: the introduction is durable
		}
		if err := deliver(t, rt, from[s.ch], s.b); err != nil {
			t.Fatal(err)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		outbox = ob
	}
	pending, err := outbox.Pending(context.Background(), toGateway("j"), 0)
	if err != nil || len(pending) != 2 || !pending[1].EOF {
		t.Fatalf("outbox = %+v, %v; want totals then EOF", pending, err)
	}
	if got, want := string(pending[0].Rows), string(rowsOf("Aztecs 5", "Britons 4", "Celts 2")); got != want {
		t.Fatalf("totals after restarts %q, want %q", got, want)
	}
}

// TestRuntimeStopsOnCommitFailure: a failed commit refuses the delivery,
// leaves the watermark where the store has it, and ends Serve with the
// error (the operator ran ahead of the store; only a restart recovers).
func TestRuntimeStopsOnCommitFailure(t *testing.T) {
	store := &stage.FailingStore{MemStore: transport.NewMemStore()}
	rt, _, stop := startRuntime(t, shard0, store)
	ch := fromShard("j", 0)
	introduce(t, rt, "j")
	store.Failing = true
	if err := deliver(t, rt, ch, &wololov1.Batch{Seq: 1, Eof: true}); err == nil {
		t.Fatal("a delivery whose commit failed was acknowledged")
	}
	if wm, _ := rt.Open(ch); wm != 0 {
		t.Fatalf("watermark %d after a failed commit, want 0", wm)
	}
	if err := stop(); err == nil || !strings.Contains(err.Error(), "injected commit failure") {
		t.Fatalf("Serve returned %v, want the commit failure", err)
	}
}

// TestRuntimeCreatesNoJobForARefusedChannel: a channel the job's plan does
// not give the instance is refused before its job exists (a job never
// introduced as ErrUnknownJob, whatever the channel, so that a sender
// whose receiver lost the job with its store learns that; an introduced
// one as ErrUnknownChannel), introductions beyond MaxJobs are refused
// until a job is dropped (Config.Dropped told of it), and so is one
// without a plan (a job of the hand-written graph an older gateway would
// introduce: ErrNoPlan).
func TestRuntimeCreatesNoJobForARefusedChannel(t *testing.T) {
	store := transport.NewMemStore()
	var dropped []string
	rt, err := stage.New(stage.Config{
		Topology: deploy.Default(), Instance: shard0, Plans: plans,
		Committer: transport.NewCommitter(store, transport.NewOutbox(store), transport.NewInbox(), nil), MaxJobs: 1,
		Dropped: func(job string) { dropped = append(dropped, job) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go rt.Serve(ctx)
	ch := func(job, stream, sender string) transport.ChannelID {
		return transport.ChannelID{Job: job, Stream: stream, Sender: sender, Receiver: shard0.Name()}
	}
	bads := []transport.ChannelID{
		ch("a", "c9-other", "shard-0"), // a stream the plan does not send here
		ch("a", sumRows, "shard-7"),    // beyond the sender's replicas
		ch("a", sumRows, "gateway-0"),  // the wrong sending stage
		ch("a", sumRows, "shard-00"),
	}
	for _, bad := range bads {
		if _, err := rt.Open(bad); !errors.Is(err, transport.ErrUnknownJob) {
			t.Errorf("Open(%s) of a job never introduced = %v, want ErrUnknownJob", bad, err)
		}
	}
	if _, err := rt.Open(transport.ChannelID{Job: "a", Stream: sumRows, Sender: "shard-0", Receiver: "shard-1"}); !errors.Is(err, transport.ErrUnknownChannel) {
		t.Errorf("Open for another receiver = %v, want ErrUnknownChannel", err)
	}
	if p := rt.Progress(); len(p) != 0 {
		t.Fatalf("refused channels created %d jobs", len(p))
	}
	introduce(t, rt, "a", "a") // twice: the second does nothing
	for _, bad := range bads {
		if _, err := rt.Open(bad); !errors.Is(err, transport.ErrUnknownChannel) {
			t.Errorf("Open(%s) of an introduced job = %v, want ErrUnknownChannel", bad, err)
		}
	}
	if p := rt.Progress(); len(p) != 0 {
		t.Fatalf("refused channels created %d jobs", len(p))
	}
	if _, err := rt.Open(ch("a", sumRows, "shard-1")); err != nil {
		t.Fatal(err)
	}
	if err := rt.IntroduceJob("b", []byte("sum")); !errors.Is(err, transport.ErrTooManyJobs) || !strings.Contains(err.Error(), "--max-jobs") {
		t.Fatalf("a job beyond MaxJobs: %v, want ErrTooManyJobs naming --max-jobs", err)
	}
	if _, err := rt.Open(ch("b", sumRows, "shard-1")); !errors.Is(err, transport.ErrUnknownJob) {
		t.Fatalf("a stream of the refused job: %v, want ErrUnknownJob", err)
	}
	if err := rt.DropJob("a"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dropped, []string{"a"}) {
		t.Fatalf("Config.Dropped told of %q, want the dropped job", dropped)
	}
	if err := rt.IntroduceJob("a", []byte("sum")); !errors.Is(err, transport.ErrJobDropped) {
		t.Fatalf("introducing a dropped job: %v, want ErrJobDropped", err)
	}
	if err := rt.IntroduceJob("graph", nil); !errors.Is(err, transport.ErrBadPlan) || !strings.Contains(err.Error(), stage.ErrNoPlan.Error()) {
		t.Fatalf("introducing a job without a plan: %v, want ErrBadPlan saying ErrNoPlan", err)
	}
	introduce(t, rt, "b")
	if _, err := rt.Open(ch("b", sumRows, "shard-1")); err != nil {
		t.Fatalf("after a drop: %v", err)
	}
}

// TestRecoverFailsOnlyAJobWhoseStateDoesNotReplay: a job whose state log
// does not replay (written by a build whose state this one cannot read)
// is not rebuilt, and not started afresh either: Recover goes on with the
// other jobs, reports it in Unrestorable with the reason, and its streams
// are refused as a dropped job's are, until the gateway drops it.
func TestRecoverFailsOnlyAJobWhoseStateDoesNotReplay(t *testing.T) {
	store := transport.NewMemStore()
	ch := func(job string) transport.ChannelID { return fromShard(job, 0) }
	rows := rowsOf("Aztecs 2")
	rt, _, stop := startRuntime(t, shard0, store)
	introduce(t, rt, "good", "bad")
	for _, job := range []string{"good", "bad"} {
		if err := deliver(t, rt, ch(job), &wololov1.Batch{Seq: 1, Rows: rows}); err != nil {
			t.Fatal(err)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// The bad job's log gets an entry this build cannot read: a snapshot
	// the operator cannot restore.
	bad, err := proto.Marshal(&wololov1.Journal{Snapshot: []byte{0xff, 0xff, 0xff}})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(&transport.Commit{Job: "bad", State: bad}); err != nil {
		t.Fatal(err)
	}

	rt, _, _ = startRuntime(t, shard0, store)
	lost := rt.Unrestorable()
	if len(lost) != 1 || lost["bad"] == nil || !strings.Contains(lost["bad"].Error(), "replay state log") {
		t.Fatalf("Unrestorable = %v, want job bad with the reason", lost)
	}
	if _, err := rt.Open(ch("bad")); !errors.Is(err, transport.ErrJobDropped) {
		t.Fatalf("a stream of the unrestorable job: %v, want it refused as dropped", err)
	}
	if wm, err := rt.Open(ch("good")); err != nil || wm != 1 {
		t.Fatalf("the good job: watermark %d, %v", wm, err)
	}
	if err := deliver(t, rt, ch("good"), &wololov1.Batch{Seq: 2, Eof: true}); err != nil {
		t.Fatalf("the good job goes on: %v", err)
	}
	if err := rt.DropJob("bad"); err != nil {
		t.Fatal(err)
	}
	if lost := rt.Unrestorable(); len(lost) != 0 {
		t.Fatalf("after the drop, Unrestorable = %v", lost)
	}
}

// TestRuntimeKeepsStateOnlyForIntroducedJobs: streams of jobs the gateway
// never introduced are refused before anything of them exists, however
// many; an introduction is durable and lets the job's streams in after a
// restart; a gateway-style runtime admits the jobs Known reports, and the
// periodic sweep reaps one Known no longer does; and state a store holds
// of a job never introduced (left by streams taken before introductions
// existed) is reaped at recovery, tombstoned, and restored to no one.
func TestRuntimeKeepsStateOnlyForIntroducedJobs(t *testing.T) {
	self := shard0
	ch := func(job, sender string) transport.ChannelID {
		return transport.ChannelID{Job: job, Stream: sumRows, Sender: sender, Receiver: self.Name()}
	}
	t.Run("phantom streams are refused and leave nothing", func(t *testing.T) {
		store := transport.NewMemStore()
		rt, _, _ := startRuntime(t, self, store)
		for i := 0; i < 2*stage.DefaultMaxJobs; i++ {
			if _, err := rt.Open(ch(fmt.Sprintf("phantom-%d", i), "shard-0")); !errors.Is(err, transport.ErrUnknownJob) {
				t.Fatalf("stream %d of a job never introduced: %v, want ErrUnknownJob", i, err)
			}
		}
		if err := rt.Deliver(context.Background(), ch("phantom-0", "shard-0"), &wololov1.Batch{Seq: 1, Eof: true}, func(error) {}); !errors.Is(err, transport.ErrUnknownJob) {
			t.Fatalf("a batch of a job never introduced: %v, want ErrUnknownJob", err)
		}
		img, _ := store.Load()
		if len(img.Jobs) != 0 || len(rt.Progress()) != 0 || store.Stats().Commits != 0 {
			t.Fatalf("phantoms left %d jobs in the store, %d in the runtime, %d commits", len(img.Jobs), len(rt.Progress()), store.Stats().Commits)
		}
		introduce(t, rt, "real")
		if err := deliver(t, rt, ch("real", "shard-0"), &wololov1.Batch{Seq: 1, Eof: true}); err != nil {
			t.Fatalf("the introduced job after the phantoms: %v", err)
		}
	})
	t.Run("an introduction survives a restart", func(t *testing.T) {
		store := transport.NewMemStore()
		rt, _, stop := startRuntime(t, self, store)
		introduce(t, rt, "j")
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		rt, _, _ = startRuntime(t, self, store)
		if _, err := rt.Open(ch("j", "shard-0")); err != nil {
			t.Fatalf("an introduced job after a restart: %v", err)
		}
	})
	t.Run("recovery reaps a job never introduced", func(t *testing.T) {
		store := transport.NewMemStore()
		out := toGateway("phantom")
		// What a stream of a job never introduced left before this build:
		// a watermark, an ended input, an output entry.
		if err := store.Commit(&transport.Commit{Job: "phantom", Inputs: map[transport.ChannelID]uint64{ch("phantom", "shard-0"): 1},
			Records: map[string][]byte{transport.EndedRecord(ch("phantom", "shard-0")): {1}}, Outputs: []transport.Entry{{Channel: out, Seq: 1}}}); err != nil {
			t.Fatal(err)
		}
		rt, outbox, _ := startRuntime(t, self, store)
		introduce(t, rt, "real")
		img, _ := store.Load()
		if len(img.Jobs) != 1 || img.Jobs["real"] == nil || fmt.Sprint(img.Dropped) != "[phantom]" {
			t.Fatalf("after recovery the store holds %v, dropped %v; want only the real job, the phantom tombstoned", img.Jobs, img.Dropped)
		}
		if len(outbox.Jobs()) != 0 || len(rt.Progress()) != 0 {
			t.Fatalf("the phantom was restored: outbox %v, progress %v", outbox.Jobs(), rt.Progress())
		}
		if _, err := rt.Open(ch("phantom", "shard-0")); !errors.Is(err, transport.ErrJobDropped) {
			t.Fatalf("a stream of the reaped job: %v, want ErrJobDropped", err)
		}
	})
	t.Run("the sweep reaps a job the gateway no longer knows", func(t *testing.T) {
		store := transport.NewMemStore()
		committer := transport.NewCommitter(store, transport.NewOutbox(store), transport.NewInbox(), nil)
		var known sync.Map
		known.Store("j", true)
		var askedJ atomic.Int64 // each sweep asks about j
		rt, err := stage.New(stage.Config{Topology: deploy.Default(), Instance: self, Plans: plans, Committer: committer,
			Known: func(job string) bool {
				if job == "j" {
					askedJ.Add(1)
				}
				_, ok := known.Load(job)
				return ok
			}, PlanOf: func(string) []byte { return []byte("sum") }, SweepEvery: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go rt.Serve(ctx)
		if _, err := rt.Open(ch("k", "shard-0")); !errors.Is(err, transport.ErrUnknownJob) {
			t.Fatalf("a job the gateway does not know: %v, want ErrUnknownJob", err)
		}
		if err := deliver(t, rt, ch("j", "shard-0"), &wololov1.Batch{Seq: 1}); err != nil {
			t.Fatalf("a job the gateway knows: %v", err)
		}
		// Two sweeps done that found nothing to reap: the third has asked.
		asked := askedJ.Load()
		testkit.WaitFor(t, "three sweeps to ask about job j", 5*time.Second, func() bool { return askedJ.Load() >= asked+3 })
		if p := rt.Progress(); len(p) != 1 {
			t.Fatalf("the sweep reaped a known job: %v", p)
		}
		known.Delete("j")
		testkit.WaitFor(t, "the sweep to reap the job the gateway forgot", 5*time.Second, func() bool {
			return len(rt.Progress()) == 0 && committer.Inbox().Watermark(ch("j", "shard-0")) == 0
		})
		if img, _ := store.Load(); len(img.Jobs) != 0 || fmt.Sprint(img.Dropped) != "[j]" {
			t.Fatalf("after the sweep the store holds %v, dropped %v", img.Jobs, img.Dropped)
		}
	})
}

// TestRuntimeRefusesBatchesAfterEOF: once a channel's EOF is applied, a
// batch or a second EOF numbered past it is refused with ErrAfterEOF and
// nothing of it is committed (no watermark, no journal entry, no output),
// before and after a restart; a resend at or below the watermark is still
// acknowledged and dropped.
func TestRuntimeRefusesBatchesAfterEOF(t *testing.T) {
	self := shard0
	store := transport.NewMemStore() // the operator is stateful: it journals what it applies
	from := fromShard("j", 0)
	rows := rowsOf("Aztecs 2")
	rt, _, stop := startRuntime(t, self, store)
	introduce(t, rt, "j")
	for _, bt := range []*wololov1.Batch{{Seq: 1, Rows: rows}, {Seq: 2, Eof: true}} {
		if err := deliver(t, rt, from, bt); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := store.Load()
	commits := store.Stats().Commits
	cases := []struct {
		name string
		b    *wololov1.Batch
		want error // nil: acknowledged
	}{
		{"a batch after the EOF", &wololov1.Batch{Seq: 3, Rows: rows}, transport.ErrAfterEOF},
		{"a second EOF", &wololov1.Batch{Seq: 3, Eof: true}, transport.ErrAfterEOF},
		{"a batch far past the EOF", &wololov1.Batch{Seq: 1 << 40, Rows: rows}, transport.ErrAfterEOF},
		{"a resend of the EOF", &wololov1.Batch{Seq: 2, Eof: true}, nil},
		{"a resend of a batch", &wololov1.Batch{Seq: 1, Rows: rows}, nil},
	}
	for restart := 0; restart < 2; restart++ {
		for _, tc := range cases {
			err := deliver(t, rt, from, tc.b)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Errorf("restarted %d times, %s: %v, want %v", restart, tc.name, err, tc.want)
			}
		}
		after, _ := store.Load()
		if n := store.Stats().Commits; n != commits || fmt.Sprint(after.Jobs["j"]) != fmt.Sprint(before.Jobs["j"]) {
			t.Fatalf("restarted %d times: %d commits after the EOF, store %v, was %v", restart, n-commits, after.Jobs["j"], before.Jobs["j"])
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		rt, _, stop = startRuntime(t, self, store)
	}
}

// TestFinishedAtReadsTheFinalCommit: the finish time is read back to the
// millisecond; a job not finished, and the mark of a store written before
// the time was recorded (1), have none.
func TestFinishedAtReadsTheFinalCommit(t *testing.T) {
	for _, c := range []struct {
		name   string
		value  []byte // "stage/finished", as the store holds it
		want   time.Time
		wantOK bool
	}{
		{"a finish time", []byte("1764120000123"), time.UnixMilli(1764120000123), true},
		{"not finished", nil, time.Time{}, false},
		{"a store of an older build", []byte{1}, time.Time{}, false},
		{"the text 1", []byte("1"), time.Time{}, false},
		{"garbage", []byte("soon"), time.Time{}, false},
		{"negative", []byte("-5"), time.Time{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			records := map[string][]byte{}
			if c.value != nil {
				records["stage/finished"] = c.value
			}
			got, ok := stage.FinishedAt(records)
			if ok != c.wantOK || !got.Equal(c.want) {
				t.Fatalf("FinishedAt = %v, %v; want %v, %v", got, ok, c.want, c.wantOK)
			}
		})
	}
}

// endsOp hears the ends of its inputs and keeps them as its state,
// padded so that its snapshot is larger than a journal entry (the log
// after it is then journaled, not snapshotted again); at Finish it emits
// one row naming the inputs it heard end.
type endsOp struct{ heard []string }

func (o *endsOp) Apply(int, []byte, stage.Emitter) (int, error) { return 0, nil }
func (o *endsOp) EndInput(k int, _ stage.Emitter) error {
	o.heard = append(o.heard, strconv.Itoa(k))
	return nil
}
func (o *endsOp) Finish(out stage.Emitter) error {
	out.Encoded(sumOut, 0, []byte(strings.Join(o.heard, "+")), 1)
	return nil
}
func (o *endsOp) AppendSnapshot(dst []byte) ([]byte, error) {
	dst = append(dst, strings.Join(o.heard, "+")...)
	return append(dst, make([]byte, 1000)...), nil
}
func (o *endsOp) Restore(state []byte) error {
	if s := string(bytes.TrimRight(state, "\x00")); s != "" {
		o.heard = strings.Split(s, "+")
	}
	return nil
}

// TestRecoverKeepsAnEndAcrossASnapshot: an input whose first sender's
// end was applied before the snapshot the state log starts with, and
// whose last sender's end is in the journal after it, has ended for the
// recovered operator: it hears so during the replay (not only the job's
// other input, at the job's end).
func TestRecoverKeepsAnEndAcrossASnapshot(t *testing.T) {
	old := stage.SnapshotMinBytes
	stage.SnapshotMinBytes = 1
	t.Cleanup(func() { stage.SnapshotMinBytes = old })
	testPlans["ends"] = stage.JobSpec{
		Wiring: stage.Wiring{
			Inputs:  []stage.Edge{{Stream: "c0-a", Stage: "shard", Replicas: 2}, {Stream: "c1-b", Stage: "shard", Replicas: 2}},
			Outputs: []stage.Edge{{Stream: sumOut, Stage: "gateway", Replicas: 1}},
		},
		New: func() stage.Operator { return &endsOp{} },
	}
	t.Cleanup(func() { delete(testPlans, "ends") })
	store := transport.NewMemStore()
	ch := func(stream, sender string) transport.ChannelID {
		return transport.ChannelID{Job: "j", Stream: stream, Sender: sender, Receiver: shard0.Name()}
	}
	steps := []transport.ChannelID{
		ch("c0-a", "shard-0"), // its commit snapshots
		ch("c0-a", "shard-1"), // journaled after the snapshot
		ch("c1-b", "shard-0"),
		ch("c1-b", "shard-1"),
	}
	var outbox *transport.Outbox
	for i, c := range steps {
		rt, ob, stop := startRuntime(t, shard0, store)
		if i == 0 {
			if err := rt.IntroduceJob("j", []byte("ends")); err != nil {
				t.Fatal(err)
			}
		}
		if err := deliver(t, rt, c, &wololov1.Batch{Seq: 1, Eof: true}); err != nil {
			t.Fatal(err)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		outbox = ob
	}
	pending, err := outbox.Pending(context.Background(), toGateway("j"), 0)
	if err != nil || len(pending) != 2 {
		t.Fatalf("outbox = %+v, %v; want the row then EOF", pending, err)
	}
	if heard := string(pending[0].Rows); heard != "0+1" {
		t.Fatalf("the operator heard inputs %q end, want 0+1", heard)
	}
}

// TestChannelsToAnIntroducedJob: a job this process was told of is asked
// about on its output channels to a receiver's new incarnation, though
// no stream has made it yet and nothing was sent on them; a dropped job
// is not.
func TestChannelsToAnIntroducedJob(t *testing.T) {
	rt, _, _ := sumRuntime(t)
	receiver := "gateway-0"
	if got := rt.ChannelsTo(receiver); len(got) != 0 {
		t.Fatalf("channels of no job: %v", got)
	}
	introduce(t, rt, "a")
	want := []transport.ChannelID{toGateway("a")}
	if got := rt.ChannelsTo(receiver); !slices.Equal(got, want) {
		t.Fatalf("channels to %s of the introduced job: %v, want %v", receiver, got, want)
	}
	if other := rt.ChannelsTo("no-such-receiver-0"); len(other) != 0 {
		t.Errorf("channels to a receiver the job does not send to: %v", other)
	}
	if err := rt.DropJob("a"); err != nil {
		t.Fatal(err)
	}
	if after := rt.ChannelsTo(receiver); len(after) != 0 {
		t.Errorf("channels of a dropped job: %v", after)
	}
}

// TestMetricStreamsRenameEveryJobsStreams: a job's streams go by its
// spec's MetricStreams, made from the plan once while the runtime holds
// no job of it (the gateway's uploads) and then the held job's; a job
// that is not (or no longer) admitted is renamed with no names, so that a
// scrape racing a drop shows nothing of the plan's names.
func TestMetricStreamsRenameEveryJobsStreams(t *testing.T) {
	names := map[string]string{"acme_payroll-by-employee_ssn": "ch0"}
	var made int
	rt, _, _ := startRuntime(t, shard0, transport.NewMemStore(), func(c *stage.Config) {
		c.Plans = func(string, []byte) (stage.JobSpec, error) {
			made++
			return stage.JobSpec{New: testPlans["sum"].New, MetricStreams: names}, nil
		}
	})
	if err := rt.IntroduceJob("planned", []byte("a plan")); err != nil {
		t.Fatal(err)
	}
	check := func(when, job string, wantNames map[string]string) {
		t.Helper()
		got, rename := rt.MetricStreams(job)
		if !rename || !maps.Equal(got, wantNames) {
			t.Errorf("%s: MetricStreams(%s) = %v, %v; want %v, true", when, job, got, rename, wantNames)
		}
	}
	made = 0
	check("introduced, not held", "planned", names)
	check("introduced, not held, again", "planned", names)
	if made != 1 {
		t.Errorf("the plan's spec was made %d times for two scrapes, want once", made)
	}
	check("never introduced", "stranger", nil)
	rt.ChannelsTo("nobody-0") // makes the introduced jobs held, as a first stream would
	made = 0
	check("held", "planned", names)
	if made != 0 {
		t.Errorf("the held job's spec was made again %d times", made)
	}
	if err := rt.DropJob("planned"); err != nil {
		t.Fatal(err)
	}
	check("dropped", "planned", nil)
}

// TestRecoverFailsAJobWithoutAPlan: a store written by an older version
// holds a job of the hand-written graph, introduced without a plan, with
// state of it: it is not restored (this version runs no such job) but
// reported in Unrestorable, ErrNoPlan its reason, for the process to
// report lost (the gateway runs it again from its retained input, or its
// client submits it again); its streams are refused as a dropped job's.
func TestRecoverFailsAJobWithoutAPlan(t *testing.T) {
	store := transport.NewMemStore()
	ch := fromShard("graph", 0)
	if err := store.Commit(&transport.Commit{Job: "graph", Inputs: map[transport.ChannelID]uint64{ch: 1},
		Records: map[string][]byte{"stage/introduced": {1}}, State: []byte{0x0a, 0x00}}); err != nil {
		t.Fatal(err)
	}
	rt, _, _ := startRuntime(t, shard0, store)
	lost := rt.Unrestorable()
	if len(lost) != 1 || !errors.Is(lost["graph"], stage.ErrNoPlan) {
		t.Fatalf("Unrestorable = %v, want job graph for want of a plan (ErrNoPlan)", lost)
	}
	if _, err := rt.Open(ch); !errors.Is(err, transport.ErrJobDropped) {
		t.Fatalf("a stream of the job without a plan: %v, want it refused as dropped", err)
	}
}

// A commit that writes records before the job's last is told to
// OnRecords with its records, once; the final commit's go to OnFinish
// alone.
func TestOnRecordsSeesEveryCommitWithRecords(t *testing.T) {
	type call struct {
		job     string
		records map[string][]byte
	}
	calls := make(chan call, 8)
	finished := make(chan map[string][]byte, 1)
	rt, _, _ := startRuntime(t, shard0, transport.NewMemStore(), func(c *stage.Config) {
		c.OnRecords = func(job string, records map[string][]byte) { calls <- call{job, maps.Clone(records)} }
		c.OnFinish = func(_ string, records map[string][]byte) { finished <- records }
	})
	if err := rt.IntroduceJob("j1", []byte("tally")); err != nil {
		t.Fatal(err)
	}
	from0, from1 := fromShard("j1", 0), fromShard("j1", 1)
	if err := deliver(t, rt, from0, &wololov1.Batch{Seq: 1, Rows: rowsOf("A 1")}); err != nil {
		t.Fatal(err)
	}
	var c call
	select {
	case c = <-calls:
	case <-time.After(10 * time.Second):
		t.Fatal("OnRecords was not called after a commit with records")
	}
	if c.job != "j1" || string(c.records["tally/1"]) != string(rowsOf("A 1")) {
		t.Fatalf("OnRecords(%q, %q), want j1 and tally/1", c.job, c.records)
	}
	if err := deliver(t, rt, from0, &wololov1.Batch{Seq: 2, Eof: true}); err != nil {
		t.Fatal(err)
	}
	if err := deliver(t, rt, from1, &wololov1.Batch{Seq: 1, Eof: true}); err != nil {
		t.Fatal(err)
	}
	if recs := <-finished; recs == nil {
		t.Fatal("OnFinish without records")
	}
	select {
	case c := <-calls:
		t.Fatalf("OnRecords called again with %q: a commit without the operator's records, or the final one", c.records)
	default:
	}
}

// entryAtATime is a store whose ReadState hands each state entry over
// in a buffer of its own, as Store.ReadState promises (the runtime keeps
// them without a copy), one at a time. It counts the entries it hands
// out.
type entryAtATime struct {
	*transport.MemStore
	read int
}

func (s *entryAtATime) ReadState(job string, each func([]byte) error) error {
	return s.MemStore.ReadState(job, func(e []byte) error {
		s.read++
		return each(bytes.Clone(e))
	})
}

// TestRecoverReadsTheStateLogAnEntryAtATime: a restarted runtime
// replays a job's state log through the store's ReadState, an entry at a
// time, each the runtime's to keep, and the operator it rebuilds is the
// one that ran: with a log of deltas alone, and with one that starts
// with a snapshot.
func TestRecoverReadsTheStateLogAnEntryAtATime(t *testing.T) {
	for _, snapshotAt := range []int{stage.SnapshotMinBytes, 1} {
		t.Run(fmt.Sprint("snapshot at ", snapshotAt), func(t *testing.T) {
			old := stage.SnapshotMinBytes
			stage.SnapshotMinBytes = snapshotAt
			t.Cleanup(func() { stage.SnapshotMinBytes = old })
			store := &entryAtATime{MemStore: transport.NewMemStore()}
			rt, _, stop := startRuntime(t, shard0, store)
			introduce(t, rt, "j")
			const batches = 40
			for i := range batches {
				if err := deliver(t, rt, fromShard("j", i%2), &wololov1.Batch{Seq: uint64(i/2 + 1), Rows: rowsOf("Aztecs 1", fmt.Sprintf("civ%d 2", i%5))}); err != nil {
					t.Fatal(err)
				}
			}
			if err := deliver(t, rt, fromShard("j", 0), &wololov1.Batch{Seq: batches/2 + 1, Eof: true}); err != nil {
				t.Fatal(err)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			logged, err := transport.LoadAll(store.MemStore)
			if err != nil {
				t.Fatal(err)
			}
			entries := len(logged.Jobs["j"].State)
			if entries == 0 {
				t.Fatal("the job logged no state")
			}

			store.read = 0
			rt, outbox, _ := startRuntime(t, shard0, store)
			if store.read < entries {
				t.Fatalf("recovery read %d entries through ReadState, the log holds %d", store.read, entries)
			}
			if err := deliver(t, rt, fromShard("j", 1), &wololov1.Batch{Seq: batches/2 + 1, Eof: true}); err != nil {
				t.Fatal(err)
			}
			pending, err := outbox.Pending(context.Background(), toGateway("j"), 0)
			if err != nil || len(pending) != 2 {
				t.Fatalf("outbox = %+v, %v; want totals then EOF", pending, err)
			}
			want := rowsOf("Aztecs 40", "civ0 16", "civ1 16", "civ2 16", "civ3 16", "civ4 16")
			if got := string(pending[0].Rows); got != string(want) {
				t.Fatalf("totals after the restart %q, want %q", got, want)
			}
		})
	}
}

// BenchmarkRoute routes 16-byte keys (match tokens) among two instances
// (the parity of the bytes' lowest bits) and among three (the hash).
func BenchmarkRoute(b *testing.B) {
	key := []byte("-0ZDtxkFJRBzxhLf")
	for _, n := range []int{2, 3} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			sum := 0
			for i := range b.N {
				key[i%16]++
				sum += stage.Route(key, n)
			}
			if sum < 0 {
				b.Fatal(sum)
			}
		})
	}
}
