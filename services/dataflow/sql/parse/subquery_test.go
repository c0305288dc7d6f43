package parse

import (
	"testing"
)

// TestScalarSubqueryInParentheses: parentheses around a scalar subquery
// and an operator are an expression, as PostgreSQL reads them, while
// parentheses around a (parenthesized) query stay a subquery.
func TestScalarSubqueryInParentheses(t *testing.T) {
	for _, c := range []struct {
		q     string
		inner bool // the comparison's left side is a subquery, not (subquery + a)
	}{
		{"select a from t where ((select max(b) from u) + a) > 1", false},
		{"select a from t where (((select max(b) from u) + a)) > 1", false},
		{"select a from t where ((select max(b) from u)) > 1", true},
		{"select a from t where ((select b from u) union (select c from v)) > 1", true},
		{"select a from t where ((select b from u) order by 1 limit 1) > 1", true},
	} {
		s, err := Parse(c.q, 128)
		if err != nil {
			t.Errorf("%q: %v", c.q, err)
			continue
		}
		cmp, ok := s.Where.(*Binary)
		if !ok {
			t.Fatalf("%q: WHERE is %T", c.q, s.Where)
		}
		switch l := cmp.L.(type) {
		case *Subquery:
			if !c.inner {
				t.Errorf("%q: the left side is a subquery, want (subquery + a)", c.q)
			}
		case *Binary:
			if _, ok := l.L.(*Subquery); c.inner || !ok || l.Op != "+" {
				t.Errorf("%q: the left side is %s", c.q, String(l))
			}
		default:
			t.Errorf("%q: the left side is %T", c.q, l)
		}
	}
}
