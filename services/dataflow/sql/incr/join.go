package incr

import (
	"fmt"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// checkJoin refuses a join a standing query does not maintain: an outer
// one. Its output is not monotone (a left row's NULL-padded row must be
// retracted when its first match arrives in a later epoch), and this
// engine's join emits only pairs; so such a query is refused when its
// job is created, never answered wrongly.
func checkJoin(n *plan.Node) error {
	if n.Op != plan.Join || !n.JoinType.Outer() {
		return nil
	}
	if n.Subquery != "" { // the mark join of a subquery (services/dataflow/sql's subquery.go)
		return fmt.Errorf("%w: %s other than a top-level WHERE condition x IN (SELECT ...) (a row's answer changes when a match arrives in a later epoch, which a standing query does not do yet): run it as a batch job", ErrUnsupported, n.Subquery)
	}
	return fmt.Errorf("%w: %s JOIN (an outer join's unmatched rows are retracted when a match arrives in a later epoch, which a standing query does not do yet): run it as a batch job, or write an inner JOIN", ErrUnsupported, strings.ToUpper(string(n.JoinType)))
}
