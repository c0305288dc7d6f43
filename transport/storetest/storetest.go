// Package storetest is a conformance suite for transport.Store
// implementations: it drives a store through sequences of Commit, Trim,
// Acknowledge, DropJob and NextIncarnation and checks Load, and what
// ReadOutbox reads, against hand-written expectations and against
// transport.MemStore, the model, and the numbers NextIncarnation hands
// out (above every one before, across reopens, and at least the floor
// passed, the clock, even when it goes back) against exact expectations.
package storetest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// Op is one call on a store.
type Op struct {
	Commit *transport.Commit
	Trim   *TrimOp
	Ack    *TrimOp // Acknowledge(Ack.Ch, Ack.Seq) when set
	Drop   string  // DropJob(Drop) when set
}

// TrimOp is a Trim call, or an Acknowledge: a channel and its new acked
// mark.
type TrimOp struct {
	Ch  transport.ChannelID
	Seq uint64
}

// Call makes the call op is on s.
func (op Op) Call(s transport.Store) error {
	switch {
	case op.Commit != nil:
		return s.Commit(op.Commit)
	case op.Trim != nil:
		return s.Trim(op.Trim.Ch, op.Trim.Seq)
	case op.Ack != nil:
		return s.Acknowledge(op.Ack.Ch, op.Ack.Seq)
	default:
		return s.DropJob(op.Drop)
	}
}

// Case is a named sequence of calls, the image Load must return after
// them and what ReadOutbox must read of some channels.
type Case struct {
	Name string
	Ops  []Op
	Want *transport.Image
	// Read is, for each channel listed, the entries ReadOutbox reads from
	// seq 1: those Load leaves out (at or below the acked mark) and those
	// it returns.
	Read map[transport.ChannelID][]transport.Entry
}

// TextRows is a RowBatch of one text column, col: a row of each of its
// values.
func TextRows(col *wololov1.TextColumn) *wololov1.RowBatch {
	return &wololov1.RowBatch{Rows: &wololov1.RowBatch_Columns{Columns: &wololov1.ColumnBatch{
		Rows: uint32(len(col.Ends)), Columns: []*wololov1.ValueColumn{{Text: col}},
	}}}
}

// Rows returns a small RowBatch whose content identifies tag.
func Rows(tag string) *wololov1.RowBatch {
	return TextRows(&wololov1.TextColumn{Data: []byte(tag), Ends: []uint32{uint32(len(tag))}})
}

// Ch is a channel of job with the given stream, from sender s to receiver r.
func Ch(job, stream, s, r string) transport.ChannelID {
	return transport.ChannelID{Job: job, Stream: stream, Sender: s, Receiver: r}
}

// Encoded is Rows(tag) encoded, as an Entry holds it.
func Encoded(tag string) []byte { return encode(Rows(tag)) }

// encode is proto.Marshal for rows a test built: it cannot fail.
func encode(rows *wololov1.RowBatch) []byte {
	b, err := proto.Marshal(rows)
	if err != nil {
		panic(err)
	}
	return b
}

// E is an outbox entry with Encoded(tag) (nil rows when tag is empty).
func E(ch transport.ChannelID, seq uint64, eof bool, tag string) transport.Entry {
	e := transport.Entry{Channel: ch, Seq: seq, EOF: eof}
	if tag != "" {
		e.Rows = Encoded(tag)
	}
	return e
}

// Job returns an empty job image, to be filled by the caller.
func Job() *transport.JobImage {
	return &transport.JobImage{
		Watermarks: map[transport.ChannelID]uint64{},
		Reserved:   map[transport.ChannelID]uint64{},
		Acked:      map[transport.ChannelID]uint64{},
		Outbox:     map[transport.ChannelID][]transport.Entry{},
		Records:    map[string][]byte{},
	}
}

var (
	in1  = Ch("j1", "matches", "gw", "f0")
	in2  = Ch("j1", "players", "gw", "f0")
	out1 = Ch("j1", "tokens", "f0", "a0")
	out2 = Ch("j1", "tokens", "f0", "a1")
)

func commit(c transport.Commit) Op { return Op{Commit: &c} }
func trim(ch transport.ChannelID, seq uint64) Op {
	return Op{Trim: &TrimOp{Ch: ch, Seq: seq}}
}
func ack(ch transport.ChannelID, seq uint64) Op {
	return Op{Ack: &TrimOp{Ch: ch, Seq: seq}}
}

func img(dropped []string, jobs map[string]*transport.JobImage) *transport.Image {
	if jobs == nil {
		jobs = map[string]*transport.JobImage{}
	}
	return &transport.Image{Jobs: jobs, Dropped: dropped}
}

// Cases are the table-driven sequences of the suite.
func Cases() []Case {
	var cases []Case
	add := func(name string, want *transport.Image, ops ...Op) {
		cases = append(cases, Case{Name: name, Ops: ops, Want: want})
	}
	// reads sets what ReadOutbox reads in the case added last.
	reads := func(read map[transport.ChannelID][]transport.Entry) { cases[len(cases)-1].Read = read }

	add("empty", img(nil, nil))

	add("empty commit creates the job", img(nil, map[string]*transport.JobImage{"j1": Job()}),
		commit(transport.Commit{Job: "j1"}))

	j := Job()
	j.Watermarks[in1], j.Watermarks[in2] = 3, 1
	j.Reserved[out1], j.Reserved[out2] = 2, 1
	j.Outbox[out1] = []transport.Entry{E(out1, 1, false, "a"), E(out1, 2, false, "b")}
	j.Outbox[out2] = []transport.Entry{E(out2, 1, true, "")}
	j.Records["offset"] = []byte("42")
	j.State = [][]byte{[]byte("s1")}
	add("one commit with everything", img(nil, map[string]*transport.JobImage{"j1": j}),
		commit(transport.Commit{
			Job:     "j1",
			Inputs:  map[transport.ChannelID]uint64{in1: 3, in2: 1},
			Outputs: []transport.Entry{E(out1, 1, false, "a"), E(out1, 2, false, "b"), E(out2, 1, true, "")},
			Records: map[string][]byte{"offset": []byte("42")},
			State:   []byte("s1"),
		}))

	j = Job()
	j.Watermarks[in1], j.Watermarks[in2] = 5, 2
	j.Reserved[out1] = 3
	j.Outbox[out1] = []transport.Entry{E(out1, 1, false, "a"), E(out1, 2, false, "b"), E(out1, 3, false, "c")}
	j.Records["offset"], j.Records["other"] = []byte("7"), []byte("x")
	j.State = [][]byte{[]byte("s1"), []byte("s2"), {}}
	add("commits accumulate; watermarks and records are replaced", img(nil, map[string]*transport.JobImage{"j1": j}),
		commit(transport.Commit{Job: "j1", Inputs: map[transport.ChannelID]uint64{in1: 4}, Outputs: []transport.Entry{E(out1, 1, false, "a")},
			Records: map[string][]byte{"offset": []byte("1"), "other": []byte("x")}, State: []byte("s1")}),
		commit(transport.Commit{Job: "j1", Inputs: map[transport.ChannelID]uint64{in1: 5, in2: 2}, Outputs: []transport.Entry{E(out1, 2, false, "b"), E(out1, 3, false, "c")},
			Records: map[string][]byte{"offset": []byte("7")}, State: []byte("s2")}),
		commit(transport.Commit{Job: "j1", State: []byte{}}), // an empty state change is logged
		commit(transport.Commit{Job: "j1"}),                  // nil State logs nothing
	)

	j = Job()
	j.Reserved[out1], j.Reserved[out2] = 4, 2
	j.Acked[out1], j.Acked[out2] = 2, 9
	j.Outbox[out1] = []transport.Entry{E(out1, 3, false, "c"), E(out1, 4, true, "")}
	add("trim partial, trim all, trim lower keeps the max", img(nil, map[string]*transport.JobImage{"j1": j}),
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(out1, 1, false, "a"), E(out1, 2, false, "b"), E(out2, 1, false, "x")}}),
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(out1, 3, false, "c"), E(out1, 4, true, ""), E(out2, 2, true, "")}}),
		trim(out1, 2),
		trim(out1, 1),
		trim(out2, 9),
	)

	j = Job()
	j.Acked[out1] = 5
	add("trim of a channel without entries sets acked; trim of an unknown job does nothing",
		img(nil, map[string]*transport.JobImage{"j1": j}),
		trim(Ch("nojob", "s", "a", "b"), 3),
		commit(transport.Commit{Job: "j1"}),
		trim(out1, 5),
	)

	j = Job()
	j.State = [][]byte{[]byte("snap"), []byte("d1")}
	j2 := Job()
	j3 := Job()
	j3.State = [][]byte{[]byte("after")}
	add("reset state", img(nil, map[string]*transport.JobImage{"j1": j, "j2": j2, "j3": j3}),
		commit(transport.Commit{Job: "j1", State: []byte("a")}),
		commit(transport.Commit{Job: "j1", State: []byte("b")}),
		commit(transport.Commit{Job: "j1", State: []byte("snap"), ResetState: true}),
		commit(transport.Commit{Job: "j1", State: []byte("d1")}),
		commit(transport.Commit{Job: "j2", State: []byte("a")}),
		commit(transport.Commit{Job: "j2", ResetState: true}), // drops the log
		commit(transport.Commit{Job: "j3", ResetState: true}), // nothing to drop
		commit(transport.Commit{Job: "j3", State: []byte("after")}),
	)

	a, ab, aslash := Ch("a", "s", "x", "y"), Ch("ab", "s", "x", "y"), Ch("a/b", "s", "x", "y")
	jab := Job()
	jab.Watermarks[ab] = 1
	jab.State = [][]byte{[]byte("ab")}
	jas := Job()
	jas.Reserved[aslash] = 1
	jas.Outbox[aslash] = []transport.Entry{E(aslash, 1, false, "as")}
	add("drop job: prefixes of other jobs survive, tombstones sorted",
		img([]string{"a", "never", "zz"}, map[string]*transport.JobImage{"ab": jab, "a/b": jas}),
		commit(transport.Commit{Job: "a", Inputs: map[transport.ChannelID]uint64{a: 1}, Outputs: []transport.Entry{E(a, 1, false, "a")},
			Records: map[string][]byte{"r": []byte("a")}, State: []byte("a")}),
		commit(transport.Commit{Job: "ab", Inputs: map[transport.ChannelID]uint64{ab: 1}, State: []byte("ab")}),
		commit(transport.Commit{Job: "a/b", Outputs: []transport.Entry{E(aslash, 1, false, "as")}}),
		Op{Drop: "zz"},
		Op{Drop: "a"},
		Op{Drop: "never"},
		trim(a, 1), // the job is gone: nothing
	)

	j = Job()
	j.Reserved[out1] = 1
	j.Outbox[out1] = []transport.Entry{E(out1, 1, false, "new")}
	j.State = [][]byte{[]byte("new")}
	add("a job committed after its drop starts afresh and stays in Dropped",
		img([]string{"j1"}, map[string]*transport.JobImage{"j1": j}),
		commit(transport.Commit{Job: "j1", Inputs: map[transport.ChannelID]uint64{in1: 9}, Outputs: []transport.Entry{E(out1, 1, false, "old"), E(out1, 2, false, "old")},
			Records: map[string][]byte{"r": []byte("old")}, State: []byte("old")}),
		trim(out1, 1),
		Op{Drop: "j1"},
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(out1, 1, false, "new")}, State: []byte("new")}),
	)

	// Channels that differ in one component only, and components that are
	// prefixes of one another.
	c1, c2, c3, c4 := Ch("j1", "s", "ab", "c"), Ch("j1", "s", "a", "bc"), Ch("j1", "sa", "b", "c"), Ch("j0", "s", "ab", "c")
	j = Job()
	j.Watermarks[c1], j.Watermarks[c2], j.Watermarks[c3], j.Watermarks[c4] = 1, 2, 3, 4
	j.Reserved[c1], j.Reserved[c2] = 1, 300
	j.Acked[c2] = 256
	j.Outbox[c1] = []transport.Entry{E(c1, 1, false, "c1")}
	j.Outbox[c2] = []transport.Entry{E(c2, 257, false, "257"), E(c2, 300, true, "300")}
	add("channel components do not alias", img(nil, map[string]*transport.JobImage{"j1": j}),
		commit(transport.Commit{Job: "j1", Inputs: map[transport.ChannelID]uint64{c1: 1, c2: 2, c3: 3, c4: 4},
			Outputs: []transport.Entry{E(c1, 1, false, "c1"), E(c2, 255, false, "255"), E(c2, 256, false, "256"), E(c2, 257, false, "257")}}),
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(c2, 300, true, "300")}}),
		trim(c2, 256),
	)

	j = Job()
	j.Reserved[out1], j.Reserved[out2] = 4, 2
	j.Acked[out1], j.Acked[out2] = 2, 2
	j.Outbox[out1] = []transport.Entry{E(out1, 3, false, "c"), E(out1, 4, true, "")}
	add("acknowledge keeps the entries out of Load", img(nil, map[string]*transport.JobImage{"j1": j}),
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(out1, 1, false, "a"), E(out1, 2, false, "b"), E(out2, 1, false, "x")}}),
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(out1, 3, false, "c"), E(out1, 4, true, ""), E(out2, 2, true, "y")}}),
		ack(out1, 2),
		ack(out2, 2), // every entry: no Outbox key
	)
	reads(map[transport.ChannelID][]transport.Entry{
		out1: {E(out1, 1, false, "a"), E(out1, 2, false, "b"), E(out1, 3, false, "c"), E(out1, 4, true, "")},
		out2: {E(out2, 1, false, "x"), E(out2, 2, true, "y")},
	})

	j = Job()
	j.Reserved[out1], j.Reserved[out2] = 5, 4
	j.Acked[out1], j.Acked[out2] = 4, 3
	j.Outbox[out1] = []transport.Entry{E(out1, 5, true, "e")}
	j.Outbox[out2] = []transport.Entry{E(out2, 4, false, "w")}
	add("acknowledge lower keeps the max; trim after acknowledge drops up to its seq",
		img(nil, map[string]*transport.JobImage{"j1": j}),
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(out1, 1, false, "a"), E(out1, 2, false, "b"), E(out1, 3, false, "c"),
			E(out2, 1, false, "x"), E(out2, 2, false, "y")}}),
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(out1, 4, false, ""), E(out1, 5, true, "e"), E(out2, 3, false, "z"), E(out2, 4, false, "w")}}),
		ack(out1, 4),
		ack(out1, 2), // lower: nothing
		trim(out1, 2),
		trim(out1, 1), // lower: nothing
		ack(out2, 1),
		trim(out2, 3), // above the acked mark: raises it
		ack(out2, 2),
	)
	reads(map[transport.ChannelID][]transport.Entry{
		out1: {E(out1, 3, false, "c"), E(out1, 4, false, ""), E(out1, 5, true, "e")},
		out2: {E(out2, 4, false, "w")},
	})

	nojob := Ch("nojob", "s", "a", "b")
	j = Job()
	j.Reserved[out1] = 6
	j.Acked[out1], j.Acked[out2] = 5, 3
	j.Outbox[out1] = []transport.Entry{E(out1, 6, false, "f")}
	add("entries committed at or below the acked mark are kept, not loaded; acknowledge of an unknown job does nothing",
		img(nil, map[string]*transport.JobImage{"j1": j}),
		ack(nojob, 3),
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(out1, 1, false, "a"), E(out1, 2, false, "b")}}),
		ack(out1, 5),
		ack(out2, 3), // a channel without entries: the mark alone
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(out1, 3, false, "c"), E(out1, 4, false, "")}}),
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(out1, 5, false, "e"), E(out1, 6, false, "f")}}),
	)
	reads(map[transport.ChannelID][]transport.Entry{
		out1:  {E(out1, 1, false, "a"), E(out1, 2, false, "b"), E(out1, 3, false, "c"), E(out1, 4, false, ""), E(out1, 5, false, "e"), E(out1, 6, false, "f")},
		out2:  nil,
		nojob: nil,
	})

	gone := Ch("gone", "out", "f0", "a0")
	j = Job()
	j.Reserved[out1] = 1
	j.Outbox[out1] = []transport.Entry{E(out1, 1, false, "new")}
	add("drop job drops acknowledged entries", img([]string{"gone", "j1"}, map[string]*transport.JobImage{"j1": j}),
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(out1, 1, false, "old"), E(out1, 2, false, "old"), E(out1, 3, true, "old")}}),
		commit(transport.Commit{Job: "gone", Outputs: []transport.Entry{E(gone, 1, false, "g"), E(gone, 2, true, "")}}),
		ack(out1, 2),
		ack(gone, 2),
		Op{Drop: "j1"},
		Op{Drop: "gone"},
		commit(transport.Commit{Job: "j1", Outputs: []transport.Entry{E(out1, 1, false, "new")}}),
	)
	reads(map[transport.ChannelID][]transport.Entry{
		out1: {E(out1, 1, false, "new")},
		gone: nil,
	})

	return cases
}

// Run runs the suite against stores made by open; open gets a fresh
// directory for each store (stores that keep nothing on disk ignore it).
func Run(t *testing.T, open func(t *testing.T, dir string) transport.Store) {
	t.Run("cases", func(t *testing.T) {
		for _, c := range Cases() {
			t.Run(c.Name, func(t *testing.T) {
				s := open(t, t.TempDir())
				defer s.Close()
				Apply(t, s, c.Ops)
				CheckLoad(t, s, c.Want)
				checkReads(t, s, c.Read)
				model := transport.NewMemStore()
				Apply(t, model, c.Ops)
				CheckLoad(t, s, mustLoad(t, model))
				CheckOutboxes(t, s, model)
			})
		}
	})
	t.Run("random sequences match the model", func(t *testing.T) {
		for seed := range uint64(4) {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				s := open(t, t.TempDir())
				defer s.Close()
				model := transport.NewMemStore()
				ops := RandomOps(seed, 300)
				for i, op := range ops {
					Apply(t, s, []Op{op})
					Apply(t, model, []Op{op})
					if i%25 == 24 || i == len(ops)-1 {
						CheckLoad(t, s, mustLoad(t, model))
						CheckOutboxes(t, s, model)
					}
				}
			})
		}
	})
	t.Run("incarnations increase", func(t *testing.T) {
		s := open(t, t.TempDir())
		defer s.Close()
		if last := incarnations(t, s, 5, 0); last != 5 {
			t.Fatalf("five incarnations without a floor end at %d, want 5", last)
		}
	})
	t.Run("incarnations floored", func(t *testing.T) {
		s := open(t, t.TempDir())
		defer s.Close()
		takeIncarnations(t, s, floorSteps)
	})
	t.Run("incarnations exhausted", func(t *testing.T) {
		// The largest number there is can be handed out once; after it
		// the store refuses rather than wrap around to a small one.
		s := open(t, t.TempDir())
		defer s.Close()
		takeIncarnations(t, s, []incarnationStep{{math.MaxUint64, math.MaxUint64}})
		if n, err := s.NextIncarnation(0); err == nil {
			t.Fatalf("incarnation %d after the largest one", n)
		}
	})
	t.Run("stats", func(t *testing.T) {
		s := open(t, t.TempDir())
		defer s.Close()
		for i := range 10 {
			if err := s.Commit(&transport.Commit{Job: "j1", Inputs: map[transport.ChannelID]uint64{in1: uint64(i + 1)}, State: []byte("x")}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Trim(out1, 1); err != nil {
			t.Fatal(err)
		}
		st := s.Stats()
		// MemStore counts no bytes; durable stores check Bytes themselves.
		if st.Commits != 10 || st.Bytes < 0 || st.Syncs <= 0 {
			t.Fatalf("stats after 10 commits: %+v", st)
		}
	})
	t.Run("concurrent commits", func(t *testing.T) { testConcurrent(t, open) })
	t.Run("state read an entry at a time", func(t *testing.T) { testReadState(t, open) })
	t.Run("state entries are the caller's", func(t *testing.T) { testStateEntriesOwned(t, open) })
	t.Run("outbox read an entry at a time", func(t *testing.T) {
		s := open(t, t.TempDir())
		defer s.Close()
		CommitAcked(t, s).Check(t, s)
	})
}

// RunReopen runs the cases with a Close and a fresh open of the same
// directory between the calls and Load; for stores that persist.
func RunReopen(t *testing.T, open func(t *testing.T, dir string) transport.Store) {
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir)
			Apply(t, s, c.Ops)
			before := mustLoad(t, s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = open(t, dir)
			defer s.Close()
			CheckLoad(t, s, c.Want)
			CheckLoad(t, s, before)
			checkReads(t, s, c.Read)
			model := transport.NewMemStore()
			Apply(t, model, c.Ops)
			CheckOutboxes(t, s, model)
		})
	}
	t.Run("outbox read across a reopen", func(t *testing.T) {
		dir := t.TempDir()
		s := open(t, dir)
		a := CommitAcked(t, s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = open(t, dir)
		defer s.Close()
		a.Check(t, s)
	})
	t.Run("incarnations across reopens", func(t *testing.T) {
		// Three per open, four opens: 1..12, each above the one before.
		dir := t.TempDir()
		var last uint64
		for range 4 {
			s := open(t, dir)
			last = incarnations(t, s, 3, last)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if last != 12 {
			t.Fatalf("last incarnation %d, want 12", last)
		}
	})
	t.Run("floored incarnations across reopens", func(t *testing.T) {
		// One step per open: the floor taken, kept when the clock goes
		// back, counted up from when it stands still.
		dir := t.TempDir()
		for _, step := range floorSteps {
			s := open(t, dir)
			takeIncarnations(t, s, []incarnationStep{step})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("random sequence across reopens", func(t *testing.T) {
		dir := t.TempDir()
		model := transport.NewMemStore()
		ops := RandomOps(99, 400)
		var lastInc uint64
		for len(ops) > 0 {
			s := open(t, dir)
			n, err := s.NextIncarnation(transport.ClockIncarnation(time.Now()))
			if err != nil {
				t.Fatal(err)
			}
			if n <= lastInc {
				t.Fatalf("incarnation %d after reopen, was %d", n, lastInc)
			}
			lastInc = n
			CheckLoad(t, s, mustLoad(t, model))
			k := min(len(ops), 70)
			Apply(t, s, ops[:k])
			Apply(t, model, ops[:k])
			ops = ops[k:]
			CheckLoad(t, s, mustLoad(t, model))
			CheckOutboxes(t, s, model)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// incarnationStep is one NextIncarnation call: the floor passed (the
// start's clock) and the number it must return.
type incarnationStep struct{ atLeast, want uint64 }

// floorSteps are starts of one store whose clock floors their numbers: a
// store that counted 1 and 2 meets a clock far ahead (a number such as
// ClockIncarnation's), starts twice within its millisecond, sees the clock
// go back (or no floor at all), and then jump ahead again. Every number is
// above the one before.
var floorSteps = []incarnationStep{
	{0, 1}, {0, 2},
	{1_700_000_000_000, 1_700_000_000_000},
	{1_700_000_000_000, 1_700_000_000_001},
	{1_600_000_000_000, 1_700_000_000_002},
	{0, 1_700_000_000_003},
	{1_800_000_000_000, 1_800_000_000_000},
}

// takeIncarnations takes one incarnation from s per step, with the step's
// floor, and checks that each is the step's number.
func takeIncarnations(t *testing.T, s transport.Store, steps []incarnationStep) {
	t.Helper()
	for i, step := range steps {
		n, err := s.NextIncarnation(step.atLeast)
		if err != nil {
			t.Fatalf("step %d: NextIncarnation(%d): %v", i, step.atLeast, err)
		}
		if n != step.want {
			t.Fatalf("step %d: NextIncarnation(%d) = %d, want %d", i, step.atLeast, n, step.want)
		}
	}
}

// incarnations takes n incarnations from s without a floor, each above the
// one before, the first above last, and returns the last one.
func incarnations(t *testing.T, s transport.Store, n int, last uint64) uint64 {
	t.Helper()
	for range n {
		inc, err := s.NextIncarnation(0)
		if err != nil {
			t.Fatal(err)
		}
		if inc <= last {
			t.Fatalf("incarnation %d after %d", inc, last)
		}
		last = inc
	}
	return last
}

// Apply performs ops on s, failing t on an error.
func Apply(t testing.TB, s transport.Store, ops []Op) {
	t.Helper()
	for i, op := range ops {
		if err := op.Call(s); err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
	}
}

// mustLoad is transport.LoadAll of s: its state logs too, as ReadState
// reads them.
func mustLoad(t testing.TB, s transport.Store) *transport.Image {
	t.Helper()
	img, err := transport.LoadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// CheckLoad fails t unless s.Load returns want (its state logs read by
// ReadState, Load's own none), each channel's outbox in it is what
// ReadOutbox reads above the channel's acked mark, and each of want's
// records reads back alone (transport.ReadRecord: the store's own Record
// where it has one), a record it has not as absent.
func CheckLoad(t testing.TB, s transport.Store, want *transport.Image) {
	t.Helper()
	loaded, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	for id, j := range loaded.Jobs {
		if j.State != nil {
			t.Fatalf("Load returned job %s's state log (%d entries): ReadState reads it", id, len(j.State))
		}
		// Every channel given an entry has a reserved mark; one whose
		// entries are all at or below its acked mark has no Outbox key.
		chans := slices.Collect(maps.Keys(j.Reserved))
		for ch := range j.Outbox {
			if _, ok := j.Reserved[ch]; !ok {
				chans = append(chans, ch)
			}
		}
		for _, ch := range chans {
			if j.Acked[ch] == math.MaxUint64 {
				continue // nothing is above it
			}
			// MemStore loads entries in commit order, the others in seq order.
			q := slices.Clone(j.Outbox[ch])
			slices.SortStableFunc(q, func(a, b transport.Entry) int { return cmp.Compare(a.Seq, b.Seq) })
			if d := entriesDiff(ReadOutbox(t, s, ch, j.Acked[ch]+1), q); d != "" {
				t.Fatalf("job %s: ReadOutbox of %s above its acked mark %d differs from Load's outbox: %s", id, ch, j.Acked[ch], d)
			}
		}
	}
	got := mustLoad(t, s)
	if d := Diff(got, want); d != "" {
		t.Fatalf("Load differs from the expected image:\n%s", d)
	}
	for id, j := range want.Jobs {
		for name, v := range j.Records {
			r, ok, err := transport.ReadRecord(s, id, name)
			if err != nil || !ok || !bytes.Equal(r, v) {
				t.Fatalf("record %s of job %s read alone: %q, %v, %v; want %q", name, id, r, ok, err, v)
			}
		}
		if r, ok, err := transport.ReadRecord(s, id, "no such record"); err != nil || ok {
			t.Fatalf("a record job %s has not, read alone: %q, %v, %v", id, r, ok, err)
		}
	}
}

// Diff describes the differences between two images, "" if they are
// equal. Nil and empty maps, slices and values are equal, but for the
// outbox: a channel without entries above its acked mark must have no
// key in either. Rows compare byte for byte.
func Diff(got, want *transport.Image) string {
	var d []string
	add := func(format string, args ...any) { d = append(d, fmt.Sprintf(format, args...)) }
	if !slices.Equal(got.Dropped, want.Dropped) {
		add("Dropped: got %q, want %q", got.Dropped, want.Dropped)
	}
	for _, id := range unionKeys(got.Jobs, want.Jobs) {
		g, w := got.Jobs[id], want.Jobs[id]
		switch {
		case g == nil:
			add("job %q missing", id)
			continue
		case w == nil:
			add("job %q unexpected", id)
			continue
		}
		diffU64(add, id+" Watermarks", g.Watermarks, w.Watermarks)
		diffU64(add, id+" Reserved", g.Reserved, w.Reserved)
		diffU64(add, id+" Acked", g.Acked, w.Acked)
		for _, name := range unionKeys(g.Records, w.Records) {
			gv, gok := g.Records[name]
			wv, wok := w.Records[name]
			if gok != wok || !bytes.Equal(gv, wv) {
				add("job %q record %q: got %q (present %v), want %q (present %v)", id, name, gv, gok, wv, wok)
			}
		}
		if len(g.State) != len(w.State) {
			add("job %q state log: got %d entries %q, want %d %q", id, len(g.State), g.State, len(w.State), w.State)
		} else {
			for i := range g.State {
				if !bytes.Equal(g.State[i], w.State[i]) {
					add("job %q state[%d]: got %q, want %q", id, i, g.State[i], w.State[i])
				}
			}
		}
		for _, ch := range unionKeys(g.Outbox, w.Outbox) {
			_, gok := g.Outbox[ch]
			_, wok := w.Outbox[ch]
			if gok != wok {
				add("job %q outbox %s: key present %v, want %v", id, ch, gok, wok)
			}
			if ed := entriesDiff(g.Outbox[ch], w.Outbox[ch]); ed != "" {
				add("job %q outbox %s: %s", id, ch, ed)
			}
		}
	}
	return strings.Join(d, "\n")
}

// entriesDiff describes how the entries got differ from want, "" if they
// do not: Channel, Seq, EOF and Rows compared, nil and empty Rows equal.
// Count is not: the stores on disk do not keep it (transport.Entry).
func entriesDiff(got, want []transport.Entry) string {
	if len(got) != len(want) {
		return fmt.Sprintf("got %d entries %v, want %d %v", len(got), seqs(got), len(want), seqs(want))
	}
	var d []string
	for i := range got {
		g, w := got[i], want[i]
		if g.Channel != w.Channel || g.Seq != w.Seq || g.EOF != w.EOF || !bytes.Equal(g.Rows, w.Rows) {
			d = append(d, fmt.Sprintf("entry %d: got %s, want %s", i, entryString(g), entryString(w)))
		}
	}
	return strings.Join(d, "; ")
}

// entryString shows an entry in a few words, its rows cut short.
func entryString(e transport.Entry) string {
	return fmt.Sprintf("{%s #%d eof %v, %d bytes of rows %.24q}", e.Channel, e.Seq, e.EOF, len(e.Rows), e.Rows)
}

// ReadOutbox returns what s.ReadOutbox(ch, from) hands over, failing t on
// an error.
func ReadOutbox(t testing.TB, s transport.Store, ch transport.ChannelID, from uint64) []transport.Entry {
	t.Helper()
	var got []transport.Entry
	if err := s.ReadOutbox(ch, from, func(e transport.Entry) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatalf("ReadOutbox(%s, %d): %v", ch, from, err)
	}
	return got
}

// CheckOutboxes fails t unless s reads with ReadOutbox, from seq 1, what
// model reads, on every channel that has a reserved mark in either (every
// channel given an entry and not dropped since): the entries Load leaves
// out as well as those it returns.
func CheckOutboxes(t testing.TB, s, model transport.Store) {
	t.Helper()
	got, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	want, err := model.Load()
	if err != nil {
		t.Fatal(err)
	}
	chans := map[transport.ChannelID]bool{}
	for _, img := range []*transport.Image{got, want} {
		for _, j := range img.Jobs {
			for ch := range j.Reserved {
				chans[ch] = true
			}
		}
	}
	for ch := range chans {
		if d := entriesDiff(ReadOutbox(t, s, ch, 1), ReadOutbox(t, model, ch, 1)); d != "" {
			t.Fatalf("ReadOutbox of %s differs from the model's: %s", ch, d)
		}
	}
}

// checkReads fails t unless ReadOutbox reads, from seq 1, the entries
// read lists for each of its channels.
func checkReads(t testing.TB, s transport.Store, read map[transport.ChannelID][]transport.Entry) {
	t.Helper()
	for ch, want := range read {
		if d := entriesDiff(ReadOutbox(t, s, ch, 1), want); d != "" {
			t.Fatalf("ReadOutbox of %s: %s", ch, d)
		}
	}
}

func seqs(es []transport.Entry) []uint64 {
	out := make([]uint64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

func diffU64(add func(string, ...any), what string, g, w map[transport.ChannelID]uint64) {
	for _, ch := range unionKeys(g, w) {
		gv, gok := g[ch]
		wv, wok := w[ch]
		if gok != wok || gv != wv {
			add("%s[%s]: got %d (present %v), want %d (present %v)", what, ch, gv, gok, wv, wok)
		}
	}
}

func unionKeys[K comparable, V any](a, b map[K]V) []K {
	var out []K
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}

// RandomOps returns n calls as a runtime would make them: per output
// channel, entries numbered on from the highest reserved; trims and
// acknowledgements at or below it (or one above, so that the next entry
// is committed at the acked mark); occasional resets and drops.
func RandomOps(seed uint64, n int) []Op {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	jobs := []string{"q1", "q2", "q2x"}
	chans := func(job string) []transport.ChannelID {
		return []transport.ChannelID{Ch(job, "m", "gw", "f0"), Ch(job, "m", "gw", "f1"), Ch(job, "t", "f0", "agg")}
	}
	reserved := map[transport.ChannelID]uint64{}
	wm := map[transport.ChannelID]uint64{}
	var ops []Op
	for i := range n {
		job := jobs[r.IntN(len(jobs))]
		cs := chans(job)
		switch p := r.IntN(100); {
		case p < 3:
			ops = append(ops, Op{Drop: job})
			for _, ch := range cs {
				delete(reserved, ch)
				delete(wm, ch)
			}
		case p < 25:
			ch := cs[r.IntN(len(cs))]
			op := &TrimOp{Ch: ch, Seq: uint64(r.IntN(int(reserved[ch]) + 2))}
			if p < 16 {
				ops = append(ops, Op{Trim: op})
			} else {
				ops = append(ops, Op{Ack: op})
			}
		default:
			c := &transport.Commit{Job: job, Inputs: map[transport.ChannelID]uint64{}, Records: map[string][]byte{}}
			for range r.IntN(3) {
				ch := cs[r.IntN(2)]
				wm[ch]++
				c.Inputs[ch] = wm[ch]
			}
			for range r.IntN(4) {
				ch := cs[r.IntN(len(cs))]
				reserved[ch]++
				tag := fmt.Sprintf("%s#%d@%d", ch, reserved[ch], i)
				if r.IntN(5) == 0 {
					tag = ""
				}
				c.Outputs = append(c.Outputs, E(ch, reserved[ch], r.IntN(8) == 0, tag))
			}
			if r.IntN(3) == 0 {
				c.Records[fmt.Sprint("rec", r.IntN(4))] = fmt.Appendf(nil, "v%d", i)
			}
			if r.IntN(2) == 0 {
				c.State = fmt.Appendf(nil, "state %d", i)
			}
			c.ResetState = r.IntN(10) == 0
			ops = append(ops, Op{Commit: c})
		}
	}
	return ops
}

// testConcurrent commits from several goroutines, some to their own job
// and some to a shared one, and checks that nothing is lost and that each
// goroutine's commits to the shared job appear in its order.
func testConcurrent(t *testing.T, open func(t *testing.T, dir string) transport.Store) {
	const goroutines, commits = 8, 40
	s := open(t, t.TempDir())
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			own := fmt.Sprint("own", g)
			in := Ch(own, "in", "x", "y")
			out := Ch(own, "out", "y", "z")
			sharedOut := Ch("shared", "out", fmt.Sprint("g", g), "z")
			for i := 1; i <= commits; i++ {
				c := &transport.Commit{Job: own, Inputs: map[transport.ChannelID]uint64{in: uint64(i)},
					Outputs: []transport.Entry{E(out, uint64(i), false, fmt.Sprint(i))}, State: fmt.Append(nil, i)}
				if err := s.Commit(c); err != nil {
					errs <- err
					return
				}
				c = &transport.Commit{Job: "shared", Outputs: []transport.Entry{E(sharedOut, uint64(i), false, "")},
					State: fmt.Appendf(nil, "%d:%d", g, i)}
				if err := s.Commit(c); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := mustLoad(t, s)
	for g := range goroutines {
		j := got.Jobs[fmt.Sprint("own", g)]
		if j == nil {
			t.Fatalf("job own%d missing", g)
		}
		out := Ch(fmt.Sprint("own", g), "out", "y", "z")
		if len(j.Outbox[out]) != commits || len(j.State) != commits || j.Watermarks[Ch(fmt.Sprint("own", g), "in", "x", "y")] != commits {
			t.Fatalf("job own%d: %d entries, %d states, watermarks %v", g, len(j.Outbox[out]), len(j.State), j.Watermarks)
		}
		for i, st := range j.State {
			if string(st) != fmt.Sprint(i+1) {
				t.Fatalf("job own%d state[%d] = %q", g, i, st)
			}
		}
	}
	shared := got.Jobs["shared"]
	if shared == nil || len(shared.State) != goroutines*commits {
		t.Fatalf("shared job: %+v", shared)
	}
	next := map[int]int{}
	for _, st := range shared.State {
		var g, i int
		if _, err := fmt.Sscanf(string(st), "%d:%d", &g, &i); err != nil {
			t.Fatal(err)
		}
		if i != next[g]+1 {
			t.Fatalf("shared state log: goroutine %d commit %d after %d", g, i, next[g])
		}
		next[g] = i
	}
	if st := s.Stats(); st.Commits != 2*goroutines*commits {
		t.Fatalf("stats: %+v, want %d commits", st, 2*goroutines*commits)
	}
}

// testReadState reads a long state log with ReadState: its entries in
// commit order from the last reset, whatever their sizes; an error of
// each stops the reading and comes back as is; a job dropped or never
// committed has no entries.
func testReadState(t *testing.T, open func(t *testing.T, dir string) transport.Store) {
	s := open(t, t.TempDir())
	defer s.Close()
	entry := func(i int) []byte {
		return bytes.Repeat(fmt.Appendf(nil, "entry %d;", i), 1+i%7*200)
	}
	var want [][]byte
	for i := range 300 {
		c := &transport.Commit{Job: "long", State: entry(i), ResetState: i == 20}
		if i%3 == 0 {
			c.Outputs = []transport.Entry{E(out1, uint64(i+1), false, fmt.Sprint(i))}
		}
		if err := s.Commit(c); err != nil {
			t.Fatal(err)
		}
		if c.ResetState {
			want = nil
		}
		want = append(want, c.State)
		if err := s.Commit(&transport.Commit{Job: "other", State: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(&transport.Commit{Job: "gone", State: []byte("g")}); err != nil {
		t.Fatal(err)
	}
	if err := s.DropJob("gone"); err != nil {
		t.Fatal(err)
	}
	i := 0
	err := s.ReadState("long", func(e []byte) error {
		if i >= len(want) || !bytes.Equal(e, want[i]) {
			return fmt.Errorf("entry %d: %d bytes %.20q, want the %d of %.20q", i, len(e), e, len(want[min(i, len(want)-1)]), want[min(i, len(want)-1)])
		}
		i++
		return nil
	})
	if err != nil || i != len(want) {
		t.Fatalf("ReadState: %d entries, %v; want %d", i, err, len(want))
	}
	stop := errors.New("stop")
	calls := 0
	if err := s.ReadState("long", func([]byte) error { calls++; return stop }); err != stop || calls != 1 {
		t.Fatalf("an error of each: %d calls, ReadState returned %v; want 1 call and the error as is", calls, err)
	}
	for _, job := range []string{"gone", "never"} {
		if err := s.ReadState(job, func(e []byte) error { return fmt.Errorf("entry %q", e) }); err != nil {
			t.Fatalf("job %s: %v, want no entries", job, err)
		}
	}
}

// testStateEntriesOwned commits state logs whose entries lie in their
// records in different ways (alone, beside larger outbox entries, many
// of them small) and checks with StateEntriesOwned that what ReadState
// hands over is the caller's.
func testStateEntriesOwned(t *testing.T, open func(t *testing.T, dir string) transport.Store) {
	big := strings.Repeat("rows of the step ", 4096)
	cases := []struct {
		name    string
		entries int
		state   func(i int) []byte
		outputs string // the rows each commit also emits; "" for none
	}{
		{"alone", 6, func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 3000+i) }, ""},
		{"beside larger outbox entries", 6, func(i int) []byte { return fmt.Appendf(nil, "delta %d", i) }, big},
		{"larger than the outbox entries", 6, func(i int) []byte { return bytes.Repeat([]byte{byte('k' + i)}, 70000) }, "x"},
		{"many small ones", 200, func(i int) []byte { return fmt.Appendf(nil, "s%d", i) }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := open(t, t.TempDir())
			defer s.Close()
			ch := Ch("owned", "out", "a", "b")
			var want [][]byte
			for i := range c.entries {
				cm := &transport.Commit{Job: "owned", State: c.state(i)}
				if c.outputs != "" {
					cm.Outputs = []transport.Entry{E(ch, uint64(i+1), false, c.outputs)}
				}
				if err := s.Commit(cm); err != nil {
					t.Fatal(err)
				}
				want = append(want, cm.State)
			}
			StateEntriesOwned(t, s, "owned", want)
		})
	}
}

// StateEntriesOwned reads job's state log, which must be want, with
// ReadState and checks that its entries are the caller's: every entry
// kept without a copy still holds its bytes once the reading is over
// (the store did not read the next ones into it), appending to one as it
// is handed over (writing its capacity past its end) changes none of the
// others, and writing over the kept
// entries changes nothing the store holds (a second ReadState reads want
// again). For the suite and for a store's own tests that lay entries out
// in other ways (after a compaction, say).
func StateEntriesOwned(t *testing.T, s transport.Store, job string, want [][]byte) {
	t.Helper()
	var kept [][]byte
	err := s.ReadState(job, func(e []byte) error {
		kept = append(kept, e)
		room := e[len(e):cap(e)] // where an append to e writes
		for i := range room {
			room[i] = 0xee
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ReadState: %v", err)
	}
	checkEntries(t, "the entries kept from the first read", kept, want)
	for _, e := range kept {
		for i := range e {
			e[i] = 0xff
		}
	}
	var again [][]byte
	err = s.ReadState(job, func(e []byte) error {
		again = append(again, bytes.Clone(e))
		return nil
	})
	if err != nil {
		t.Fatalf("ReadState again: %v", err)
	}
	checkEntries(t, "a second read, after the first one's entries were written over", again, want)
}

// checkEntries fails unless got is want, entry by entry.
func checkEntries(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: entry %d is %d bytes %.20q, want %d bytes %.20q", what, i, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
}

// GroupCommit commits from 8 goroutines at once and checks, through
// Stats, that all 400 commits are counted and that they shared syncs.
func GroupCommit(t *testing.T, s transport.Store) {
	t.Helper()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			ch := Ch("j", "s", "a", fmt.Sprint(g))
			for i := 1; i <= 50; i++ {
				if err := s.Commit(&transport.Commit{Job: "j", Outputs: []transport.Entry{E(ch, uint64(i), false, "x")}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	t.Logf("%+v", st)
	if st.Commits != 400 || st.Syncs >= st.Commits {
		t.Fatalf("8 goroutines: %+v, want 400 commits sharing syncs", st)
	}
}

// LargeCommit commits three batches of 7 MiB at once (more than a segment
// or half a memtable), then a small commit, and checks the image before
// and after a reopen: a large commit is as atomic and durable as any.
func LargeCommit(t *testing.T, open func(t *testing.T, dir string) transport.Store) {
	t.Helper()
	dir := t.TempDir()
	s := open(t, dir)
	ch := Ch("j", "s", "a", "b")
	big := func(i int) []byte {
		data := bytes.Repeat([]byte{byte('a' + i)}, 7<<20)
		return encode(TextRows(&wololov1.TextColumn{Data: data, Ends: []uint32{uint32(len(data))}}))
	}
	c := &transport.Commit{Job: "j", Inputs: map[transport.ChannelID]uint64{ch: 1}, State: []byte("s")}
	for i := range 3 {
		c.Outputs = append(c.Outputs, transport.Entry{Channel: ch, Seq: uint64(i + 1), Rows: big(i)})
	}
	if err := s.Commit(c); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(&transport.Commit{Job: "j", Inputs: map[transport.ChannelID]uint64{ch: 2}, State: []byte("t")}); err != nil {
		t.Fatal(err)
	}
	want := Job()
	want.Watermarks[ch] = 2
	want.Reserved[ch] = 3
	want.Outbox[ch] = c.Outputs
	want.State = [][]byte{[]byte("s"), []byte("t")}
	wantImg := &transport.Image{Jobs: map[string]*transport.JobImage{"j": want}}
	CheckLoad(t, s, wantImg)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	defer s.Close()
	CheckLoad(t, s, wantImg)
}

// StatsAndClosed makes five synced commits on s and checks its counters,
// then closes it twice (the second Close is no error) and checks that
// every method after Close returns closed (errors.Is).
func StatsAndClosed(t *testing.T, s transport.Store, closed error) {
	t.Helper()
	ch := Ch("j", "s", "a", "b")
	for i := range 5 {
		if err := s.Commit(&transport.Commit{Job: "j", Outputs: []transport.Entry{E(ch, uint64(i+1), false, "rows")}}); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Commits != 5 || st.Bytes < 5*20 || st.Syncs < 5 {
		t.Fatalf("stats after 5 sequential synced commits: %+v", st)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for name, err := range map[string]error{
		"Commit":      s.Commit(&transport.Commit{Job: "j"}),
		"Trim":        s.Trim(ch, 1),
		"Acknowledge": s.Acknowledge(ch, 1),
		"Drop":        s.DropJob("j"),
		"Load":        func() error { _, err := s.Load(); return err }(),
		"ReadOutbox":  s.ReadOutbox(ch, 1, func(transport.Entry) error { return nil }),
		"Inc":         func() error { _, err := s.NextIncarnation(0); return err }(),
	} {
		if !errors.Is(err, closed) {
			t.Errorf("%s after Close: %v, want %v", name, err, closed)
		}
	}
}
