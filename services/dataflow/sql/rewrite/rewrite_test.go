package rewrite_test

import (
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
)

// TestOptimize shows the rewrites on a plan of the default tables: the
// conjuncts of the filter above the join that read one side go to that
// side, the one that reads both stays, and the column only a filter over
// parsed rows reads (ladder) is dropped by a projection right above it.
func TestOptimize(t *testing.T) {
	cat := sql.Catalog{
		"matches":       {"token", "ladder", "mirror", "average_rating", "map", "server", "duration"},
		"match_players": {"token", "match", "rating", "civ", "winner"},
	}
	root, err := sql.Compile("select p.civ, count(*) from matches m join match_players p on m.token = p.match "+
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
