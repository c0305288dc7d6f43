package incr_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
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
	refused, maintained := 0, 0
	for seed := range uint64(runs) {
		c := sqlgen.GenerateWith(seed, sqlgen.Options{ExprSubqueries: true})
		if !c.ExprSubquery {
			continue
		}
		tables, cat := sqlgenTables(t, c)
		root, err := sql.Compile(c.Query, cat)
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, c.Query, err)
		}
		if seed%2 == 1 {
			root = rewrite.Optimize(root)
		}
		mark := hasMarkJoin(root)
		err = incr.Check(root)
		if mark {
			if !errors.Is(err, incr.ErrUnsupported) || !strings.Contains(err.Error(), "IN (SELECT ...)") {
				t.Fatalf("seed %d: %s: Check = %v, want the mark join refused", seed, c.Query, err)
			}
			if _, err := incr.New(root); !errors.Is(err, incr.ErrUnsupported) {
				t.Fatalf("seed %d: %s: New = %v, want it refused", seed, c.Query, err)
			}
			refused++
			continue
		}
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, c.Query, err)
		}
		maintained++
		r := rand.New(rand.NewPCG(seed, 45))
		runEpochs(t, fmt.Sprintf("seed %d: %s", seed, c.Query), root, epochs(r, tables, 1+r.IntN(6)))
	}
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
