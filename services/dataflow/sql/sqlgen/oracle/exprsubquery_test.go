package oracle_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
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

// TestScalarSubqueryOfRowsFails: a scalar subquery of more than one row
// fails the query with PostgreSQL's error, by Execute and through the
// physical plan on one task and on 1 and 3 shards; of one row or none
// it is that row's value or NULL.
func TestScalarSubqueryOfRowsFails(t *testing.T) {
	c := sqlgen.Case{Tables: []sqlgen.Table{
		{Name: "t", Columns: []string{"k"}, CSV: "k\na\nb\n"},
		{Name: "u", Columns: []string{"k"}, CSV: "k\nx\ny\n"},
	}}
	for _, q := range []struct{ query, want string }{
		{"SELECT t.k, (SELECT u.k FROM u) FROM t ORDER BY 1", ""},
		{"SELECT t.k, (SELECT u.k FROM u WHERE u.k = 'y') FROM t ORDER BY 1", "a,y\nb,y\n"},
		{"SELECT t.k, (SELECT u.k FROM u WHERE u.k = 'z') FROM t ORDER BY 1", "a,\nb,\n"},
	} {
		c.Query = q.query
		root, tables := load(t, c)
		_, err := oracle.Execute(root, tables)
		if q.want != "" {
			if err != nil {
				t.Fatalf("%s: %v", q.query, err)
			}
			c.Want = q.want
			checkNaiveEverywhere(t, 0, c)
			continue
		}
		if !errors.Is(err, exec.ErrSubqueryRows) {
			t.Fatalf("%s: Execute = %v, want %v", q.query, err, exec.ErrSubqueryRows)
		}
		for _, shards := range []int{0, 1, 3} {
			p, err := physical.Build([]physical.Logical{{Name: "q", Plan: root}}, shapeOf(shards))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sqlops.Run(p, tables); !errors.Is(err, exec.ErrSubqueryRows) {
				t.Fatalf("%s, %d shards: Run = %v, want %v", q.query, shards, err, exec.ErrSubqueryRows)
			}
		}
	}
}

// TestPlacedSubqueriesEverywhere: sqlgen's PlacedSubqueries give Execute's rows
// rewritten and through the physical plan on one task and on 1 and 3
// shards (their broadcasts and mark joins placed as any).
func TestPlacedSubqueriesEverywhere(t *testing.T) {
	for _, q := range sqlgen.PlacedSubqueries {
		c := sqlgen.Case{Tables: sqlgen.PlacedSubqueryTables, Query: q}
		root, tables := load(t, c)
		c.Want = run(t, c, root, tables)
		checkNaiveEverywhere(t, 0, c)
	}
}
