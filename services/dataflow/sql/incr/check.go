package incr

import (
	"errors"
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// ErrUnsupported is the error Check wraps when a plan has a construct a
// standing query does not maintain yet.
var ErrUnsupported = errors.New("not supported in a standing query")

// Check reports whether the engine maintains the plan's answer exactly,
// and when not, which construct it does not, wrapping ErrUnsupported: a
// job refuses such a query when it is created, rather than publish a
// wrong version. Every plan services/dataflow/sql's Compile makes
// passes today; what it refuses is a plan of an operator it does not
// know, or whose ORDER BY ... LIMIT has no Sort under it.
func Check(root *plan.Node) error {
	sort, _, err := split(root)
	if err != nil {
		return err
	}
	_, err = monotone(sort.Input[0])
	return err
}

// split finds the plan's answer Sort: the nodes above it (the lowest
// first) are LIMIT, ROW_NUMBER, projections and filters.
func split(root *plan.Node) (*plan.Node, []*plan.Node, error) {
	var upper []*plan.Node
	n := root
	for n.Op != plan.Sort {
		switch n.Op {
		case plan.Limit, plan.RowNumber, plan.Project, plan.Filter:
		default:
			return nil, nil, fmt.Errorf("%w: the plan has no ORDER of its answer above its %s (a plan of services/dataflow/sql's Compile has one)", ErrUnsupported, n.Op)
		}
		if len(n.Input) != 1 {
			return nil, nil, fmt.Errorf("%s node with %d inputs", n.Op, len(n.Input))
		}
		upper = append(upper, n)
		n = n.Input[0]
	}
	if len(n.Input) != 1 {
		return nil, nil, fmt.Errorf("sort node with %d inputs", len(n.Input))
	}
	slices.Reverse(upper)
	return n, upper, nil
}

// monotone checks the subtree below the answer's Sort and reports
// whether its output only grows as rows are appended (no change of it
// ever retracts a row): scans, and filters, projections, joins,
// semi-joins and DISTINCT over such inputs. An aggregate's rows change
// as groups grow, so its output does not; nor does a semi-join's whose
// subquery has one.
func monotone(n *plan.Node) (bool, error) {
	want := 1
	switch n.Op {
	case plan.Scan:
		want = 0
	case plan.Join, plan.SemiJoin, plan.UnionAll:
		want = 2
	}
	if len(n.Input) != want {
		return false, fmt.Errorf("%s node with %d inputs", n.Op, len(n.Input))
	}
	if err := checkJoin(n); err != nil {
		return false, err
	}
	ins := make([]bool, len(n.Input))
	for i, in := range n.Input {
		m, err := monotone(in)
		if err != nil {
			return false, err
		}
		ins[i] = m
	}
	if n.Op == plan.Limit || n.Op == plan.RowNumber {
		// A subquery's ORDER BY ... LIMIT: maintained as the answer's is.
		if _, _, err := split(n); err != nil {
			return false, err
		}
	}
	return growsOf(n.Op, ins)
}

// growsOf is whether the output of an operator of kind k only grows,
// given whether each of its inputs' does (ins).
func growsOf(k plan.Op, ins []bool) (bool, error) {
	all := true
	for _, g := range ins {
		all = all && g
	}
	switch k {
	case plan.Scan:
		return true, nil
	case plan.Filter, plan.Project, plan.Sort, plan.Distinct, plan.Join, plan.SemiJoin, plan.UnionAll:
		return len(ins) > 0 && all, nil
	case plan.Aggregate, plan.Limit, plan.RowNumber, plan.Window: // a window's operator is refused (window.go)
		return false, nil
	}
	return false, fmt.Errorf("%w: the plan operator %q", ErrUnsupported, k)
}
