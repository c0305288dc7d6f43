package sqlops_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/respell"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// The issue's own queries: a DISTINCT, a sort with a LIMIT, a group key
// and MIN/MAX of a number column whose equal values are written
// differently (1500, 1500.0).
var arrivalQueries = []string{
	"SELECT DISTINCT average_rating FROM matches WHERE average_rating > 1000",
	"SELECT average_rating FROM matches WHERE average_rating > 1000 ORDER BY average_rating LIMIT 7",
	"SELECT average_rating, map FROM matches WHERE average_rating > 0 ORDER BY average_rating DESC LIMIT 9",
	"SELECT ROW_NUMBER() OVER (ORDER BY rating DESC) AS n, rating FROM match_players WHERE rating > 0 ORDER BY rating DESC LIMIT 11",
	"SELECT rating, COUNT(*) FROM match_players WHERE rating > 2000 GROUP BY rating",
	"SELECT map, MIN(average_rating), MAX(average_rating) FROM matches WHERE average_rating > 0 GROUP BY map",
	"SELECT p.rating, m.average_rating FROM match_players AS p JOIN matches AS m ON p.rating = m.average_rating",
}

// TestOutputNeverDependsOnArrivalOrder runs each query of the
// differential sets (the four default queries, queries/examples, the
// issue's queries, sqlgen's random cases and this package's random
// queries) over tables whose number columns hold equal values written
// differently (1500, 1500.0, 1500.00: respelled), twice: the rows in one
// order, and shuffled into other batches with the instances run in
// another random order; on 1 and on 3 shards, and by the oracle. Every
// output must be byte-equal (docs/sql.md "Output"): what arrived first
// must not choose a DISTINCT row's, a group's or an extreme's text, nor
// the order of rows equal by value, nor what a LIMIT keeps.
func TestOutputNeverDependsOnArrivalOrder(t *testing.T) {
	cases, seeds := 300, 100
	if testing.Short() {
		cases, seeds = 100, 30
	}
	var c arrivalCounts
	_, _, tables := generated(t, 1500, 3)
	texts := defaultTexts()
	for _, name := range queries.Names {
		c.check(t, name, texts[name], tables, 1)
	}
	examples, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "queries", "examples", "*.sql"))
	if err != nil || len(examples) < 10 {
		t.Fatalf("example queries: %v, %v", examples, err)
	}
	for _, f := range examples {
		q, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c.check(t, filepath.Base(f), string(q), tables, 2)
	}
	for i, q := range arrivalQueries {
		c.check(t, fmt.Sprint("issue", i), q, tables, 3)
	}
	for seed := range uint64(cases) {
		sc := sqlgen.Generate(seed)
		c.check(t, fmt.Sprint("sqlgen seed ", seed), sc.Query, caseTables(t, sc), seed)
	}
	for seed := range uint64(seeds) {
		g := gen{rand.New(rand.NewPCG(seed, 27))}
		tabs := g.tables(t)
		q, _ := g.query()
		c.check(t, fmt.Sprint("random seed ", seed), q, tabs, seed)
	}
	t.Logf("%d queries, %d runs compared; %d answers with rows, %d over a number written two ways",
		c.queries, c.runs, c.nonEmpty, c.respelled)
	if c.nonEmpty < c.queries/2 {
		t.Errorf("only %d of %d answers have rows: the test checks little", c.nonEmpty, c.queries)
	}
}

type arrivalCounts struct{ queries, runs, nonEmpty, respelled int }

// caseTables are the tables of a sqlgen case, read.
func caseTables(t testing.TB, sc sqlgen.Case) map[string]*exec.Table {
	t.Helper()
	tabs := map[string]*exec.Table{}
	for _, tab := range sc.Tables {
		tt, err := exec.ReadCSV(strings.NewReader(tab.CSV), 0)
		if err != nil {
			t.Fatal(err)
		}
		tabs[tab.Name] = tt
	}
	return tabs
}

// check runs query over tables respelled and in two orders, on 1 and 3
// shards and by the oracle, and fails unless every output is the same
// bytes.
func (c *arrivalCounts) check(t *testing.T, name, query string, tables map[string]*exec.Table, seed uint64) {
	t.Helper()
	cat := sql.Catalog{}
	for n, tab := range tables {
		cat[n] = tab.Columns
	}
	root, err := sql.Compile(query, cat)
	if err != nil {
		t.Fatalf("%s: %s: %v", name, query, err)
	}
	r := rand.New(rand.NewPCG(seed, 41))
	ordered, shuffled := map[string]*exec.Table{}, map[string]*exec.Table{}
	numbers := respell.Columns(root)
	twoWays := false
	for n, tab := range tables {
		rows, twice := respell.Rows(tab, numbers[n], r)
		twoWays = twoWays || twice
		ordered[n] = respell.Table(tab.Columns, rows, 1+r.IntN(64))
		respell.Shuffle(rows, r)
		shuffled[n] = respell.Table(tab.Columns, rows, 1+r.IntN(64))
	}
	want, err := oracle.Execute(root, ordered)
	if err != nil {
		t.Fatalf("%s: %s: %v", name, query, err)
	}
	c.queries++
	if twoWays {
		c.respelled++
	}
	if want.Rows.N > 0 {
		c.nonEmpty++
	}
	fail := func(how string, got []byte) {
		a, b := strings.Split(string(got), "\n"), strings.Split(string(want.CSV()), "\n")
		line := 0
		for line < min(len(a), len(b))-1 && a[line] == b[line] {
			line++
		}
		t.Fatalf("%s: %s\n%s differs from the oracle's answer over the rows in their first order, from line %d (%d lines, want %d)\n got %q\nwant %q",
			name, query, how, line+1, len(a), len(b), a[line], b[line])
	}
	if got, err := oracle.Execute(root, shuffled); err != nil || !bytes.Equal(got.CSV(), want.CSV()) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fail("the oracle's answer over the rows shuffled", got.CSV())
	}
	var first []byte // the first run's file
	for _, shards := range []int{1, 3} {
		p := planOf(t, map[string]string{"q": query}, []string{"q"}, ordered, shards)
		for i, tabs := range []map[string]*exec.Table{ordered, shuffled} {
			res, err := sqlops.RunShuffled(p, tabs, rand.New(rand.NewPCG(seed, uint64(10*shards+i))), nil)
			if err != nil {
				t.Fatalf("%s: %s: %d shards: %v", name, query, shards, err)
			}
			c.runs++
			// The header aside: a plan's names travel as JSON, which
			// makes a column named by a text that is not UTF-8 another
			// text (plan.Node), where the oracle keeps its bytes.
			if first == nil {
				first = res.Files["q"]
			}
			if !bytes.Equal(body(res.Files["q"]), body(want.CSV())) || !bytes.Equal(res.Files["q"], first) {
				fail(fmt.Sprintf("%d shards, the rows in order %d:", shards, i+1), res.Files["q"])
			}
		}
	}
}

// body is a CSV file without its header line.
func body(csv []byte) []byte {
	_, rows, _ := bytes.Cut(csv, []byte("\n"))
	return rows
}
