package oracle_test

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// TestExprSubqueriesMatchNaive: random queries whose conditions and
// numbers hold uncorrelated subqueries (sqlgen's Options.ExprSubqueries:
// [NOT] EXISTS, [NOT] IN (SELECT ...) under OR, NOT and CASE, scalar
// subqueries) give the naive evaluator's rows by Execute, rewritten, and
// through the physical plan on one task and on 1 and 3 shards.
func TestExprSubqueriesMatchNaive(t *testing.T) {
	runs := 500
	if testing.Short() {
		runs = 200
	}
	subs, notIn, exists, scalar, nonEmpty := 0, 0, 0, 0, 0
	for seed := range uint64(runs) {
		c := sqlgen.GenerateWith(seed, sqlgen.Options{ExprSubqueries: true})
		if !c.ExprSubquery {
			continue
		}
		subs++
		if strings.Contains(c.Query, " NOT IN (SELECT") {
			notIn++
		}
		if strings.Contains(c.Query, "EXISTS (") {
			exists++
		}
		if strings.Contains(c.Query, "(SELECT MAX") || strings.Contains(c.Query, "(SELECT COUNT") {
			scalar++
		}
		if c.Want != "" {
			nonEmpty++
		}
		checkNaiveEverywhere(t, seed, c)
	}
	t.Logf("%d of %d queries with subqueries of expressions (%d NOT IN, %d EXISTS, %d scalar MAX or COUNT), %d returned rows", subs, runs, notIn, exists, scalar, nonEmpty)
	if subs < runs/3 || notIn < runs/20 || exists < runs/20 || scalar < runs/20 || nonEmpty < subs/3 {
		t.Errorf("too few to test them")
	}
}
