package sql_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// TestWithIsTheInlinePlan: a query reading a CTE compiles to the plan of
// the same query with the CTE's body written inline as a subquery in
// FROM at each reference (a subtree per reference), and a subquery in
// FROM reads its columns by their kinds.
func TestWithIsTheInlinePlan(t *testing.T) {
	const arabia = "SELECT token, average_rating FROM matches WHERE map = 'arabia'"
	cases := []struct {
		name, with, inline string
		scans              int // the plan's scan nodes
	}{
		{"one reference",
			"WITH a AS (" + arabia + ") SELECT token FROM a WHERE average_rating > 1500",
			"SELECT token FROM (" + arabia + ") AS a WHERE average_rating > 1500", 1},
		{"two references, a self-join",
			"WITH a AS (" + arabia + ") SELECT x.token FROM a x JOIN a y ON x.token = y.token",
			"SELECT x.token FROM (" + arabia + ") x JOIN (" + arabia + ") y ON x.token = y.token", 2},
		{"a CTE reading an earlier one, with a column list",
			"WITH a AS (" + arabia + "), b(tok, r) AS (SELECT token, average_rating FROM a WHERE average_rating > 1000) SELECT tok FROM b ORDER BY r DESC",
			"SELECT tok FROM (SELECT token, average_rating FROM (" + arabia + ") AS a WHERE average_rating > 1000) AS b(tok, r) ORDER BY r DESC", 1},
		{"in an IN subquery, and joined with a table",
			"WITH a AS (" + arabia + ") SELECT p.civ, COUNT(*) AS n FROM match_players p JOIN a ON p.match = a.token WHERE p.match IN (SELECT token FROM a) GROUP BY p.civ",
			"SELECT p.civ, COUNT(*) AS n FROM match_players p JOIN (" + arabia + ") AS a ON p.match = a.token WHERE p.match IN (SELECT token FROM (" + arabia + ") AS a) GROUP BY p.civ", 3},
		{"WITH inside a subquery in FROM, which shadows a table",
			"SELECT n FROM (WITH matches AS (SELECT civ FROM match_players) SELECT COUNT(*) AS n FROM matches) AS c",
			"SELECT n FROM (SELECT COUNT(*) AS n FROM (SELECT civ FROM match_players) AS matches) AS c", 1},
		{"an aggregate in a subquery, grouped again",
			"WITH per AS (SELECT map, COUNT(*) AS games FROM matches GROUP BY map) SELECT games, COUNT(*) FROM per GROUP BY games",
			"SELECT games, COUNT(*) FROM (SELECT map, COUNT(*) AS games FROM matches GROUP BY map) AS per GROUP BY games", 1},
		{"an ordered LIMIT and ROW_NUMBER in a subquery",
			"WITH top AS (SELECT ROW_NUMBER() OVER (ORDER BY rating DESC, civ) AS r, civ FROM match_players ORDER BY rating DESC, civ LIMIT 3) SELECT civ FROM top WHERE r > 1",
			"SELECT civ FROM (SELECT ROW_NUMBER() OVER (ORDER BY rating DESC, civ) AS r, civ FROM match_players ORDER BY rating DESC, civ LIMIT 3) AS top WHERE r > 1", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			with, err := sql.Compile(c.with, catalog)
			if err != nil {
				t.Fatalf("%s: %v", c.with, err)
			}
			inline, err := sql.Compile(c.inline, catalog)
			if err != nil {
				t.Fatalf("%s: %v", c.inline, err)
			}
			if with.String() != inline.String() {
				t.Errorf("WITH:\n%s\ninline:\n%s", with, inline)
			}
			if n := countOps(with, plan.Scan); n != c.scans {
				t.Errorf("%d scans, want %d:\n%s", n, c.scans, with)
			}
		})
	}
}

// TestSubqueryInFrom: the plans of subqueries in FROM, as their nodes: no
// sort where no LIMIT or row number needs one, the kinds of a table's
// columns through the subquery, its columns renamed by the alias's list.
func TestSubqueryInFrom(t *testing.T) {
	cases := []struct{ query, plan string }{
		{"SELECT x.r FROM (SELECT rating AS r FROM match_players ORDER BY r) AS x WHERE x.r > 2000", `
sort by all columns -> (r number)
  project r#0 -> (r number)
    filter (r#0 > 2000) -> (r number)
      project rating#0 -> (r number)
        scan match_players -> (rating number)`},
		{"SELECT a, b FROM (SELECT civ, winner FROM match_players) AS t(a, b) WHERE b", `
sort by all columns -> (a text, b bool)
  project a#0, b#1 -> (a text, b bool)
    filter b#1 -> (a text, b bool)
      project a#0, b#1 -> (a text, b bool)
        project civ#0, winner#1 -> (civ text, winner bool)
          scan match_players -> (civ text, winner bool)`},
		{"SELECT m.map, t.n FROM matches m JOIN (SELECT match, COUNT(*) AS n FROM match_players GROUP BY match) t ON m.token = t.match", `
sort by all columns -> (map text, n number)
  project map#1, n#3 -> (map text, n number)
    join on token#0 = match#0 -> (token text, map text, match text, n number)
      scan matches -> (token text, map text)
      project match#0, count(*)#1 -> (match text, n number)
        aggregate by [match#0] computing [count(*)] -> (match text, count(*) number)
          scan match_players -> (match text)`},
		// ROW_NUMBER numbers the rows in their order: sorted, without a LIMIT too.
		{"SELECT s.r FROM (SELECT ROW_NUMBER() OVER (ORDER BY rating) AS r FROM match_players ORDER BY rating) s", `
sort by all columns -> (r number)
  project r#0 -> (r number)
    project r#0 -> (r number)
      rownumber into #0 -> (r number,  number)
        sort by #1, all columns -> (r number,  number)
          project NULL, rating#0 -> (r number,  number)
            scan match_players -> (rating number)`},
	}
	for _, c := range cases {
		root, err := sql.Compile(c.query, catalog)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if got, want := strings.TrimSpace(root.String()), strings.TrimSpace(c.plan); got != want {
			t.Errorf("%s:\n%s\nwant\n%s", c.query, got, want)
		}
	}
}

// TestWithExpansionIsBounded: CTEs that each read the one before twice
// double the plan at each step; past MaxExprNodes of expanded
// expressions the query is refused, at the reference that went past.
func TestWithExpansionIsBounded(t *testing.T) {
	q := "WITH c0 AS (SELECT token FROM matches WHERE map = 'a')"
	for i := 1; i <= 16; i++ {
		q += ", c" + strconv.Itoa(i) + " AS (SELECT x.token FROM c" + strconv.Itoa(i-1) + " x JOIN c" + strconv.Itoa(i-1) + " y ON x.token = y.token)"
	}
	_, err := sql.Compile(q+" SELECT token FROM c16", catalog)
	if err == nil || !strings.Contains(err.Error(), "expression size") || !strings.Contains(err.Error(), "10000") {
		t.Fatalf("got %v, want an expression size error", err)
	}
	if _, err := sql.Compile(q+" SELECT token FROM c5", catalog); err != nil {
		t.Fatalf("32 copies: %v", err)
	}
}

func countOps(n *plan.Node, op plan.Op) int {
	k := 0
	if n.Op == op {
		k++
	}
	for _, in := range n.Input {
		k += countOps(in, op)
	}
	return k
}
