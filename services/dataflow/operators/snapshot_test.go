package operators

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// taskSpec is the operator of a task of the default plan.
func taskSpec(t testing.TB, task string) stage.Spec {
	t.Helper()
	top := deploy.Default()
	st, ok := top.Stage(task)
	if !ok {
		t.Fatalf("no task %s in the default plan", task)
	}
	spec, err := SpecFor(top, st)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// call is one call a runtime makes on an operator.
type call struct {
	apply *input
	end   string // EndStream of this stream, when apply is nil
}

// play makes the calls on op, emitting into out.
func play(t *testing.T, op stage.Operator, calls []call, out *fakeEmitter) {
	t.Helper()
	for i, c := range calls {
		if c.apply != nil {
			apply(t, op, out, *c.apply)
		} else if err := op.(stage.StreamEnder).EndStream(c.end, out); err != nil {
			t.Fatalf("call %d: EndStream(%s): %v", i, c.end, err)
		}
	}
}

// finish calls Finish and returns everything op emitted into out.
func finish(t *testing.T, op stage.Operator, out *fakeEmitter) []string {
	t.Helper()
	if err := op.Finish(out); err != nil {
		t.Fatal(err)
	}
	return out.take()
}

// run makes the calls on op and then Finish, returning what it emitted.
func run(t *testing.T, op stage.Operator, calls []call) []string {
	out := &fakeEmitter{}
	play(t, op, calls, out)
	return finish(t, op, out)
}

// snapshotAt runs calls[:cut], snapshots, restores into a new operator and
// runs the rest there; it returns what both emitted, in order.
func snapshotAt(t *testing.T, spec stage.Spec, calls []call, cut int) []string {
	t.Helper()
	first, out := spec.New(), &fakeEmitter{}
	play(t, first, calls[:cut], out)
	snap, ok := first.(stage.Snapshotter)
	if !ok {
		t.Fatalf("%T cannot snapshot", first)
	}
	// A snapshot is appended to what the buffer holds, which stays.
	const prefix = "before the snapshot"
	full, err := snap.AppendSnapshot([]byte(prefix))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(full), prefix) {
		t.Fatalf("AppendSnapshot overwrote what came before it: %q", full[:len(prefix)])
	}
	state := full[len(prefix):]
	second := spec.New()
	if err := second.(stage.Snapshotter).Restore(state); err != nil {
		t.Fatalf("restore after call %d: %v", cut, err)
	}
	play(t, second, calls[cut:], out)
	return finish(t, second, out)
}

// TestTasksSnapshotAnywhere: both tasks of the default plan, snapshotted
// after any call and restored into a new operator, emit what one that ran
// straight through emits.
func TestTasksSnapshotAnywhere(t *testing.T) {
	in := func(stream string, rows input) call { rows.stream = stream; return call{apply: &rows} }
	shard := []call{
		in(Players, input{rows: playerBatch(t,
			pr{"m1", "Franks", "1200", T}, pr{"m1", "Huns", "1900", F},
			pr{"m2", "Celts", "1500", T}, pr{"m2", "Celts", "123456789012345678.5", F},
			pr{"m5", "Goths", "1100", T},
			pr{"m3", "Mayans", "2100", T})}),
		in(Matches, input{rows: matchBatch(t,
			mr{"m1", "RM_1v1", "arena", "eastus", F, "2100", 9000},
			mr{"m2", "RM_TEAM", "islands", "koreacentral", F, "2300", 8000},
			mr{"m3", "RM_TEAM", "islands", "westus", X, "", -1})}),
		in(Players, input{rows: playerBatch(t, pr{"m3", "Mayans", "2200", F}, pr{"m4", "Goths", "", X})}),
		{end: Matches},
		in(Players, input{rows: playerBatch(t, pr{"m5", "Britons", "2000", F}, pr{"m1", "", "1000", T})}),
		{end: Players},
	}
	gateway := []call{
		in(Q1Tokens, input{rows: tokenBatch("m9", "m1")}),
		in(Q3Partials, input{rows: civBatch(cr{"Franks", 1, 2}, cr{"Huns", 0, 1})}),
		{end: Q1Tokens},
		in(Q4Partials, input{rows: civBatch(cr{"Celts", 0, 3})}),
		in(Q2Tokens, input{rows: tokenBatch("m2")}),
		{end: Q2Tokens},
		in(Q3Partials, input{rows: civBatch(cr{"Franks", 2, 2})}),
		{end: Q3Partials},
		{end: Q4Partials},
	}
	for _, c := range []struct {
		task  string
		calls []call
	}{{"shard", shard}, {"gateway", gateway}} {
		spec := taskSpec(t, c.task)
		want := run(t, spec.New(), c.calls)
		if len(want) < 4 {
			t.Fatalf("%s: the straight run emitted only %q; the test proves little", c.task, want)
		}
		t.Logf("%s emits %q", c.task, want)
		for cut := 0; cut <= len(c.calls); cut++ {
			sameCalls(t, fmt.Sprintf("%s restored after call %d", c.task, cut), snapshotAt(t, spec, c.calls, cut), want)
		}
	}
}

// FuzzSnapshotRestore: no bytes make a Restore panic.
func FuzzSnapshotRestore(f *testing.F) {
	for _, task := range []string{"shard", "gateway"} {
		spec := taskSpec(f, task)
		state, err := spec.New().(stage.Snapshotter).AppendSnapshot(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(task == "shard", state)
	}
	f.Add(true, []byte{1, 0, 0, 1, 3, 0xff})
	shard, gateway := taskSpec(f, "shard"), taskSpec(f, "gateway")
	f.Fuzz(func(t *testing.T, isShard bool, state []byte) {
		spec := gateway
		if isShard {
			spec = shard
		}
		_ = spec.New().(stage.Snapshotter).Restore(state)
		for _, op := range []stage.Snapshotter{NewQ2Grouper(), NewJoiner(Q3Matches, Q3Players, Q3Partials), NewResults()} {
			_ = op.Restore(state)
		}
	})
}

// TestQ2SnapshotVersion1StillReads: a grouper snapshot in the first
// format (each token inline with its group), as a store written by an
// older build holds it, restores to the same state as today's format.
func TestQ2SnapshotVersion1StillReads(t *testing.T) {
	g := NewQ2Grouper()
	wide, _ := schema.ParseNumber([]byte("123456789012345678901234567890.5"))
	low, _ := schema.ParseNumber([]byte("1100"))
	high, _ := schema.ParseNumber([]byte("1900.25"))
	for _, p := range []batch.Player{
		{Match: []byte("m-weaker-won"), Rating: low, HasRating: true, Winner: batch.True},
		{Match: []byte("m-weaker-won"), Rating: high, HasRating: true, Winner: batch.False},
		{Match: []byte("m-wide"), Rating: low, HasRating: true, Winner: batch.True},
		{Match: []byte("m-wide"), Rating: wide, HasRating: true, Winner: batch.False},
		{Match: []byte("m-three"), Rating: low, HasRating: true, Winner: batch.True},
		{Match: []byte("m-three"), Rating: high, HasRating: true, Winner: batch.False},
		{Match: []byte("m-three"), Winner: batch.Missing},
	} {
		g.add(&p)
	}
	// Version 1, written as the first format wrote it.
	w := &snapWriter{}
	w.Byte(1)
	w.Uvarint(uint64(g.matches.len()))
	g.matches.each(func(token []byte, m *q2Match) {
		w.Bytes(token)
		w.Byte(m.rows)
		for i := 0; i < 2; i++ {
			w.Byte(byte(m.winner[i]))
			w.Bool(m.hasRating[i])
			w.Bool(m.wide[i])
			w.Varint(m.units[i])
		}
	})
	g.appendWide(w)
	v2, err := g.AppendSnapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	var answers []string
	for _, state := range [][]byte{w.B, v2} {
		back := NewQ2Grouper()
		if err := back.Restore(state); err != nil {
			t.Fatalf("restore version %d: %v", state[0], err)
		}
		out := &fakeEmitter{}
		if err := back.Finish(out); err != nil {
			t.Fatal(err)
		}
		answers = append(answers, strings.Join(out.calls, "\n"))
	}
	want := &fakeEmitter{}
	if err := g.Finish(want); err != nil {
		t.Fatal(err)
	}
	for i, got := range answers {
		if got != strings.Join(want.calls, "\n") || len(want.calls) != 2 {
			t.Fatalf("version %d restored to %q, want %q", i+1, got, want.calls)
		}
	}
}

// TestQ2SnapshotVersion2ReadsWithTheOldHash: a version 2 snapshot holds
// the hashes of hashToken before its final mix. Restored, every match
// must still be found by the new hash: the rows that come after the
// restore join the groups the snapshot held, as if it had never been
// taken.
func TestQ2SnapshotVersion2ReadsWithTheOldHash(t *testing.T) {
	low, _ := schema.ParseNumber([]byte("1100"))
	high, _ := schema.ParseNumber([]byte("1900.25"))
	var before, after []batch.Player
	for i := range 500 {
		match := []byte(fmt.Sprint(i)) // decimal tokens, the kind the old hash clustered
		before = append(before, batch.Player{Match: match, Rating: low, HasRating: true, Winner: batch.True})
		after = append(after, batch.Player{Match: match, Rating: high, HasRating: true, Winner: batch.False})
	}
	whole, half := NewQ2Grouper(), NewQ2Grouper()
	for i := range before {
		whole.add(&before[i])
		half.add(&before[i])
	}
	for i := range after {
		whole.add(&after[i])
	}

	// Version 2, as the build before the final mix wrote it.
	tab := half.matches
	w := &snapWriter{}
	w.Byte(2)
	w.B = binary.LittleEndian.AppendUint64(w.B, tab.seed)
	w.Bytes(tab.arena)
	w.Uvarint(uint64(tab.len()))
	tab.eachSlot(func(_ uint32, off uint64, n uint32, m *q2Match) {
		h := uint32(hashWithoutFinalMix(tab.seed, tab.arena[off:off+uint64(n)]))
		if h == 0 {
			h = 1
		}
		w.Uvarint(uint64(h))
		w.Uvarint(off)
		w.Uvarint(uint64(n))
		w.group(m)
	})
	half.appendWide(w)

	back := NewQ2Grouper()
	if err := back.Restore(w.B); err != nil {
		t.Fatal(err)
	}
	for i := range after {
		back.add(&after[i])
	}
	got, want := &fakeEmitter{}, &fakeEmitter{}
	if err := back.Finish(got); err != nil {
		t.Fatal(err)
	}
	if err := whole.Finish(want); err != nil {
		t.Fatal(err)
	}
	if g, w := strings.Join(got.calls, "\n"), strings.Join(want.calls, "\n"); g != w || len(want.calls) != 500 {
		t.Fatalf("restored from version 2 and fed the rest: %d answers, want the %d of a grouper that saw every row", len(got.calls), len(want.calls))
	}
}

// hashWithoutFinalMix is hashToken as version 2 snapshots stored it.
func hashWithoutFinalMix(seed uint64, token []byte) uint64 {
	h := seed ^ uint64(len(token))*hashMulLen
	for ; len(token) > 8; token = token[8:] {
		h = foldMul(h^binary.LittleEndian.Uint64(token), hashMulWord)
	}
	return foldMul(h^tailWord(token), hashMulLast)
}
