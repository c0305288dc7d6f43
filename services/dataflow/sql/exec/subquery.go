package exec

import (
	"errors"
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// ErrSubqueryRows is the error of a scalar subquery of more than one
// row, in PostgreSQL's words: the job fails with it.
var ErrSubqueryRows = errors.New("more than one row returned by a subquery used as an expression")

// oneRowVec is ONE_ROW(count, x) (plan.FnOneRow): x, or ErrSubqueryRows
// where count is more than 1.
func oneRowVec(args []*Vec, n int) (*Vec, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("%s of %d arguments", plan.FnOneRow, len(args))
	}
	for i := range n {
		j := at(args[0], i)
		if args[0].IsNull(j) {
			continue
		}
		if c, ok := args[0].Nums[j].UnscaledAt(0); !ok || c > 1 {
			return nil, ErrSubqueryRows
		}
	}
	return args[1], nil
}
