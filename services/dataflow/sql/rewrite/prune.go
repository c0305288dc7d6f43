package rewrite

import (
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// prune returns a copy of n computing only the columns need marks (nil:
// all of them) and what it needs for them, and where each of n's columns
// is in the copy's output (-1: dropped). It is how a column read only by
// a filter at the gateway stays there instead of travelling on with the
// rows. A node that needs every column of its input (DISTINCT, a sort,
// which orders by every column last) keeps them all; an aggregate keeps
// all its outputs.
func prune(n *plan.Node, need []bool) (*plan.Node, []int) {
	if need == nil {
		need = all(len(n.Output))
	}
	c := *n
	switch n.Op {
	case plan.Scan:
		keep := kept(need)
		c.Output = pick(n.Output, keep)
		return &c, positions(len(n.Output), keep)
	case plan.Filter:
		in, m := prune(n.Input[0], plan.MarkCols(slices.Clone(need), n.Cond))
		c.Input, c.Cond, c.Output = []*plan.Node{in}, remap(n.Cond, m), in.Output
		// The columns only the condition read go no further than where
		// rows are parsed (above, a projection would cost a pass).
		var exprs []*plan.Expr
		var keep []int
		for i, j := range m {
			if j >= 0 && need[i] {
				exprs = append(exprs, ColRef(j, in.Output[j]))
				keep = append(keep, i)
			}
		}
		if len(exprs) == len(in.Output) || !parsed(in) {
			return &c, m
		}
		return &plan.Node{Op: plan.Project, Input: []*plan.Node{&c}, Exprs: exprs, Output: pick(n.Output, keep)}, positions(len(n.Output), keep)
	case plan.Project:
		keep := kept(need)
		inNeed := make([]bool, len(n.Input[0].Output))
		for _, i := range keep {
			plan.MarkCols(inNeed, n.Exprs[i])
		}
		in, m := prune(n.Input[0], inNeed)
		c.Input, c.Exprs, c.Output = []*plan.Node{in}, nil, pick(n.Output, keep)
		for _, i := range keep {
			c.Exprs = append(c.Exprs, remap(n.Exprs[i], m))
		}
		if in.Op == plan.Project && columnsOnly(in.Exprs) {
			// A projection that only picks columns (a swapped join's,
			// sides.go) is one with the projection above it.
			for i, e := range c.Exprs {
				c.Exprs[i] = Subst(e, in.Exprs)
			}
			c.Input = in.Input
		}
		return &c, positions(len(n.Output), keep)
	case plan.Join, plan.SemiJoin:
		nl := len(n.Input[0].Output)
		l, ml := prune(n.Input[0], plan.MarkCols(slices.Clone(need[:nl]), n.LeftKey))
		rNeed := make([]bool, len(n.Input[1].Output))
		if n.Op == plan.Join {
			copy(rNeed, need[nl:])
			plan.MarkCols(rNeed, n.RightKey)
		} else {
			rNeed[0] = true // the semi-join's set: its first column
		}
		r, mr := prune(n.Input[1], rNeed)
		c.Input, c.LeftKey, c.RightKey, c.Output = []*plan.Node{l, r}, remap(n.LeftKey, ml), remap(n.RightKey, mr), l.Output
		if n.Op == plan.SemiJoin {
			return &c, ml
		}
		c.Output = append(slices.Clone(l.Output), r.Output...)
		for _, j := range mr {
			if j >= 0 {
				j += len(l.Output)
			}
			ml = append(ml, j)
		}
		return &c, ml
	case plan.Aggregate:
		inNeed := make([]bool, len(n.Input[0].Output))
		for _, k := range n.Keys {
			plan.MarkCols(inNeed, k)
		}
		for _, a := range n.Aggs {
			plan.MarkCols(inNeed, a.Arg)
		}
		in, m := prune(n.Input[0], inNeed)
		c.Input, c.Keys, c.Aggs = []*plan.Node{in}, nil, nil
		for _, k := range n.Keys {
			c.Keys = append(c.Keys, remap(k, m))
		}
		for _, a := range n.Aggs {
			c.Aggs = append(c.Aggs, &plan.Agg{Func: a.Func, Arg: remap(a.Arg, m)})
		}
		return &c, positions(len(n.Output), kept(all(len(n.Output))))
	case plan.Window:
		return pruneWindow(n, need) // window.go
	}
	// Distinct, sort, limit, row number: every column of the input.
	c.Input = nil
	for _, in := range n.Input {
		p, _ := prune(in, nil)
		c.Input = append(c.Input, p)
	}
	return &c, positions(len(n.Output), kept(all(len(n.Output))))
}

// parsed reports whether n is a scan under filters and projections: rows
// as they are parsed, where a projection costs nothing more.
func parsed(n *plan.Node) bool {
	switch n.Op {
	case plan.Scan:
		return true
	case plan.Filter, plan.Project:
		return parsed(n.Input[0])
	}
	return false
}

func all(n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = true
	}
	return b
}

// kept lists the marked columns; the first when none is, so that a node
// keeps a column (COUNT(*) over a table reads none, yet counts its rows).
func kept(need []bool) []int {
	var keep []int
	for i, ok := range need {
		if ok {
			keep = append(keep, i)
		}
	}
	if len(keep) == 0 && len(need) > 0 {
		keep = []int{0}
	}
	return keep
}

func pick(cols []plan.Column, keep []int) []plan.Column {
	out := make([]plan.Column, len(keep))
	for i, k := range keep {
		out[i] = cols[k]
	}
	return out
}

// positions maps n columns to their place among keep, -1 when not kept.
func positions(n int, keep []int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = slices.Index(keep, i)
	}
	return m
}

// remap is a copy of e reading column m[i] for each column i.
func remap(e *plan.Expr, m []int) *plan.Expr {
	return Columns(e, func(c *plan.Expr) *plan.Expr {
		r := *c
		r.Col = m[c.Col]
		return &r
	})
}
