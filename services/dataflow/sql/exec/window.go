package exec

import (
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// Window functions (plan.Window): a node's rows are all its input's, so
// the operator is blocking. Window sorts them by partition, then by the
// window's order, then by every column (and scale) as sortRows does,
// which makes the peers' order, and so ROW_NUMBER, independent of the
// order rows arrived in; then it walks each partition's peer groups. An
// aggregate's value at a peer group is its accumulator's (the same acc
// the Aggregate node folds) after the partition's rows up to that group:
// the default frame, RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW.

// WindowFuncs are the window functions a query may call, by their lower
// case name; their aggregates are the AggFunc of the same name.
var WindowFuncs = map[string]bool{plan.WinRowNumber: true, plan.WinRank: true, plan.WinDenseRank: true, plan.WinLag: true, plan.WinLead: true,
	string(plan.Count): true, string(plan.Sum): true, string(plan.Avg): true, string(plan.Min): true, string(plan.Max): true}

// WinResultType is the type of f's column, its argument's type resolved:
// MIN and MAX the argument's, the others a number.
func WinResultType(f *plan.WinFunc) plan.Type {
	if f.Arg != nil && (f.Func == string(plan.Min) || f.Func == string(plan.Max) || f.Func == plan.WinLag || f.Func == plan.WinLead) {
		return f.Arg.Type
	}
	return plan.Number
}

// WindowColumns are a Window node's output columns over its input's:
// in, then one per function, named names (the binder's) or by the
// function.
func WindowColumns(in []plan.Column, funcs []*plan.WinFunc) []plan.Column {
	out := slices.Clone(in)
	for _, f := range funcs {
		out = append(out, plan.Column{Name: string(f.AppendTo(nil)), Type: WinResultType(f)})
	}
	return out
}

// WindowRows runs the Window node n over its input's batches (of n's
// columns before its functions'; n's Input is not read): one batch, its
// rows ordered by partition and the window's order.
func WindowRows(n *plan.Node, in []*Batch) (*Batch, error) {
	nin := len(n.Output) - len(n.WinFuncs)
	if nin < 0 {
		return nil, fmt.Errorf("window of %d columns and %d functions", len(n.Output), len(n.WinFuncs))
	}
	all := concat(types(n.Output[:nin]), in)
	part, err := evalAll(n.Partition, all)
	if err != nil {
		return nil, fmt.Errorf("window partition: %w", err)
	}
	order := make([]*plan.Expr, len(n.WinOrder))
	for i, k := range n.WinOrder {
		order[i] = k.Expr
	}
	ord, err := evalAll(order, all)
	if err != nil {
		return nil, fmt.Errorf("window order: %w", err)
	}
	perm := windowOrder(all, part, ord, n.WinOrder)
	sorted := gatherBatch(all, perm)
	part, ord = gatherAll(part, perm), gatherAll(ord, perm)
	out := &Batch{N: sorted.N, Cols: slices.Clone(sorted.Cols)}
	for _, f := range n.WinFuncs {
		col, err := windowColumn(f, sorted, part, ord)
		if err != nil {
			return nil, err
		}
		out.Cols = append(out.Cols, col)
	}
	return out, nil
}

// evalAll evaluates each expression over every row of b.
func evalAll(es []*plan.Expr, b *Batch) ([]*Vec, error) {
	out := make([]*Vec, len(es))
	for i, e := range es {
		v, err := eval(e, b)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// gatherAll is gather of each Vec.
func gatherAll(vs []*Vec, rows []int32) []*Vec {
	out := make([]*Vec, len(vs))
	for i, v := range vs {
		out[i] = gather(v, rows)
	}
	return out
}

// windowOrder is the permutation of all's rows by partition, then by the
// window's keys (ord, with keys' directions), then by every column and
// scale: a total order of the rows' bytes, as sortRows'.
func windowOrder(all *Batch, part, ord []*Vec, keys []plan.WinKey) []int32 {
	perm := make([]int32, all.N)
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(x, y int32) int {
		if c := compareRows(part, int(x), int(y)); c != 0 {
			return c
		}
		for i, v := range ord {
			if c := compareKey(v, int(x), v, int(y), keys[i].Desc, keys[i].NullsFirst); c != 0 {
				return c
			}
		}
		if c := compareRows(all.Cols, int(x), int(y)); c != 0 {
			return c
		}
		for _, v := range all.Cols {
			if c := compareScales(v, int(x), v, int(y)); c != 0 {
				return c
			}
		}
		return 0
	})
	return perm
}

// compareRows orders rows x and y by the values of vs, in turn.
func compareRows(vs []*Vec, x, y int) int {
	for _, v := range vs {
		if c := compare(v, x, v, y); c != 0 {
			return c
		}
	}
	return 0
}

// windowColumn computes f over the sorted rows, whose partition and
// order values are part and ord.
func windowColumn(f *plan.WinFunc, sorted *Batch, part, ord []*Vec) (*Vec, error) {
	var arg *Vec
	if f.Arg != nil {
		v, err := eval(f.Arg, sorted)
		if err != nil {
			return nil, fmt.Errorf("window %s: %w", f.Func, err)
		}
		arg = v
	}
	if f.Func == plan.WinLag || f.Func == plan.WinLead {
		return shifted(f, arg, sorted, part)
	}
	out := newBuilder(WinResultType(f), sorted.N)
	var a *acc
	var rank, dense int64
	for start := 0; start < sorted.N; {
		peers := start + 1 // the end of the peer group at start
		for peers < sorted.N && compareRows(part, start, peers) == 0 && compareRows(ord, start, peers) == 0 {
			peers++
		}
		if start == 0 || compareRows(part, start-1, start) != 0 {
			// A new partition.
			rank, dense = 0, 0
			if _, isRank := rankFuncs[f.Func]; !isRank {
				ag := &plan.Agg{Func: plan.AggFunc(f.Func), Arg: f.Arg}
				if ag.Func == plan.Count && f.Arg == nil {
					ag.Func = plan.CountStar
				}
				a = newAcc(ag, new([]*plan.Expr))
				a.in = aggInput{arg: f.Arg, cond: -1}
			}
		}
		dense++
		switch f.Func {
		case plan.WinRowNumber:
			for i := start; i < peers; i++ {
				rank++
				out.num(value.Int(rank))
			}
			start = peers
			continue
		case plan.WinRank:
			for range peers - start {
				out.num(value.Int(rank + 1))
			}
			rank += int64(peers - start)
			start = peers
			continue
		case plan.WinDenseRank:
			for range peers - start {
				out.num(value.Int(dense))
			}
			start = peers
			continue
		}
		var v *Vec
		if arg != nil {
			v = slice(arg, start, peers)
		}
		a.update(make([]int32, peers-start), v, nil, nil, 1)
		res := a.result(1)
		for range peers - start {
			out.from(res, 0)
		}
		start = peers
	}
	return out.v, nil
}

// shifted is LAG (LEAD) of arg over the sorted rows, whose partition
// values are part: per row, arg's value Offset rows before (after) it in
// its partition, else the Default (NULL without one). The rows' order
// among peers is the sort's total one, as ROW_NUMBER's.
func shifted(f *plan.WinFunc, arg *Vec, sorted *Batch, part []*Vec) (*Vec, error) {
	n := sorted.N
	null := newBuilder(arg.Type, 1)
	null.null()
	def := null.v
	if f.Default != nil {
		v, err := evalAt(f.Default, sorted)
		if err != nil {
			return nil, fmt.Errorf("window %s: %w", f.Func, err)
		}
		def = v
	}
	step := int(f.Offset)
	if f.Func == plan.WinLag {
		step = -step
	}
	out := newBuilder(arg.Type, n)
	for start := 0; start < n; {
		end := start + 1
		for end < n && compareRows(part, start, end) == 0 {
			end++
		}
		for i := start; i < end; i++ {
			if j := i + step; j >= start && j < end {
				out.from(arg, j)
			} else {
				out.from(def, at(def, i))
			}
		}
		start = end
	}
	return out.v, nil
}

// rankFuncs are the window functions that are no aggregate.
var rankFuncs = map[string]struct{}{plan.WinRowNumber: {}, plan.WinRank: {}, plan.WinDenseRank: {}}
