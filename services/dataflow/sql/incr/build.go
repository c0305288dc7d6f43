package incr

import (
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// opInputs are the nodes whose changes the operator of n takes: n's
// inputs, but for the nodes one operator takes in with n: a LIMIT's or a
// ROW_NUMBER's nodes down to its Sort (the operator takes the Sort's
// input), a HAVING's aggregate over rows that only arrive (it takes the
// aggregate's).
func opInputs(n *plan.Node) []*plan.Node {
	switch {
	case n.Op == plan.Limit || n.Op == plan.RowNumber:
		sort, _, _ := split(n)
		return sort.Input
	case fusesHaving(n):
		return n.Input[0].Input
	}
	return n.Input
}

// fusesHaving reports whether n is a HAVING that one operator computes
// with its aggregate: a Filter over an Aggregate whose input only grows.
func fusesHaving(n *plan.Node) bool {
	if n.Op != plan.Filter || len(n.Input) != 1 || n.Input[0].Op != plan.Aggregate || len(n.Input[0].Input) != 1 {
		return false
	}
	grows, _ := monotone(n.Input[0].Input[0])
	return grows
}

// newOp makes the operator of n (Check has passed it) whose inputs are
// opInputs(n), grows saying of each whether it only grows. Only the
// inputs' Output columns are read of the nodes below n (those opInputs
// takes in with it excepted). keys, when not nil, is the table a keyed
// operator keeps its keys in (shared.go); nil: one of its own.
func newOp(n *plan.Node, grows []bool, keys *exec.KeyTable) op {
	if n.Op == plan.Limit || n.Op == plan.RowNumber {
		// A subquery's LIMIT or ROW_NUMBER: the nodes down to its Sort
		// are one operator, as the answer's are.
		sort, upper, _ := split(n)
		return subTop{newTop(n, sort, upper, grows[0])}
	}
	if fusesHaving(n) {
		return newAgg(n.Input[0], n.Cond, keys)
	}
	switch n.Op {
	case plan.Scan:
		return newScan(n)
	case plan.Filter:
		return filterOp{exec.NewRowFilter(n.Cond)}
	case plan.Project:
		return projectOp{n.Exprs}
	case plan.Sort:
		return passOp{}
	case plan.Join:
		return newJoin(n)
	case plan.SemiJoin:
		return newSemi(n, grows[1], keys)
	case plan.Aggregate:
		if grows[0] {
			return newAgg(n, nil, keys)
		}
		return newRegroup(n, complete(n))
	case plan.Distinct:
		return newDistinct(n, grows[0], keys)
	case plan.UnionAll:
		return unionAllOp{}
	case plan.Window:
		return newWindow(n) // window.go
	}
	return nil
}
