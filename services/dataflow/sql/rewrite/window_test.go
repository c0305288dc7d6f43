package rewrite_test

import (
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
)

// TestOptimizeWindow: the outer query's WHERE stays above the window of
// its subquery (below it, it would change the partitions the ranks are
// computed over), and the window's input is pruned to the columns read
// above it and by its OVER clause and function.
func TestOptimizeWindow(t *testing.T) {
	cat := sql.Catalog{"match_players": {"token", "match", "rating", "civ", "winner"}}
	root, err := sql.Compile("select civ, r from (select civ, rating, rank() over (partition by civ order by rating desc) as r "+
		"from match_players) s where rating > 1000", cat)
	if err != nil {
		t.Fatal(err)
	}
	want := `sort by all columns -> (civ text, r number)
  project civ#0, r#2 -> (civ text, r number)
    filter (rating#1 > 1000) -> (civ text, rating number, r number)
      project civ#1, rating#0, rank() over (partition by civ order by rating desc)#2 -> (civ text, rating number, r number)
        window [rank()] over (partition by civ#1 order by rating#0 desc) -> (rating number, civ text, rank() number)
          scan match_players -> (rating number, civ text)
`
	if got := rewrite.Optimize(root).String(); got != want {
		t.Errorf("compiled:\n%s\noptimized:\n%s\nwant:\n%s", root, got, want)
	}
}
