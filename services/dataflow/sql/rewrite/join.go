package rewrite

import "github.com/wololo/wololo/services/dataflow/sql/plan"

// pushable says to which side of a join of type t a condition above it
// that reads that side only may move. Below an outer join, a condition
// on the side whose columns it pads with NULLs would drop rows before
// the join that then come out of it padded, where above it the padded
// row fails the condition (or passes it, IS NULL): so only the side an
// outer join keeps every row of takes them (a LEFT join's left, a RIGHT
// join's right, a FULL join's neither).
func pushable(t plan.JoinType) (left, right bool) {
	return !t.KeepsRight(), !t.KeepsLeft()
}
