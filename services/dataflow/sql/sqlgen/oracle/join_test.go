package oracle_test

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// TestJoinsMatchNaive: random joins (sqlgen's Options.Joins: INNER,
// LEFT, RIGHT and FULL, on one key or two, USING, of two tables or
// three) give the naive evaluator's rows by Execute, rewritten, and
// through the physical plan on one task and on 1 and 3 shards.
func TestJoinsMatchNaive(t *testing.T) {
	runs := 600
	if testing.Short() {
		runs = 200
	}
	outer, three, nonEmpty := 0, 0, 0
	for seed := range uint64(runs) {
		c := sqlgen.GenerateWith(seed, sqlgen.Options{Joins: true})
		if !strings.Contains(c.Query, " JOIN ") {
			continue // a query of Generate's kinds
		}
		if strings.Contains(c.Query, "LEFT") || strings.Contains(c.Query, "RIGHT") || strings.Contains(c.Query, "FULL") {
			outer++
		}
		if strings.Contains(c.Query, " AS v ") {
			three++
		}
		if c.Want != "" {
			nonEmpty++
		}
		checkNaiveEverywhere(t, seed, c)
	}
	t.Logf("%d outer joins, %d of three tables, %d with rows, of %d seeds", outer, three, nonEmpty, runs)
	if outer < runs/8 || three < runs/16 || nonEmpty < outer/2 {
		t.Errorf("%d outer joins, %d of three tables, %d with rows: too few to test them", outer, three, nonEmpty)
	}
}
