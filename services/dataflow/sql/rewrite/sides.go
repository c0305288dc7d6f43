package rewrite

import (
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// The build side of a join (sides): a join holds its right input's rows
// (exec.Join), and holds each left row only until its right input has
// ended, probing the left rows as they come after that (sqlops' probing).
// So a join whose right input ends first holds that input alone, while
// one whose left input ends first holds both: every left row, waiting,
// and every right row. A job's inputs end one after the other, in the
// order they are uploaded (the CLI's and the demo's: matches.csv, then
// match_players.csv, then each --table), so an input's end is its last
// table's place in that order, and a join whose left input ends first
// has its inputs swapped: the same join of the other type (a LEFT join
// a RIGHT one) under a projection that puts the columns back in their
// order. A join of the same end on both sides (a self-join) is left as
// written. This is DuckDB's "build on the smaller side" with the only
// size a streaming job knows before its rows: which side it has all of
// first. The answer is the same whatever the order (the join is one
// relation either way); only the memory it holds changes, and a client
// that uploads in another order gets the same answers.

// sides is n with each join's inputs swapped where its left one ends
// first in order (the job's tables in the order their uploads end; a
// table it does not name ends last). It copies what it changes.
func sides(n *plan.Node, order []string) *plan.Node {
	if len(order) == 0 {
		return n
	}
	c := *n
	c.Input = make([]*plan.Node, len(n.Input))
	for i, in := range n.Input {
		c.Input[i] = sides(in, order)
	}
	if c.Op == plan.Filter && c.Input[0].Op == plan.Project && columnsOnly(c.Input[0].Exprs) {
		// A filter over a swapped join's projection (one the push-down
		// left above the join: it reads both sides) goes below it, so
		// that it stays next to the join.
		p := *c.Input[0]
		f := c
		f.Input, f.Cond, f.Output = p.Input, Subst(c.Cond, p.Exprs), p.Input[0].Output
		p.Input = []*plan.Node{&f}
		return &p
	}
	if c.Op != plan.Join || len(c.Input) != 2 || c.Subquery != "" {
		return &c
	}
	if ends(c.Input[0], order) >= ends(c.Input[1], order) {
		return &c
	}
	return swapped(&c)
}

// ends is where n's last table comes in order: the place of its input
// that ends last (-1: n scans no table).
func ends(n *plan.Node, order []string) int {
	if n.Op == plan.Scan {
		if i := slices.Index(order, n.Table); i >= 0 {
			return i
		}
		return len(order)
	}
	end := -1
	for _, in := range n.Input {
		end = max(end, ends(in, order))
	}
	return end
}

// swapped is join j with its inputs swapped, under a projection of its
// columns in j's order.
func swapped(j *plan.Node) *plan.Node {
	l, r := j.Input[0], j.Input[1]
	s := *j
	s.Input = []*plan.Node{r, l}
	s.LeftKey, s.RightKey = j.RightKey, j.LeftKey
	s.Output = append(slices.Clone(r.Output), l.Output...)
	if j.JoinType.Outer() {
		s.JoinType = j.JoinType.Mirrored()
	}
	nl, nr := len(l.Output), len(r.Output)
	exprs := make([]*plan.Expr, 0, nl+nr)
	for i, col := range l.Output {
		exprs = append(exprs, ColRef(nr+i, col))
	}
	for i, col := range r.Output {
		exprs = append(exprs, ColRef(i, col))
	}
	return &plan.Node{Op: plan.Project, Input: []*plan.Node{&s}, Exprs: exprs, Output: j.Output}
}
