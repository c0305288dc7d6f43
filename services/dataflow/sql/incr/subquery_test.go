package incr_test

import (
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// TestExprSubqueries: a standing query of x [NOT] IN (SELECT ...) other
// than a top-level WHERE condition (a mark join, whose row changes when
// a match arrives in a later epoch) is refused by Check and New, naming
// the construct; EXISTS and scalar subqueries (a cross product with a
// one-row aggregate, whose row is retracted and added again when the
// aggregate changes) are maintained exactly over random epochs.
func TestExprSubqueries(t *testing.T) {
	runs := 300
	if testing.Short() {
		runs = 100
	}
	mark := func(_ sqlgen.Case, root *plan.Node) bool { return hasMarkJoin(root) }
	refused, maintained := refusedOrMaintained(t, runs, sqlgen.Options{ExprSubqueries: true}, mark, "IN (SELECT ...)", 45)
	t.Logf("%d mark joins refused, %d EXISTS or scalar subqueries maintained, of %d seeds", refused, maintained, runs)
	if refused < runs/10 || maintained < runs/10 {
		t.Errorf("%d refused, %d maintained: too few to test them", refused, maintained)
	}
}

// hasMarkJoin reports whether n has the LEFT join of a subquery.
func hasMarkJoin(n *plan.Node) bool {
	if n.Op == plan.Join && n.Subquery != "" && n.JoinType.Outer() {
		return true
	}
	for _, in := range n.Input {
		if hasMarkJoin(in) {
			return true
		}
	}
	return false
}
