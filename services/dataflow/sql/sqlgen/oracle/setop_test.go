package oracle_test

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// TestSetOpsMatchNaive: random queries of sqlgen's Options.SetOps (FILTER,
// aggregates of DISTINCT, OFFSET, UNION [ALL], INTERSECT, EXCEPT) give
// the naive evaluator's rows by Execute, as rewrite.Optimize rewrites
// them, and through the physical plan on one task and on 1 and 3 shards.
func TestSetOpsMatchNaive(t *testing.T) {
	matchNaiveOf(t, sqlgen.Options{SetOps: true}, func(c sqlgen.Case) bool { return c.SetOps },
		[]string{"FILTER", "DISTINCT ", "OFFSET", "UNION ALL", "UNION S", "INTERSECT", "EXCEPT"})
}

// matchNaiveOf checks the random cases of o that held says hold its
// constructs (the others are TestExecuteMatchesNaive's) as
// checkNaiveEverywhere does, and fails unless each construct, a text of
// the query, is in at least one query of 40, and one in 8 returns rows.
func matchNaiveOf(t *testing.T, o sqlgen.Options, held func(sqlgen.Case) bool, constructs []string) {
	t.Helper()
	runs := 600
	if testing.Short() {
		runs = 200
	}
	counts := map[string]int{}
	nonEmpty := 0
	for seed := range uint64(runs) {
		c := sqlgen.GenerateWith(seed, o)
		if !held(c) {
			continue // a query of Generate's kinds: TestExecuteMatchesNaive's
		}
		for _, k := range constructs {
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
	if len(counts) < len(constructs) || nonEmpty < runs/8 {
		t.Errorf("constructs %v, %d with rows, of %d seeds: too few to test them", counts, nonEmpty, runs)
	}
}

// TestSetOpsStanding: the random queries of sqlgen's Options.SetOps
// (set operations, FILTER, DISTINCT aggregates, OFFSET) are maintained
// exactly as standing queries, epoch after epoch (none is refused).
func TestSetOpsStanding(t *testing.T) {
	runs := 300
	if testing.Short() {
		runs = 100
	}
	maintained := 0
	for seed := range uint64(runs) {
		c := sqlgen.GenerateWith(seed, sqlgen.Options{SetOps: true})
		if !c.SetOps {
			continue
		}
		root, _ := load(t, c)
		if err := incr.Check(root); err != nil {
			t.Fatalf("seed %d: %s: %v", seed, c.Query, err)
		}
		maintained++
		checkStanding(t, seed, c, root)
	}
	if maintained < runs/3 {
		t.Errorf("only %d queries maintained", maintained)
	}
}
