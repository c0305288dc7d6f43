package incr_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
)

// BenchmarkDefaultQueries maintains the four default queries over a
// generated dataset fed as one epoch and as 100, and runs them as a
// batch (exec.Execute) for scale: an op is the whole dataset through
// the four queries, every version's change made (not its CSV).
//
//	go test -run '^$' -bench DefaultQueries -benchtime 3x ./services/dataflow/sql/incr/
func BenchmarkDefaultQueries(b *testing.B) {
	tables, cat := dataset(b, datagen.Config{Matches: 50000, Seed: 1})
	var roots []*plan.Node
	qs := defaultQueries(b)
	for _, name := range slices.Sorted(mapKeys(qs)) {
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
	b.Run("exec", func(b *testing.B) {
		for b.Loop() {
			for _, root := range roots {
				if _, err := exec.Execute(root, tables); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	for _, n := range []int{1, 100} {
		parts := epochs(rand.New(rand.NewPCG(1, 2)), tables, n)
		b.Run("epochs="+itoa(n), func(b *testing.B) {
			for b.Loop() {
				for _, root := range roots {
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
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
