package sql_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// kindsCatalog is the two input files with columns beyond docs/queries.md's
// (num_players, team), and a --table r.
var kindsCatalog = sql.Catalog{
	"matches":       {"token", "ladder", "mirror", "average_rating", "map", "server", "duration", "num_players"},
	"match_players": {"match", "rating", "civ", "winner", "team"},
	"r":             {"civ", "n", "flag", "d"},
}

// TestKindsByTable: a column's kind is its table's, whatever the query
// does with it (docs/sql.md "Kinds"): the input files' as docs/queries.md
// gives them, their other columns and a --table's (Options.TextTables)
// text unless cast; a comparison of two kinds is refused naming both
// sides. Without TextTables, a table's columns take the kinds their uses
// give them (the tests' generated tables).
func TestKindsByTable(t *testing.T) {
	text := sql.Options{TextTables: true}
	cases := []struct {
		query string
		opts  sql.Options
		scans string // the scans' columns, in plan order; "" when refused
		err   string // the refusal's construct, line:column and a part of its message
	}{
		// issue 41: this compared texts (neither side met a number).
		{"SELECT p.civ FROM match_players p JOIN matches m ON p.match = m.token WHERE p.rating > m.average_rating", text,
			"match text,rating number,civ text|token text,average_rating number", ""},
		{"SELECT rating, winner, mirror, duration FROM match_players, matches", text, "rating number,winner bool|mirror bool,duration duration", ""},
		{"SELECT rating, winner FROM match_players", text, "rating number,winner bool", ""},
		{"SELECT duration, DURATION_SECONDS(duration) FROM matches", text, "duration duration", ""},
		{"SELECT civ FROM match_players WHERE winner = 1", text, "",
			"1:44: comparison =: winner is a boolean and 1 is a number: a comparison is of two values of one kind"},
		{"SELECT civ FROM match_players WHERE rating = civ", text, "", "1:44: comparison =: rating is a number and civ is a text"},
		{"SELECT civ FROM match_players WHERE rating > '1500'", text, "", "1:44: comparison >: rating is a number and '1500' is a text"},
		{"SELECT token FROM matches WHERE duration > 7200", text, "", "DURATION_SECONDS(column)"},
		{"SELECT token FROM matches WHERE num_players > 2", text, "", "a text column is read as a number with ::numeric"},
		// A cast reads a text column as a number or a boolean: a scan column of its own.
		{"SELECT num_players, token FROM matches WHERE num_players::numeric > 2", text, "token text,num_players number,num_players text", ""},
		{"SELECT r.civ FROM r WHERE CAST(r.n AS numeric) >= 1 AND r.flag::boolean AND DURATION_SECONDS(r.d) > 60", text,
			"civ text,n number,flag bool,d duration", ""},
		{"SELECT civ FROM match_players WHERE rating::text = 'x'", text, "", "1:37: CAST: rating is a number: a cast reads a text column"},
		{"SELECT civ FROM match_players WHERE (rating + 1)::text = 'x'", text, "", "1:38: CAST: rating + 1 is a number"},
		{"SELECT x::numeric FROM (SELECT civ AS x FROM match_players) s", text, "", "not one a subquery computes"},
		{"SELECT r.civ FROM r WHERE r.n > 1", text, "", "1:31: comparison >: r.n is a text and 1 is a number"},
		// A subquery's columns keep their table's kinds.
		{"WITH s AS (SELECT rating FROM match_players) SELECT rating FROM s WHERE rating > 2000", text, "rating number", ""},
		{"WITH s AS (SELECT civ FROM match_players) SELECT civ FROM s WHERE civ > 2000", text, "", "civ is a text and 2000 is a number"},
		// Without TextTables, a table's columns take their uses' kinds.
		{"SELECT r.civ FROM r WHERE r.n > 1 AND r.flag", sql.Options{}, "civ text,n number,flag bool", ""},
		{"SELECT civ FROM match_players WHERE winner = 1", sql.Options{}, "", "winner is a boolean and 1 is a number"},
	}
	for _, c := range cases {
		root, err := sql.CompileWith(c.query, kindsCatalog, c.opts)
		if c.err != "" {
			var e *sql.Error
			if !errors.As(err, &e) || !strings.Contains(e.Error(), c.err) {
				t.Errorf("%s: got %v, want an error with %q", c.query, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.query, err)
			continue
		}
		if got := scanColumns(root); got != c.scans {
			t.Errorf("%s: scans %q, want %q\n%s", c.query, got, c.scans, root)
		}
	}
}

// scanColumns is the scans' output columns with their kinds, in plan
// order, a scan's separated by '|'.
func scanColumns(root *plan.Node) string {
	var scans []string
	var walk func(n *plan.Node)
	walk = func(n *plan.Node) {
		if n.Op == plan.Scan {
			var cols []string
			for _, c := range n.Output {
				cols = append(cols, c.Name+" "+c.Kind())
			}
			scans = append(scans, strings.Join(cols, ","))
		}
		for _, in := range n.Input {
			walk(in)
		}
	}
	walk(root)
	return strings.Join(scans, "|")
}
