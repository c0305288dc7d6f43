package rewrite

import (
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Optimize is n rewritten: the filters above joins pushed down, then the
// columns nothing reads pruned. The plan's answer is the same
// (oracle's TestOptimizeKeepsAnswers); n is not modified.
func Optimize(n *plan.Node) *plan.Node { return OptimizeFor(n, nil) }

// OptimizeFor is Optimize for a job whose tables' uploads end in order:
// after the filters are pushed down, each join whose left input ends
// first has its inputs swapped, so that it holds the input it has all of
// first (sides.go).
func OptimizeFor(n *plan.Node, order []string) *plan.Node {
	p, _ := prune(sides(pushFilters(n), order), nil)
	return p
}

// pushFilters returns n with every filter above a join pushed down
// (pushDown), copying what it changes.
func pushFilters(n *plan.Node) *plan.Node {
	c := *n
	c.Input = make([]*plan.Node, len(n.Input))
	for i, in := range n.Input {
		c.Input[i] = pushFilters(in)
	}
	if c.Op == plan.Filter && len(c.Input) == 1 && c.Input[0].Op == plan.Join && len(c.Input[0].Input) == 2 {
		return pushDown(&c)
	}
	return &c
}

// pushDown moves the conjuncts of a filter above a join that read one
// side only below it, onto that side; it returns f when none does.
func pushDown(f *plan.Node) *plan.Node {
	j := f.Input[0]
	nl := len(j.Input[0].Output)
	var left, right, rest []*plan.Expr
	toLeft, toRight := pushable(j.JoinType)
	for _, c := range Conjuncts(f.Cond) {
		lo, hi := colRange(c)
		switch {
		case hi < nl && toLeft:
			left = append(left, c)
		case lo >= nl && toRight:
			right = append(right, Shift(c, -nl))
		default:
			rest = append(rest, c)
		}
	}
	if len(left) == 0 && len(right) == 0 {
		return f
	}
	nj := *j
	nj.Input = []*plan.Node{filtered(j.Input[0], left), filtered(j.Input[1], right)}
	if len(rest) == 0 {
		return &nj
	}
	return &plan.Node{Op: plan.Filter, Input: []*plan.Node{&nj}, Cond: andAll(rest), Output: f.Output}
}

func filtered(n *plan.Node, conds []*plan.Expr) *plan.Node {
	if len(conds) == 0 {
		return n
	}
	f := &plan.Node{Op: plan.Filter, Input: []*plan.Node{n}, Cond: andAll(conds), Output: n.Output}
	if n.Op == plan.Join && len(n.Input) == 2 { // a join of three tables: on down
		return pushDown(f)
	}
	return f
}

// Conjuncts is the conditions e is the AND of (e itself when it is no
// AND); none when e is nil.
func Conjuncts(e *plan.Expr) []*plan.Expr {
	switch {
	case e == nil:
		return nil
	case e.Kind == plan.And:
		return append(Conjuncts(e.Args[0]), Conjuncts(e.Args[1])...)
	}
	return []*plan.Expr{e}
}

func andAll(es []*plan.Expr) *plan.Expr {
	var out *plan.Expr
	for _, e := range es {
		out = And(out, e)
	}
	return out
}

// And is a AND b; the other when one is nil (no condition).
func And(a, b *plan.Expr) *plan.Expr {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return &plan.Expr{Kind: plan.And, Type: plan.Bool, Args: []*plan.Expr{a, b}}
}

// colRange is the lowest and highest column e reads; -1, -1 when none.
func colRange(e *plan.Expr) (lo, hi int) {
	lo, hi = -1, -1
	var walk func(e *plan.Expr)
	walk = func(e *plan.Expr) {
		if e.Kind == plan.ColRef {
			if lo < 0 || e.Col < lo {
				lo = e.Col
			}
			hi = max(hi, e.Col)
		}
		for _, a := range e.Args {
			walk(a)
		}
	}
	walk(e)
	return lo, hi
}
