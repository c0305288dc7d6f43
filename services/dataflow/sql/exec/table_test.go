package exec

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// TestKeyTable: slots are numbered in the order keys first come, stay the
// same as the index grows, and a key's bytes (the empty key, prefixes of
// one another) are the key.
func TestKeyTable(t *testing.T) {
	for _, n := range []int{0, 1, 47, 48, 49, 1000, 100_000} {
		tab := NewKeyTable()
		keys := [][]byte{{}, {0}, {0, 0}}
		for i := range n {
			keys = append(keys, fmt.Appendf(nil, "key-%d", i))
		}
		for round := range 2 { // the second round finds every key
			for s, k := range keys {
				if got := tab.slot(k); got != int32(s) {
					t.Fatalf("n=%d round %d: slot(%q) = %d, want %d", n, round, k, got, s)
				}
			}
		}
		if tab.Len() != len(keys) {
			t.Errorf("n=%d: Len %d, want %d", n, tab.Len(), len(keys))
		}
		for s, k := range keys {
			if got, ok := tab.lookup(k); !ok || got != int32(s) || string(tab.key(got)) != string(k) {
				t.Errorf("n=%d: lookup(%q) = %d, %v", n, k, got, ok)
			}
		}
		if _, ok := tab.lookup([]byte("absent")); ok {
			t.Errorf("n=%d: lookup of an absent key", n)
		}
		if 4*tab.Len() >= 3*len(tab.index) {
			t.Errorf("n=%d: %d keys in an index of %d", n, tab.Len(), len(tab.index))
		}
	}
}

// TestKeyTableReserve: room reserved on a table that holds keys already
// (a restore into a table other operators share) keeps every key's slot,
// leaves the index at most three quarters full once the reserved keys are
// in without growing it again, and finds them all.
func TestKeyTableReserve(t *testing.T) {
	for _, held := range []int{0, 5, 3000} {
		tab := NewKeyTable()
		for i := range held {
			tab.slot(fmt.Appendf(nil, "held-%d", i))
		}
		const more = 100_000
		tab.reserve(more)
		size := len(tab.index)
		for i := range more {
			tab.slot(fmt.Appendf(nil, "more-%d", i))
		}
		if len(tab.index) != size || 4*tab.Len() >= 3*size {
			t.Errorf("held %d: index %d after reserve, %d after %d keys more (%d in all)", held, size, len(tab.index), more, tab.Len())
		}
		for i := range held {
			if s, ok := tab.lookup(fmt.Appendf(nil, "held-%d", i)); !ok || s != int32(i) {
				t.Fatalf("held %d: key %d at slot %d, %v", held, i, s, ok)
			}
		}
		for i := range more {
			if s, ok := tab.lookup(fmt.Appendf(nil, "more-%d", i)); !ok || s != int32(held+i) {
				t.Fatalf("held %d: reserved key %d at slot %d, %v", held, i, s, ok)
			}
		}
	}
}

// TestKeyTableCompact: a table compacted to some of its keys, in another
// order, holds those alone, at slots 0.. in that order, with its arena
// and index sized for them; the others are absent, and keys added after
// take the next slots.
func TestKeyTableCompact(t *testing.T) {
	for _, n := range []int{0, 1, 100, 100_000} {
		tab := NewKeyTable()
		for i := range n {
			tab.slot(fmt.Appendf(nil, "key-%d", i))
		}
		var keep []int32
		for s := n - 1; s >= 0; s -= 3 { // every third, from the last
			keep = append(keep, int32(s))
		}
		tab.Compact(keep)
		if tab.Len() != len(keep) || 4*tab.Len() >= 3*len(tab.index) || len(tab.index) > 64 && 8*tab.Len() < 3*len(tab.index) {
			t.Fatalf("n=%d: %d keys in an index of %d, want %d", n, tab.Len(), len(tab.index), len(keep))
		}
		for s, old := range keep {
			k := fmt.Appendf(nil, "key-%d", old)
			if got, ok := tab.lookup(k); !ok || got != int32(s) || string(tab.key(got)) != string(k) {
				t.Fatalf("n=%d: key %q at slot %d, %v, want %d", n, k, got, ok, s)
			}
		}
		if n > 1 {
			if _, ok := tab.lookup(fmt.Appendf(nil, "key-%d", n-2)); ok {
				t.Errorf("n=%d: a key not kept is there", n)
			}
		}
		if s := tab.slot([]byte("new")); s != int32(len(keep)) {
			t.Errorf("n=%d: a new key at slot %d, want %d", n, s, len(keep))
		}
	}
}

// TestReadCSVColumns: the columns not kept read as empty text, the kept
// ones as ReadCSV reads them, and records are counted the same.
func TestReadCSVColumns(t *testing.T) {
	const file = "a,b,c\n1,x,p\n2,y\n3,\"z,z\",q\n"
	all, err := ReadCSV(strings.NewReader(file), 0)
	if err != nil {
		t.Fatal(err)
	}
	some, err := ReadCSVColumns(strings.NewReader(file), 0, []string{"b", "nothere"})
	if err != nil {
		t.Fatal(err)
	}
	if some.Rows != 3 || some.Malformed != 1 || all.Rows != 3 || all.Malformed != 1 || len(some.Batches) != 1 {
		t.Fatalf("counts: %+v, ReadCSV's %+v", some, all)
	}
	b, want := some.Batches[0], all.Batches[0]
	for c := range 3 {
		for i := range b.N {
			got, w := string(b.Cols[c].Text(i)), string(want.Cols[c].Text(i))
			if c != 1 {
				w = ""
			}
			if got != w || b.Cols[c].IsNull(i) {
				t.Errorf("column %d row %d: %q, want %q", c, i, got, w)
			}
		}
	}
}

// textKeys returns a text Vec of n keys, key i being key-<perm[i]>.
func textKeys(perm []int) *Vec {
	b := newBuilder(plan.Text, len(perm))
	for _, k := range perm {
		b.text(fmt.Appendf(nil, "key-%011d", k))
	}
	return b.v
}

// BenchmarkKeyTableSlots looks up batches of a text column in a table of
// a million keys (most absent from the caches, as a shard's match table
// is): Slots of one column, as Task.Receive does for the operators of a
// shared table.
func BenchmarkKeyTableSlots(b *testing.B) {
	benchSlots(b, func(perm []int) []*Vec { return []*Vec{textKeys(perm)} })
}

// BenchmarkKeyTableSlotsOfTwoColumns is BenchmarkKeyTableSlots of keys
// of two columns (a text and a number, as an aggregate by match and team
// has), written out for the table (rowKey) where a text column's are read
// from its bytes.
func BenchmarkKeyTableSlotsOfTwoColumns(b *testing.B) {
	benchSlots(b, func(perm []int) []*Vec {
		num := newBuilder(plan.Number, len(perm))
		for _, k := range perm {
			num.num(value.Int(int64(k % 3)))
		}
		return []*Vec{textKeys(perm), num.v}
	})
}

// benchSlots looks up batches of random keys of a table of a million
// (key i's columns keysOf(i)), reporting the CPU time a key.
func benchSlots(b *testing.B, keysOf func(perm []int) []*Vec) {
	const keys, batch = 1 << 20, BatchRows
	r := rand.New(rand.NewPCG(1, 2))
	tab := NewKeyTable()
	tab.Slots(keysOf(r.Perm(keys)), keys, nil, nil)
	var batches [][]*Vec
	for range 64 {
		perm := make([]int, batch)
		for i := range perm {
			perm[i] = r.IntN(keys)
		}
		batches = append(batches, keysOf(perm))
	}
	var dst []int32
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		dst = tab.Slots(batches[i%len(batches)], batch, nil, dst)
	}
	b.StopTimer()
	// CPU time, not the wall's: on a busy machine the wall counts the
	// other processes' turns.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*batch), "cpu-ns/key")
}

// cpuTime is the CPU time the process has used, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestSlots: Slots gives a row the slot its key (rowKey's bytes) has or
// gets in the table, whichever way the key came in (a text column's
// straight from its bytes, other keys written out, slot's): added when
// its mode says so, else found or -1, and a skipped row -1.
func TestSlots(t *testing.T) {
	text := newBuilder(plan.Text, 0)
	num := newBuilder(plan.Number, 0)
	for i := range 300 {
		switch {
		case i%50 == 7:
			text.null()
			num.null()
		default:
			text.text(fmt.Appendf(nil, "t%d", i%120)) // "t0" and "" are keys too
			num.num(value.Int(int64(i % 120)))
		}
	}
	text.text(nil)
	num.num(value.Int(0))
	for _, keys := range [][]*Vec{{text.v}, {num.v}, {text.v, num.v}} {
		n := keys[0].N
		tab := NewKeyTable()
		// Some keys are there already, added as bytes.
		var key []byte
		for i := 0; i < n; i += 3 {
			key = rowKey(key[:0], keys, i)
			tab.slot(key)
		}
		before := tab.Len()
		modes := make([]KeyMode, n)
		for i := range modes {
			modes[i] = KeyMode(i % 3)
		}
		got := tab.Slots(keys, n, modes, nil)
		for i, s := range got {
			key = rowKey(key[:0], keys, i)
			want, ok := tab.lookup(key)
			switch {
			case modes[i] == SkipKey:
				if s != -1 {
					t.Errorf("%d key columns: skipped row %d has slot %d", len(keys), i, s)
				}
			case modes[i] == AddKey && (!ok || s != want):
				t.Errorf("%d key columns: row %d added as slot %d, its key's is %d (%v)", len(keys), i, s, want, ok)
			case modes[i] == FindKey && ok && s != want, modes[i] == FindKey && !ok && s != -1:
				t.Errorf("%d key columns: row %d found as slot %d, its key's is %d (%v)", len(keys), i, s, want, ok)
			}
		}
		// Every key added: the table holds each distinct key once, the
		// rows of one key have one slot.
		all := tab.Slots(keys, n, nil, nil)
		bySlot := map[int32]string{}
		for i, s := range all {
			k := string(rowKey(nil, keys, i))
			if prev, ok := bySlot[s]; ok && prev != k {
				t.Fatalf("%d key columns: slot %d is keys %q and %q", len(keys), s, prev, k)
			}
			bySlot[s] = k
			if string(tab.key(s)) != k {
				t.Errorf("%d key columns: slot %d holds %q, row %d's key is %q", len(keys), s, tab.key(s), i, k)
			}
		}
		if tab.Len() != len(bySlot) || tab.Len() < before {
			t.Errorf("%d key columns: %d keys in the table, %d distinct", len(keys), tab.Len(), len(bySlot))
		}
		if want := n - (n+2)/3 + n; tab.Lookups() != want { // each row once a call, but the skipped
			t.Errorf("%d key columns: %d lookups, want %d", len(keys), tab.Lookups(), want)
		}
	}
}

// BenchmarkKeyTableAddsKeys builds a table of two million text keys, a
// batch at a time, as a shard's match table grows: the lookups of new
// keys, their bytes appended, and the index doubling on the way
// (reporting the CPU time a key).
func BenchmarkKeyTableAddsKeys(b *testing.B) {
	const keys, batch = 1 << 21, BatchRows
	perm := rand.New(rand.NewPCG(1, 2)).Perm(keys)
	var batches [][]*Vec
	for from := 0; from < keys; from += batch {
		batches = append(batches, []*Vec{textKeys(perm[from : from+batch])})
	}
	var dst []int32
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		tab := NewKeyTable()
		for _, keys := range batches {
			dst = tab.Slots(keys, batch, nil, dst)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*keys), "cpu-ns/key")
}
