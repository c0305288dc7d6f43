package segstore

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
	"google.golang.org/protobuf/proto"
)

func rowsOf(n int, tag string) []byte {
	data := bytes.Repeat([]byte(tag), n/len(tag)+1)[:n]
	b, err := proto.Marshal(storetest.TextRows(&wololov1.TextColumn{Data: data, Ends: []uint32{uint32(n)}}))
	if err != nil {
		panic(err)
	}
	return b
}

// stageOps returns the calls of a stage working through a job: each
// commit applies an input batch, emits an entry on two channels, updates
// a record and logs its state (a snapshot every 50 commits); the outputs
// are trimmed 8 commits behind. One entry, on a third channel, is never
// trimmed (it pins the oldest segment), and a second job is committed to
// and dropped early on (its tombstone must outlive every compaction).
func stageOps(commits int) []storetest.Op {
	in := storetest.Ch("job", "in", "up", "me")
	outs := []transport.ChannelID{storetest.Ch("job", "out", "me", "a"), storetest.Ch("job", "out", "me", "b")}
	stuck := storetest.Ch("job", "stuck", "me", "c")
	var ops []storetest.Op
	commit := func(c *transport.Commit) { ops = append(ops, storetest.Op{Commit: c}) }
	commit(&transport.Commit{Job: "job", Outputs: []transport.Entry{{Channel: stuck, Seq: 1, Rows: rowsOf(3000, "stuck")}}})
	commit(&transport.Commit{Job: "early", Outputs: []transport.Entry{{Channel: storetest.Ch("early", "o", "x", "y"), Seq: 1, Rows: rowsOf(100, "e")}}})
	ops = append(ops, storetest.Op{Drop: "early"})
	for i := uint64(1); i <= uint64(commits); i++ {
		c := &transport.Commit{Job: "job", Inputs: map[transport.ChannelID]uint64{in: i},
			Records: map[string][]byte{"offset": fmt.Append(nil, i)}, State: fmt.Appendf(nil, "delta %d", i)}
		if i%50 == 0 {
			c.State, c.ResetState = fmt.Appendf(nil, "snapshot %d", i), true
		}
		for k, ch := range outs {
			c.Outputs = append(c.Outputs, transport.Entry{Channel: ch, Seq: i, EOF: i == uint64(commits), Rows: rowsOf(1000+500*k, fmt.Sprint(i, "/", k, ";"))})
		}
		commit(c)
		if i > 8 {
			for _, ch := range outs {
				ops = append(ops, storetest.Op{Trim: &storetest.TrimOp{Ch: ch, Seq: i - 8}})
			}
		}
	}
	return ops
}

// TestCompactionBounded: many commits and trims over small segments. The
// disk in use stays within twice the live bytes plus four segments (the
// policy's bound is two: the current one and one of garbage; the janitor
// runs behind a writer that fills a 64 KiB segment every few ms), Load
// matches the model throughout, across an explicit compaction and across
// a reopen, and the dropped job's tombstone survives it all.
func TestCompactionBounded(t *testing.T) {
	const segSize = 64 << 10
	dir := t.TempDir()
	opts := Options{SegmentSize: segSize, IdleAfter: -1}
	s := openWith(t, dir, opts)
	model := transport.NewMemStore()

	// A reader that loads all the time, while segments come and go.
	stop := make(chan struct{})
	var loads atomic.Int64
	var wg sync.WaitGroup
	stopLoads := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopLoads()
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := transport.LoadAll(s); err != nil {
				t.Error(err)
				return
			}
			loads.Add(1)
		}
	})

	ops := stageOps(3000)
	var written, maxDisk int64
	for i, op := range ops {
		storetest.Apply(t, s, []storetest.Op{op})
		storetest.Apply(t, model, []storetest.Op{op})
		if op.Commit != nil {
			written += int64(payloadBytes(op.Commit))
		}
		if i%97 == 0 {
			d := s.Disk()
			maxDisk = max(maxDisk, d.DiskBytes)
			// The janitor runs behind the writer, the more so on a busy
			// machine: the bound must hold once it has caught up.
			testkit.Await(10*time.Second, func() bool { d = s.Disk(); return d.DiskBytes <= 2*d.LiveBytes+4*segSize })
			if bound := 2*d.LiveBytes + 4*segSize; d.DiskBytes > bound {
				t.Fatalf("op %d: %d bytes on disk, %d live: more than %d, 10 s after", i, d.DiskBytes, d.LiveBytes, bound)
			}
		}
		if i%1500 == 0 {
			want, _ := transport.LoadAll(model)
			storetest.CheckLoad(t, s, want)
		}
	}
	stopLoads()
	want, _ := transport.LoadAll(model)
	storetest.CheckLoad(t, s, want)
	if want.Dropped[0] != "early" {
		t.Fatalf("model dropped %v", want.Dropped)
	}
	d := s.Disk()
	t.Logf("%d ops, %d bytes of payload committed, at most %d on disk; %d loads meanwhile; now %+v", len(ops), written, maxDisk, loads.Load(), d)
	if d.Compactions == 0 || d.CopiedBytes == 0 || d.DeletedSegments < 10 {
		t.Fatalf("no compaction happened: %+v", d)
	}

	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	after := s.Disk()
	t.Logf("after Compact: %+v", after)
	storetest.CheckLoad(t, s, want)
	if after.DiskBytes > 2*after.LiveBytes+segSize {
		t.Fatalf("Compact left %d bytes on disk for %d live", after.DiskBytes, after.LiveBytes)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openWith(t, dir, opts)
	defer s.Close()
	storetest.CheckLoad(t, s, want)
	if re := s.Disk(); re.DiskBytes != after.DiskBytes || re.LiveBytes != after.LiveBytes {
		t.Fatalf("reopened: %+v, before the reopen %+v", re, after)
	}
}

func payloadBytes(c *transport.Commit) int {
	n := len(c.State)
	for _, e := range c.Outputs {
		if e.Rows != nil {
			n += len(e.Rows)
		}
	}
	return n
}

// TestIdleShrinks: a job's worth of commits, all trimmed, then silence:
// the store compacts its current segment too and ends up with about its
// live bytes on disk; Load is the same before and after, and after a
// reopen.
func TestIdleShrinks(t *testing.T) {
	dir := t.TempDir()
	// Long enough that no pause between two of the job's commits counts
	// as idle, even on a loaded machine: an idle compaction in the middle
	// of the job leaves less than idleGarbage behind at its end, which
	// the idle rule rightly keeps (seen at 50 ms: 191 KB kept).
	opts := Options{IdleAfter: 400 * time.Millisecond}
	s := openWith(t, dir, opts)
	ops := stageOps(2000)
	// Everything is trimmed at the end, the stuck entry too.
	ops = append(ops,
		storetest.Op{Trim: &storetest.TrimOp{Ch: storetest.Ch("job", "out", "me", "a"), Seq: 2000}},
		storetest.Op{Trim: &storetest.TrimOp{Ch: storetest.Ch("job", "out", "me", "b"), Seq: 2000}},
		storetest.Op{Trim: &storetest.TrimOp{Ch: storetest.Ch("job", "stuck", "me", "c"), Seq: 1}})
	storetest.Apply(t, s, ops)
	model := transport.NewMemStore()
	storetest.Apply(t, model, ops)
	want, _ := transport.LoadAll(model)
	busy := s.Disk()
	testkit.Await(10*time.Second, func() bool { return s.Disk().DiskBytes <= 64<<10 })
	idle := s.Disk()
	t.Logf("after the job: %+v; idle: %+v", busy, idle)
	if idle.DiskBytes > 64<<10 || idle.Segments != 1 {
		t.Fatalf("idle store keeps %d bytes in %d segments", idle.DiskBytes, idle.Segments)
	}
	storetest.CheckLoad(t, s, want)
	s.Close()
	if du := dirBytes(t, dir); du > 64<<10 {
		t.Fatalf("%d bytes in the directory", du)
	}
	s = openWith(t, dir, opts)
	defer s.Close()
	storetest.CheckLoad(t, s, want)
}

// Compaction of segments whose items die while they are being copied:
// commits and trims from several goroutines race the janitor (run with
// -race), and the result is the model's.
func TestCompactionConcurrent(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 16 << 10, IdleAfter: time.Millisecond}
	s := openWith(t, dir, opts)
	var wg sync.WaitGroup
	const goroutines, commits = 4, 300
	for g := range goroutines {
		wg.Go(func() {
			job := fmt.Sprint("job", g)
			ch := storetest.Ch(job, "out", "me", "you")
			for i := uint64(1); i <= commits; i++ {
				c := &transport.Commit{Job: job, Outputs: []transport.Entry{{Channel: ch, Seq: i, Rows: rowsOf(700, job)}},
					Records: map[string][]byte{"i": fmt.Append(nil, i)}, State: fmt.Append(nil, i), ResetState: i%7 == 0}
				if err := s.Commit(c); err != nil {
					t.Error(err)
					return
				}
				if i > 3 {
					if err := s.Trim(ch, i-3); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	img, err := transport.LoadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	check := func(img *transport.Image) {
		t.Helper()
		for g := range goroutines {
			job := fmt.Sprint("job", g)
			j := img.Jobs[job]
			q := j.Outbox[storetest.Ch(job, "out", "me", "you")]
			if len(q) != 3 || q[0].Seq != commits-2 || string(j.Records["i"]) != fmt.Sprint(commits) {
				t.Fatalf("%s: %d entries from %d, record %q", job, len(q), q[0].Seq, j.Records["i"])
			}
			wantState := [][]byte{}
			for i := commits / 7 * 7; i <= commits; i++ {
				wantState = append(wantState, fmt.Append(nil, i))
			}
			if !slices.EqualFunc(j.State, wantState, bytes.Equal) {
				t.Fatalf("%s: state %q", job, j.State)
			}
		}
	}
	check(img)
	t.Logf("%+v", s.Disk())
	s.Close()
	s = openWith(t, dir, opts)
	defer s.Close()
	img, err = transport.LoadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	check(img)
}

// dirBytes returns the apparent size of the files in dir.
func dirBytes(t testing.TB, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// TestCompactedStateEntriesOwned: a compaction copies a job's state
// entries into shared copy records, several entries a record; ReadState
// still hands each entry over as the caller's (storetest.
// StateEntriesOwned), the small ones of a larger record and the large
// ones alike, before and after a reopen.
func TestCompactedStateEntriesOwned(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 4 << 10, IdleAfter: -1}
	s := openWith(t, dir, opts)
	var want [][]byte
	for i := range 60 {
		state := fmt.Appendf(nil, "entry %d", i)
		if i%10 == 0 {
			state = bytes.Repeat(state, 300) // larger than the rest of its copy record
		}
		if err := s.Commit(&transport.Commit{Job: "kept", State: state}); err != nil {
			t.Fatal(err)
		}
		want = append(want, state)
		if err := s.Commit(&transport.Commit{Job: "garbage", State: bytes.Repeat([]byte("g"), 900)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DropJob("garbage"); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if d := s.Disk(); d.Compactions == 0 || d.CopiedBytes == 0 {
		t.Fatalf("no compaction copied the entries: %+v", d)
	}
	storetest.StateEntriesOwned(t, s, "kept", want)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openWith(t, dir, opts)
	defer s.Close()
	storetest.StateEntriesOwned(t, s, "kept", want)
}

// TestCompactedAckedEntriesKept: entries acknowledged, not trimmed, are
// live: compactions copy them forward like any untrimmed entry, and once
// the segments they were committed in are deleted ReadOutbox still reads
// them, rows and all, as Load still leaves them out (storetest.
// AckedOutbox), before and after a reopen.
func TestCompactedAckedEntriesKept(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 4 << 10, IdleAfter: -1}
	s := &placing{Store: openWith(t, dir, opts), at: map[placed]uint64{}}
	a := storetest.CommitAcked(t, s)
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	moved := 0
	for _, e := range s.ix.jobs[a.Ch.Job].outbox[a.Ch] {
		if seg, ok := s.at[placed{a.Ch, e.seq}]; ok && e.seq <= a.Acked && s.files[seg] == nil {
			moved++
		}
	}
	s.mu.Unlock()
	if moved == 0 {
		t.Fatalf("no acknowledged entry was copied out of a deleted segment: %+v", s.Disk())
	}
	t.Logf("%d acknowledged entries copied; %+v", moved, s.Disk())
	a.Check(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := openWith(t, dir, opts)
	defer r.Close()
	a.Check(t, r)
}

// placing is a Store that remembers the segment each entry went to.
type placing struct {
	*Store
	at map[placed]uint64
}

type placed struct {
	ch  transport.ChannelID
	seq uint64
}

func (p *placing) Commit(c *transport.Commit) error {
	if err := p.Store.Commit(c); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range c.Outputs {
		if it, ok := p.ix.entryFrom(e.Channel, e.Seq); ok && it.seq == e.Seq {
			p.at[placed{e.Channel, e.Seq}] = it.seg
		}
	}
	return nil
}
