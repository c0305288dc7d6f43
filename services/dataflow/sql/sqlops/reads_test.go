package sqlops_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// TestReadCols: a join's readers read the columns their expressions
// name, through the filters and joins after it, and no others (the keys
// it joined on, mostly); every column when a reader may read any.
func TestReadCols(t *testing.T) {
	tables := map[string]*exec.Table{
		"matches":       {Columns: []string{"token", "map", "ladder"}},
		"match_players": {Columns: []string{"match", "civ", "team", "winner"}},
	}
	for _, tc := range []struct {
		name, sql string
		// per join, in the plan's order: its columns, a read one in
		// capitals; "*" when every one is read.
		want []string
	}{
		{"self-join on two keys, a filter and an aggregate",
			`SELECT p.civ, q.civ, COUNT(*), COUNT(*) FILTER (WHERE p.winner) FROM match_players p
			 JOIN match_players q ON q.match = p.match AND q.team = p.team WHERE p.civ < q.civ GROUP BY 1, 2`,
			[]string{"match CIV team WINNER match CIV team"}},
		{"a projection",
			`SELECT m.map, p.civ FROM match_players p JOIN matches m ON m.token = p.match ORDER BY 1, 2`,
			[]string{"match CIV token MAP"}},
		{"a join read by another, on the first's key",
			`SELECT a.civ, b.civ, COUNT(*) FROM matches m JOIN match_players a ON a.match = m.token
			 JOIN match_players b ON b.match = m.token GROUP BY 1, 2`,
			[]string{"TOKEN match CIV", "token match CIV match CIV"}},
		{"every column to the sink",
			`SELECT * FROM matches m JOIN match_players p ON p.match = m.token`,
			[]string{"*"}},
		{"an outer join's NULL test",
			`SELECT m.ladder, COUNT(p.match) FROM matches m LEFT JOIN match_players p ON p.match = m.token GROUP BY 1`,
			[]string{"token LADDER MATCH"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planOf(t, map[string]string{"q": tc.sql}, []string{"q"}, tables, 2)
			var got []string
			for _, o := range p.Ops {
				if o.Kind != plan.Join {
					continue
				}
				read := sqlops.ReadCols(p, o)
				if read == nil {
					got = append(got, "*")
					continue
				}
				var cols []string
				for i, c := range o.Output() {
					name := c.Name
					if read[i] {
						name = strings.ToUpper(name)
					}
					cols = append(cols, name)
				}
				got = append(got, strings.Join(cols, " "))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q\n%s", got, tc.want, p)
			}
		})
	}
}
