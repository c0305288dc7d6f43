package sql

import (
	"strings"
	"testing"
)

var limitsCatalog = Catalog{"match_players": {"token", "match", "rating", "civ", "winner"}}

// grouped nests count(*) d deep above the aggregate, beside a group key
// of an expression: each level is matched against the keys.
func grouped(d int) string {
	return "select rating + 1, " + strings.Repeat("(", d) + "count(*)" + strings.Repeat(" + 1)", d) +
		" from match_players group by rating + 1"
}

// TestBindRendersLinearly: binding renders the query's expressions as
// text (to match group keys and name columns) in a number of bytes
// linear in the query, not once per level of nesting: twice as deep,
// about twice the bytes (rendering each level's subtree, as postExpr
// did, was four times).
func TestBindRendersLinearly(t *testing.T) {
	rendered := func(d int) int {
		t.Helper()
		_, c, err := compile(grouped(d), limitsCatalog, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c.rendered
	}
	n, n2 := rendered(MaxExprDepth/4), rendered(MaxExprDepth/2)
	if n2 > 5*n/2 {
		t.Errorf("depth %d rendered %d bytes, depth %d %d: more than linear", MaxExprDepth/4, n, MaxExprDepth/2, n2)
	}
}

// BenchmarkCompileDeep compiles a query whose expressions nest near
// MaxExprDepth, above and below the aggregate.
func BenchmarkCompileDeep(b *testing.B) {
	d := MaxExprDepth - 8
	q := "select rating + 1, " + strings.Repeat("(", d) + "count(*)" + strings.Repeat(" + 1)", d) +
		", sum(" + strings.Repeat("(", d) + "rating" + strings.Repeat(" * 2)", d) + ")" +
		" from match_players where " + strings.Repeat("-(", d) + "rating" + strings.Repeat(")", d) + " > 1" +
		" group by rating + 1"
	for b.Loop() {
		root, err := Compile(q, limitsCatalog)
		if err != nil {
			b.Fatal(err)
		}
		_ = root.String()
	}
}
