package incr_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// version is what an epoch's Commit and Answer give: the change's CSV,
// the answer's CSV and its Stats.
type version struct {
	diff, answer []byte
	stats        []exec.ColumnStats
}

// commitEpoch appends an epoch's tables (copies) to e and commits it.
func commitEpoch(t testing.TB, e *incr.Engine, part map[string]*exec.Table) version {
	t.Helper()
	for _, name := range slices.Sorted(mapKeys(part)) {
		p := part[name]
		c := &exec.Table{Columns: p.Columns, Batches: []*exec.Batch{exec.Concat(textCols(p.Columns), p.Batches)}}
		if err := e.Append(name, c); err != nil {
			t.Fatal(err)
		}
	}
	d, err := e.Commit()
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.Answer()
	if err != nil {
		t.Fatal(err)
	}
	return version{diff: d.Result().CSV(), answer: a.CSV(), stats: a.Stats}
}

// checkRestores runs the epochs through an engine of root, and again
// through one snapshotted and restored at random epoch boundaries (one
// or several): every version after a restore must be the uninterrupted
// engine's, byte for byte, and a restored engine's snapshot the one it
// was restored from. It returns the snapshots taken.
func checkRestores(t *testing.T, label string, r *rand.Rand, root *plan.Node, parts []map[string]*exec.Table) [][]byte {
	t.Helper()
	e, err := incr.New(root)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	var want []version
	for _, p := range parts {
		want = append(want, commitEpoch(t, e, p))
	}
	restoreAt := map[int]bool{r.IntN(len(parts) + 1): true}
	for r.IntN(3) == 0 {
		restoreAt[r.IntN(len(parts)+1)] = true
	}
	var snaps [][]byte
	if e, err = incr.New(root); err != nil {
		t.Fatal(err)
	}
	for k := 0; k <= len(parts); k++ {
		if restoreAt[k] {
			snap, err := e.Snapshot([]byte("x")) // appended after what dst holds
			if err != nil {
				t.Fatalf("%s: snapshot after epoch %d: %v", label, k, err)
			}
			snap = snap[1:]
			if e, err = incr.Restore(root, snap); err != nil {
				t.Fatalf("%s: restore after epoch %d: %v", label, k, err)
			}
			again, err := e.Snapshot(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, snap) {
				t.Fatalf("%s: after epoch %d: a restored engine's snapshot differs from the one it was restored from", label, k)
			}
			if e.Epoch() != int64(k) {
				t.Fatalf("%s: restored at epoch %d, want %d", label, e.Epoch(), k)
			}
			snaps = append(snaps, snap)
		}
		if k == len(parts) {
			break
		}
		got := commitEpoch(t, e, parts[k])
		w := want[k]
		if !bytes.Equal(got.diff, w.diff) || !bytes.Equal(got.answer, w.answer) || !reflect.DeepEqual(got.stats, w.stats) {
			t.Fatalf("%s: epoch %d of %d, restored after epochs %v:\n%s\nchange %q\n  want %q\nanswer %q\n  want %q\nstats %+v\n want %+v",
				label, k+1, len(parts), slices.Sorted(mapKeysInt(restoreAt)), root, got.diff, w.diff, got.answer, w.answer, got.stats, w.stats)
		}
	}
	return snaps
}

func mapKeysInt(m map[int]bool) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestRestoreContinues: sqlgen's random queries, the constructs whose
// rows leave the answer and the four default queries, over random epochs, snapshotted and restored at random epoch
// boundaries: every later version equal to the uninterrupted engine's.
func TestRestoreContinues(t *testing.T) {
	runs := 1000
	if testing.Short() {
		runs = 200
	}
	for seed := range uint64(runs) {
		root, tables, q := seedPlan(t, seed, "")
		if err := incr.Check(root); err != nil {
			continue
		}
		r := rand.New(rand.NewPCG(seed, 41))
		parts := epochs(r, tables, 1+r.IntN(6))
		checkRestores(t, fmt.Sprintf("seed %d: %s", seed, q), r, root, parts)
	}
	for _, q := range constructs {
		for seed := range uint64(20) {
			root, tables, _ := seedPlan(t, seed, q)
			r := rand.New(rand.NewPCG(seed, 42))
			checkRestores(t, fmt.Sprintf("seed %d: %s", seed, q), r, root, epochs(r, tables, 1+r.IntN(8)))
		}
	}
	qs := defaultQueries(t)
	for seed := range int64(4) {
		tables, cat := dataset(t, datagen.Config{Matches: 1000, Seed: seed})
		r := rand.New(rand.NewPCG(uint64(seed), 41))
		n := []int{1, 3, 10, 30}[seed]
		parts := epochs(r, tables, n)
		for _, name := range slices.Sorted(mapKeys(qs)) {
			root, err := sql.Compile(qs[name], cat)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []*plan.Node{root, rewrite.Optimize(root)} {
				checkRestores(t, fmt.Sprintf("%s, seed %d, %d epochs", name, seed, n), r, p, parts)
			}
		}
	}
}

// TestRestoreRefuses: a snapshot cut short, of another version or of
// another plan is an error wrapping ErrSnapshot; one taken mid-epoch is
// refused.
func TestRestoreRefuses(t *testing.T) {
	qs := defaultQueries(t)
	tables, cat := dataset(t, datagen.Config{Matches: 200, Seed: 1})
	q2, err := sql.Compile(qs["q2"], cat)
	if err != nil {
		t.Fatal(err)
	}
	q1, err := sql.Compile(qs["q1"], cat)
	if err != nil {
		t.Fatal(err)
	}
	e, err := incr.New(q2)
	if err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, e, tables)
	snap, err := e.Snapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(snap) {
		if _, err := incr.Restore(q2, snap[:n]); !errors.Is(err, incr.ErrSnapshot) {
			t.Fatalf("restore of %d of %d bytes: %v, want ErrSnapshot", n, len(snap), err)
		}
	}
	if _, err := incr.Restore(q2, append(slices.Clone(snap), 0)); !errors.Is(err, incr.ErrSnapshot) {
		t.Fatalf("a byte after the snapshot: %v", err)
	}
	if _, err := incr.Restore(q1, snap); !errors.Is(err, incr.ErrSnapshot) {
		t.Fatalf("q2's snapshot as q1's: %v", err)
	}
	other := slices.Clone(snap)
	other[0] = 9
	if _, err := incr.Restore(q2, other); !errors.Is(err, incr.ErrSnapshot) {
		t.Fatalf("version 9: %v", err)
	}
	for name, tab := range tables {
		if err := e.Append(name, tab); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Snapshot(nil); err == nil {
		t.Fatal("a snapshot with an epoch's rows appended and not committed")
	}
}

// fuzzPlans are the plans FuzzRestore restores into, and seed snapshots
// of them.
func fuzzPlans(f *testing.F) ([]*plan.Node, [][]byte) {
	qs := defaultQueries(f)
	tables, cat := dataset(f, datagen.Config{Matches: 60, Seed: 3})
	var roots []*plan.Node
	var seeds [][]byte
	for _, name := range slices.Sorted(mapKeys(qs)) {
		root, err := sql.Compile(qs[name], cat)
		if err != nil {
			f.Fatal(err)
		}
		roots = append(roots, root)
	}
	for seed := range uint64(40) {
		c := sqlgen.Generate(seed)
		ts, cat := sqlgenTables(f, c)
		root, err := sql.Compile(c.Query, cat)
		if err != nil || incr.Check(root) != nil {
			continue
		}
		roots = append(roots, root)
		if seed%4 == 0 {
			seeds = append(seeds, fuzzSeeds(f, byte(len(roots)-1), root, epochs(rand.New(rand.NewPCG(seed, 41)), ts, 3))...)
		}
	}
	parts := epochs(rand.New(rand.NewPCG(3, 41)), tables, 3)
	for i, root := range roots[:4] {
		seeds = append(seeds, fuzzSeeds(f, byte(i), root, parts)...)
	}
	return roots, seeds
}

// fuzzSeeds are the snapshots of root after each epoch, after the byte
// that picks it.
func fuzzSeeds(f *testing.F, pick byte, root *plan.Node, parts []map[string]*exec.Table) [][]byte {
	e, err := incr.New(root)
	if err != nil {
		f.Fatal(err)
	}
	var seeds [][]byte
	for _, p := range parts {
		commitEpoch(f, e, p)
		snap, err := e.Snapshot([]byte{pick})
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, snap)
	}
	return seeds
}

// FuzzRestore: Restore of any bytes into any of the plans returns an
// engine or an error wrapping ErrSnapshot, never panics; a restored
// engine writes its snapshot again, and commits an empty epoch.
func FuzzRestore(f *testing.F) {
	roots, seeds := fuzzPlans(f)
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		root := roots[int(data[0])%len(roots)]
		e, err := incr.Restore(root, data[1:])
		if err != nil {
			if !errors.Is(err, incr.ErrSnapshot) {
				t.Fatalf("%v does not wrap ErrSnapshot", err)
			}
			return
		}
		if _, err := e.Snapshot(nil); err != nil {
			t.Fatal(err)
		}
		// An engine restored from mutated bytes may give wrong answers
		// (they were never an engine's), but runs on: an empty epoch.
		if _, err := e.Commit(); err != nil {
			return
		}
		_, _ = e.Answer()
	})
}
