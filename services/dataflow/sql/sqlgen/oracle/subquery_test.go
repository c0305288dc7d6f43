package oracle_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// TestSubqueriesMatchNaive: random queries that read t through a
// subquery in FROM or a CTE (sqlgen's Options.Subqueries) give the naive
// evaluator's rows by Execute, as rewrite.Optimize rewrites them, and
// through the physical plan on one task and on 1 and 3 shards
// (sqlops.Run): a subquery is an ordinary subtree, placed as any other.
func TestSubqueriesMatchNaive(t *testing.T) {
	runs := 400
	if testing.Short() {
		runs = 150
	}
	with, derived, nonEmpty := 0, 0, 0
	for seed := range uint64(runs) {
		c := sqlgen.GenerateWith(seed, sqlgen.Options{Subqueries: true})
		if !c.Subquery {
			continue // a query of Generate's kinds: TestExecuteMatchesNaive's
		}
		if strings.HasPrefix(c.Query, "WITH ") {
			with++
		} else {
			derived++
		}
		if c.Want != "" {
			nonEmpty++
		}
		checkEverywhere(t, seed, c)
	}
	t.Logf("%d of %d queries with WITH, %d with a subquery in FROM; %d returned rows", with, runs, derived, nonEmpty)
	if with < runs/4 || derived < runs/4 || nonEmpty < (with+derived)/3 {
		t.Errorf("%d WITH and %d FROM subqueries of %d queries, %d with rows: too few to test them", with, derived, runs, nonEmpty)
	}
}

// checkEverywhere checks that case c gives the naive evaluator's rows
// by Execute, as rewrite.Optimize rewrites it, and through the physical
// plan on one task and on 1 and 3 shards (sqlops.Run).
func checkEverywhere(t *testing.T, seed uint64, c sqlgen.Case) {
	t.Helper()
	{
		root, tables := load(t, c)
		if got := run(t, c, root, tables); got != c.Want {
			t.Fatalf("seed %d: %s\n%s\n got %q\nwant %q", seed, c.Query, root, got, c.Want)
		}
		opt := rewrite.Optimize(root)
		if got := run(t, c, opt, tables); got != c.Want {
			t.Fatalf("seed %d: %s: the rewrite changed the answer\n%s\n got %q\nwant %q", seed, c.Query, opt, got, c.Want)
		}
		for _, shards := range []int{0, 1, 3} {
			p, err := physical.Build([]physical.Logical{{Name: "q", Plan: root}}, shapeOf(shards))
			if err != nil {
				t.Fatalf("seed %d, %d shards: %s: %v", seed, shards, c.Query, err)
			}
			if err := physical.Check(p); err != nil {
				t.Fatalf("seed %d, %d shards: %s: %v\n%s", seed, shards, c.Query, err, p)
			}
			res, err := sqlops.Run(p, tables)
			if err != nil {
				t.Fatalf("seed %d, %d shards: %s: %v", seed, shards, c.Query, err)
			}
			if _, got, _ := strings.Cut(string(res.Files["q"]), "\n"); got != c.Want {
				t.Fatalf("seed %d, %d shards: %s\n%s\n got %q\nwant %q", seed, shards, c.Query, p, got, c.Want)
			}
		}
	}
}

// TestSubqueryPlansOnTheCluster: the queries whose subqueries aggregate,
// LIMIT or number their rows (nonMonotone), over sqlgen's tables, give
// Execute's bytes through the physical plan on one task and on 1 and 3
// shards, whatever the order of the tables' rows.
func TestSubqueryPlansOnTheCluster(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 12
	}
	nonEmpty := 0
	for seed := range uint64(seeds) {
		c := sqlgen.Generate(seed)
		c.Query = nonMonotone[seed%uint64(len(nonMonotone))]
		root, tables := load(t, c)
		res, err := oracle.Execute(root, tables)
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, c.Query, err)
		}
		want := string(res.CSV())
		if res.Rows.N > 0 {
			nonEmpty++
		}
		r := rand.New(rand.NewPCG(seed, 43))
		for _, shards := range []int{0, 1, 3} {
			shuffled := map[string]*exec.Table{}
			for _, tab := range c.Tables {
				header, body, _ := strings.Cut(tab.CSV, "\n")
				lines := strings.SplitAfter(body, "\n")
				r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
				shuffled[tab.Name] = readCSV(t, header+"\n"+strings.Join(lines, ""))
			}
			p, err := physical.Build([]physical.Logical{{Name: "q", Plan: root}}, shapeOf(shards))
			if err != nil {
				t.Fatalf("seed %d, %d shards: %s: %v", seed, shards, c.Query, err)
			}
			got, err := sqlops.Run(p, shuffled)
			if err != nil {
				t.Fatalf("seed %d, %d shards: %s: %v", seed, shards, c.Query, err)
			}
			if string(got.Files["q"]) != want {
				t.Fatalf("seed %d, %d shards: %s\n%s\n got %q\nwant %q", seed, shards, c.Query, p, got.Files["q"], want)
			}
		}
	}
	if nonEmpty < seeds/3 {
		t.Errorf("only %d of %d answers have rows", nonEmpty, seeds)
	}
}

// shapeOf is a gateway and shards shard replicas (0: one task for all).
func shapeOf(shards int) physical.Shape {
	shape := physical.Shape{Gateway: physical.Task{Name: "gateway", Replicas: 1}, Shard: physical.Task{Name: "shard", Replicas: max(shards, 1)}}
	if shards == 0 {
		shape.Shard.Name = "gateway"
	}
	return shape
}
