package parse

import "testing"

// TestSetOps: UNION, INTERSECT and EXCEPT group as PostgreSQL groups
// them (INTERSECT first, the others left to right), parentheses make an
// operand, and the last ORDER BY, LIMIT and OFFSET are the whole's.
func TestSetOps(t *testing.T) {
	cases := []struct{ query, tree string }{
		{"select a from t union select b from u", "(a union b)"},
		{"select a from t union all select b from u except select c from v", "((a union all b) except c)"},
		{"select a from t union select b from u intersect select c from v", "(a union (b intersect c))"},
		{"select a from t intersect all select b from u union distinct select c from v", "((a intersect all b) union c)"},
		{"(select a from t union select b from u) intersect select c from v order by 1 limit 2 offset 1", "((a union b) intersect c) order limit offset"},
		{"with q as (select a from t) select a from q except (select b from u order by b limit 1)", "with (a except b order limit)"},
		{"((select a from t) union (select b from u)) except select c from v", "((a union b) except c)"},
	}
	for _, c := range cases {
		s, err := Parse(c.query, 128)
		if err != nil {
			t.Errorf("%q: %v", c.query, err)
			continue
		}
		if got := setTree(s); got != c.tree {
			t.Errorf("%q: %s, want %s", c.query, got, c.tree)
		}
	}
}

// setTree renders a statement's set operations, each SELECT by its
// first item, with the clauses of the whole.
func setTree(s *Select) string {
	out := ""
	if s.With != nil {
		out = "with "
	}
	if s.Set == nil {
		out += String(s.Items[0].Expr)
	} else {
		op := s.Set.Op
		if s.Set.All {
			op += " all"
		}
		out += "(" + setTree(s.Set.Left) + " " + op + " " + setTree(s.Set.Right) + ")"
	}
	if s.OrderBy != nil {
		out += " order"
	}
	if s.Limit != nil {
		out += " limit"
	}
	if s.Offset != nil {
		out += " offset"
	}
	return out
}

// TestParenthesizedSetOpsAsSubqueries: a subquery in FROM, in IN and in
// a CTE may start with the parentheses of a set operation's operand,
// and a parenthesized join or expression is still one.
func TestParenthesizedSetOpsAsSubqueries(t *testing.T) {
	for _, q := range []string{
		"select a from ((select a from t) union (select b from u)) x",
		"select a from t where a in ((select b from u) except select c from v)",
		"with w as ((select a from t) intersect (select b from u)) select a from w",
		"select a from ((t join u on t.a = u.b)) where a in ((1), 2)",
	} {
		if _, err := Parse(q, 128); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
}
