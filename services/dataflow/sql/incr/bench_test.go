package incr_test

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
)

// BenchmarkDefaultQueries maintains the four default queries over a
// generated dataset fed as one epoch and as 100, and runs them as a
// batch (oracle.Execute) for scale: an op is the whole dataset through
// the four queries (each query alone under q1..q4), every version's
// change made (not its CSV).
//
//	go test -run '^$' -bench DefaultQueries -benchtime 3x ./services/dataflow/sql/incr/
func BenchmarkDefaultQueries(b *testing.B) {
	tables, cat := dataset(b, datagen.Config{Matches: 50000, Seed: 1})
	qs := defaultQueries(b)
	names := slices.Sorted(mapKeys(qs))
	var roots []*plan.Node
	for _, name := range names {
		root, err := sql.Compile(qs[name], cat)
		if err != nil {
			b.Fatal(err)
		}
		roots = append(roots, rewrite.Optimize(root))
	}
	rows := 0
	for _, t := range tables {
		for _, bt := range t.Batches {
			rows += bt.N
		}
	}
	split := map[int][]map[string]*exec.Table{}
	for _, n := range []int{1, 100} {
		split[n] = epochs(rand.New(rand.NewPCG(1, 2)), tables, n)
	}
	for i, label := range append([]string{"four"}, names...) {
		qroots := roots
		if i > 0 {
			qroots = roots[i-1 : i]
		}
		b.Run(label+"/exec", func(b *testing.B) {
			for b.Loop() {
				for _, root := range qroots {
					if _, err := oracle.Execute(root, tables); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		for _, n := range []int{1, 100} {
			b.Run(label+"/epochs="+strconv.Itoa(n), func(b *testing.B) {
				for b.Loop() {
					for _, root := range qroots {
						maintain(b, root, split[n])
					}
				}
				b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

// BenchmarkAppendOnePercent is the issue's "appending 1% more rows to a
// standing job": the four default queries maintained over 99% of the
// dataset (not timed), then an op is one epoch of the last 1%, its
// change made (its ns/epoch). Compare with DefaultQueries/four/epochs=1,
// the whole dataset as one epoch.
//
//	go test -run '^$' -bench AppendOnePercent -benchtime 5x ./services/dataflow/sql/incr/
func BenchmarkAppendOnePercent(b *testing.B) {
	tables, cat := dataset(b, datagen.Config{Matches: 50000, Seed: 1})
	qs := defaultQueries(b)
	var roots []*plan.Node
	for _, name := range slices.Sorted(mapKeys(qs)) {
		root, err := sql.Compile(qs[name], cat)
		if err != nil {
			b.Fatal(err)
		}
		roots = append(roots, rewrite.Optimize(root))
	}
	// The first 99% of each table's rows, then the last 1%.
	first, last := map[string]*exec.Table{}, map[string]*exec.Table{}
	for name, t := range tables {
		all := exec.Concat(textCols(t.Columns), t.Batches)
		cut := all.N * 99 / 100
		rows := func(from, to int) []*exec.Batch {
			idx := make([]int32, 0, to-from)
			for i := from; i < to; i++ {
				idx = append(idx, int32(i))
			}
			return []*exec.Batch{all.Rows(idx)}
		}
		first[name] = &exec.Table{Columns: t.Columns, Batches: rows(0, cut)}
		last[name] = &exec.Table{Columns: t.Columns, Batches: rows(cut, all.N)}
	}
	var spent time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var engines []*incr.Engine
		for _, root := range roots {
			e, err := incr.New(root)
			if err != nil {
				b.Fatal(err)
			}
			for name, t := range first {
				if err := e.Append(name, t); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := e.Commit(); err != nil {
				b.Fatal(err)
			}
			engines = append(engines, e)
		}
		runtime.GC() // the setup's garbage is not the epoch's
		b.StartTimer()
		t0 := time.Now()
		for _, e := range engines {
			for name, t := range last {
				if err := e.Append(name, t); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := e.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		spent += time.Since(t0)
	}
	// ns/epoch is the epoch's own time, measured around it alone (ns/op
	// came out well above it when this was written).
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "ns/epoch")
}

// maintain runs an engine of root through the epochs.
func maintain(b *testing.B, root *plan.Node, parts []map[string]*exec.Table) {
	e, err := incr.New(root)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range parts {
		for name, t := range p {
			if err := e.Append(name, t); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := e.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshot: each default query maintained over the same
// dataset as DefaultQueries (in 100 epochs, not timed), then an op is
// its Snapshot and a Restore from it; the snapshot's size as bytes and
// bytes per input row (of both tables).
//
//	go test -run '^$' -bench Snapshot -benchtime 3x ./services/dataflow/sql/incr/
func BenchmarkSnapshot(b *testing.B) {
	tables, cat := dataset(b, datagen.Config{Matches: 50000, Seed: 1})
	qs := defaultQueries(b)
	rows := 0
	for _, t := range tables {
		for _, bt := range t.Batches {
			rows += bt.N
		}
	}
	parts := epochs(rand.New(rand.NewPCG(1, 2)), tables, 100)
	for _, name := range slices.Sorted(mapKeys(qs)) {
		root, err := sql.Compile(qs[name], cat)
		if err != nil {
			b.Fatal(err)
		}
		root = rewrite.Optimize(root)
		e, err := incr.New(root)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range parts {
			commitEpoch(b, e, p)
		}
		b.Run(name, func(b *testing.B) {
			var snap []byte
			for b.Loop() {
				if snap, err = e.Snapshot(snap[:0]); err != nil {
					b.Fatal(err)
				}
				if _, err := incr.Restore(root, snap); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(snap)), "bytes")
			b.ReportMetric(float64(len(snap))/float64(rows), "bytes/row")
		})
	}
}
