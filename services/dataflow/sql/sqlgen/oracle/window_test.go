package oracle_test

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// TestWindowsMatchNaive: random queries of sqlgen's Options.Windows
// (RANK, DENSE_RANK, ROW_NUMBER, COUNT, SUM, MIN, MAX OVER (...), over
// rows and over groups) give the naive evaluator's rows by Execute, as
// rewrite.Optimize rewrites them, and through the physical plan on one
// task and on 1 and 3 shards.
func TestWindowsMatchNaive(t *testing.T) {
	runs := 600
	if testing.Short() {
		runs = 200
	}
	counts := map[string]int{}
	nonEmpty := 0
	for seed := range uint64(runs) {
		c := sqlgen.GenerateWith(seed, sqlgen.Options{Windows: true})
		if !c.Windows {
			continue // a query of Generate's kinds: TestExecuteMatchesNaive's
		}
		for _, k := range []string{"ROW_NUMBER", "DENSE_RANK", " RANK", "COUNT(*) OVER", "SUM(", "MIN(", "MAX(", "PARTITION BY", "ORDER BY t", "GROUP BY"} {
			if strings.Contains(c.Query, k) {
				counts[k]++
			}
		}
		if c.Want != "" {
			nonEmpty++
		}
		checkNaiveEverywhere(t, seed, c)
	}
	t.Logf("constructs: %v; %d returned rows", counts, nonEmpty)
	for k, n := range counts {
		if n < runs/40 {
			t.Errorf("only %d queries with %s", n, k)
		}
	}
	if len(counts) < 10 || nonEmpty < runs/8 {
		t.Errorf("constructs %v, %d with rows, of %d seeds: too few to test them", counts, nonEmpty, runs)
	}
}
