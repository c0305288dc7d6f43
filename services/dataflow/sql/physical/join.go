package physical

import (
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// joinPart is how a join's output is partitioned, given its inputs'
// (left, right; nl the left input's columns): by what the left input is
// partitioned by, and the right input's shifted past the left columns,
// but for the side whose columns an outer join pads with NULLs. An
// unmatched row stays on the instance of its own side's key, so its
// NULLs are on every instance: a LEFT join's output is partitioned as
// its left input only, a RIGHT join's as its right input, a FULL join's
// by nothing.
func joinPart(t plan.JoinType, left, right [][]*plan.Expr, nl int) [][]*plan.Expr {
	var out [][]*plan.Expr
	if !t.KeepsRight() {
		out = slices.Clone(left)
	}
	if !t.KeepsLeft() {
		for _, alt := range right {
			out = append(out, shiftAll(alt, nl))
		}
	}
	return out
}
