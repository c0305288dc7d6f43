package rewrite

import (
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// A Window node (plan.Window) reads its input's rows whole: no filter
// above it moves below it (pushFilters moves filters above joins only,
// and a filter below a window would change the partitions it computes
// over). Its input is pruned to the columns read above it and by its
// partition, order and functions: ROW_NUMBER orders peers by every
// column of its input, but two rows equal in every column that reaches
// the output are the same bytes, whichever number each gets.

// pruneWindow is prune of a Window node: its functions all kept, after
// the input's kept columns.
func pruneWindow(n *plan.Node, need []bool) (*plan.Node, []int) {
	nin := len(n.Input[0].Output)
	inNeed := slices.Clone(need[:nin])
	for _, p := range n.Partition {
		plan.MarkCols(inNeed, p)
	}
	for _, k := range n.WinOrder {
		plan.MarkCols(inNeed, k.Expr)
	}
	for _, f := range n.WinFuncs {
		plan.MarkCols(inNeed, f.Arg)
	}
	in, m := prune(n.Input[0], inNeed)
	c := *n
	c.Input, c.Partition, c.WinOrder, c.WinFuncs = []*plan.Node{in}, nil, nil, nil
	for _, p := range n.Partition {
		c.Partition = append(c.Partition, remap(p, m))
	}
	for _, k := range n.WinOrder {
		c.WinOrder = append(c.WinOrder, plan.WinKey{Expr: remap(k.Expr, m), Desc: k.Desc, NullsFirst: k.NullsFirst})
	}
	for _, f := range n.WinFuncs {
		var arg *plan.Expr
		if f.Arg != nil {
			arg = remap(f.Arg, m)
		}
		c.WinFuncs = append(c.WinFuncs, &plan.WinFunc{Func: f.Func, Arg: arg, Offset: f.Offset, Default: f.Default}) // Default is a Const
	}
	c.Output = append(slices.Clone(in.Output), n.Output[nin:]...)
	for i := range n.WinFuncs {
		m = append(m, len(in.Output)+i)
	}
	return &c, m
}
