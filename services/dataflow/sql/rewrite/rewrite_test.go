package rewrite_test

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// TestOptimizeKeepsAnswers runs random queries (sqlgen's, over its random
// tables) through the executor as compiled and as Optimize rewrites them
// (filters pushed below joins, columns dropped where nothing above reads
// them): the rewritten plan's rows must be the naive evaluator's, and
// Optimize must leave the plan it was given as it was.
func TestOptimizeKeepsAnswers(t *testing.T) {
	runs, changed := 600, 0
	if testing.Short() {
		runs = 150
	}
	for seed := range uint64(runs) {
		c := sqlgen.Generate(seed)
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
			t.Fatalf("seed %d: %s: %v", seed, c.Query, err)
		}
		before := root.String()
		opt := rewrite.Optimize(root)
		if root.String() != before {
			t.Fatalf("seed %d: Optimize changed the plan it was given\n%s\n%s", seed, before, root)
		}
		if opt.String() != before {
			changed++
		}
		res, err := exec.Execute(opt, tables)
		if err != nil {
			t.Fatalf("seed %d: %s optimized: %v\n%s", seed, c.Query, err, opt)
		}
		if _, rows, _ := strings.Cut(string(res.CSV()), "\n"); rows != c.Want {
			t.Fatalf("seed %d: %s: the rewrite changed the answer\n%s\n%s\n got %q\nwant %q", seed, c.Query, root, opt, rows, c.Want)
		}
	}
	// Most plans have something to prune or push: else the test compares
	// little.
	if changed < runs/2 {
		t.Errorf("Optimize changed only %d of %d plans", changed, runs)
	}
}

// TestOptimize shows the rewrites on a plan of the default tables: the
// conjuncts of the filter above the join that read one side go to that
// side, the one that reads both stays, and the column only a filter over
// parsed rows reads (ladder) is dropped by a projection right above it.
func TestOptimize(t *testing.T) {
	cat := sql.Catalog{
		"matches":       {"token", "ladder", "mirror", "average_rating", "map", "server", "duration"},
		"match_players": {"token", "match", "rating", "civ", "winner"},
	}
	root, err := sql.Compile("select p.civ, count(*) from matches m join match_players p on m.token = p.`match` "+
		"where m.ladder = 'RM_1v1' and p.rating > 1000 and m.average_rating > p.rating group by p.civ", cat)
	if err != nil {
		t.Fatal(err)
	}
	want := `sort by all columns -> (civ text, count(*) number)
  project civ#0, count(*)#1 -> (civ text, count(*) number)
    aggregate by [civ#4] computing [count(*)] -> (civ text, count(*) number)
      filter (average_rating#1 > rating#3) -> (token text, average_rating number, match text, rating number, civ text)
        join on token#0 = match#0 -> (token text, average_rating number, match text, rating number, civ text)
          project token#0, average_rating#2 -> (token text, average_rating number)
            filter (ladder#1 = 'RM_1v1') -> (token text, ladder text, average_rating number)
              scan matches -> (token text, ladder text, average_rating number)
          filter (rating#1 > 1000) -> (match text, rating number, civ text)
            scan match_players -> (match text, rating number, civ text)
`
	if got := rewrite.Optimize(root).String(); got != want {
		t.Errorf("compiled:\n%s\noptimized:\n%s\nwant:\n%s", root, got, want)
	}
}
