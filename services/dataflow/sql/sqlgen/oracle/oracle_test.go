package oracle_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
)

// TestExecuteMatchesNaive compares Execute with sqlgen's naive evaluator
// (row at a time over math/big.Rat values, formatted and ordered by the
// rules of docs/sql.md) on random queries over random tables, byte for
// byte.
func TestExecuteMatchesNaive(t *testing.T) {
	runs := 1500
	if testing.Short() {
		runs = 300
	}
	for seed := range uint64(runs) {
		c := sqlgen.Generate(seed)
		root, tables := load(t, c)
		if got := run(t, c, root, tables); got != c.Want {
			t.Fatalf("seed %d: %s\nt:\n%s\nu:\n%s\n got %q\nwant %q", seed, c.Query, c.Tables[0].CSV, c.Tables[1].CSV, got, c.Want)
		}
	}
}

// TestOptimizeKeepsAnswers runs the same random queries as rewrite.Optimize
// rewrites them (filters pushed below joins, columns dropped where nothing
// above reads them), and as rewrite.OptimizeFor rewrites them for the
// tables' uploads ending in name order and in the reverse (joins
// swapped to hold the side that ends first): the rewritten plan's rows
// must be the naive evaluator's, and the rewrite must leave the plan it
// was given as it was.
func TestOptimizeKeepsAnswers(t *testing.T) {
	runs, changed, swapped := 600, 0, 0
	if testing.Short() {
		runs = 150
	}
	for seed := range uint64(runs) {
		c := sqlgen.Generate(seed)
		if seed%2 == 1 { // outer joins, joins of three tables, subqueries...
			c = sqlgen.GenerateWith(seed, sqlgen.Options{Joins: true, Subqueries: true, ExprSubqueries: true, SetOps: true, Functions: true})
		}
		root, tables := load(t, c)
		before := root.String()
		opt := rewrite.Optimize(root)
		if root.String() != before {
			t.Fatalf("seed %d: Optimize changed the plan it was given\n%s\n%s", seed, before, root)
		}
		if opt.String() != before {
			changed++
		}
		if got := run(t, c, opt, tables); got != c.Want {
			t.Fatalf("seed %d: %s: the rewrite changed the answer\n%s\n%s\n got %q\nwant %q", seed, c.Query, root, opt, got, c.Want)
		}
		names := slices.Sorted(maps.Keys(tables))
		reversed := slices.Clone(names)
		slices.Reverse(reversed)
		for _, order := range [][]string{names, reversed} {
			alt := rewrite.OptimizeFor(root, order)
			if root.String() != before {
				t.Fatalf("seed %d: OptimizeFor changed the plan it was given\n%s\n%s", seed, before, root)
			}
			if alt.String() != opt.String() {
				swapped++
			}
			if got := run(t, c, alt, tables); got != c.Want {
				t.Fatalf("seed %d: %s: the rewrite for uploads in order %v changed the answer\n%s\n%s\n got %q\nwant %q", seed, c.Query, order, root, alt, got, c.Want)
			}
		}
	}
	if swapped < runs/4 {
		t.Errorf("OptimizeFor swapped the joins of only %d of %d plans", swapped, 2*runs)
	}
	// Most plans have something to prune or push: else the test compares
	// little.
	if changed < runs/2 {
		t.Errorf("Optimize changed only %d of %d plans", changed, runs)
	}
}

// load reads a case's tables and compiles its query over them.
func load(t *testing.T, c sqlgen.Case) (*plan.Node, map[string]*exec.Table) {
	t.Helper()
	tables := map[string]*exec.Table{}
	catalog := sql.Catalog{}
	for _, tab := range c.Tables {
		tt, err := exec.ReadCSV(strings.NewReader(tab.CSV), 0)
		if err != nil {
			t.Fatal(err)
		}
		tables[tab.Name], catalog[tab.Name] = tt, tt.Columns
	}
	root, err := sql.Compile(c.Query, catalog)
	if err != nil {
		t.Fatalf("%s: %v", c.Query, err)
	}
	return root, tables
}

// run runs a case's plan with Execute and returns its rows without the
// header (the header is checked elsewhere).
func run(t *testing.T, c sqlgen.Case, root *plan.Node, tables map[string]*exec.Table) string {
	t.Helper()
	res, err := oracle.Execute(root, tables)
	if err != nil {
		t.Fatalf("%s: %v\n%s", c.Query, err, root)
	}
	_, rows, _ := strings.Cut(string(res.CSV()), "\n")
	return rows
}
