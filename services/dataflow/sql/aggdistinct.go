package sql

import (
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// FILTER and DISTINCT on aggregates are bound onto the aggregates the
// engine has, so that every layer after the binder (exec, the rewrites,
// the physical plan, the standing jobs' incr) runs them as it runs any
// other plan:
//
//   - agg(x) FILTER (WHERE c) is agg(CASE WHEN c THEN x END), and
//     COUNT(*) FILTER (WHERE c) is COUNT(CASE WHEN c THEN 1 END): a row
//     where c is not true adds a NULL, which every aggregate skips
//     (filtered);
//   - MIN(DISTINCT x) and MAX(DISTINCT x) are MIN(x) and MAX(x);
//   - the other aggregates of DISTINCT x (COUNT, SUM, AVG, STDDEV_SAMP)
//     make the aggregate two (splitDistinctAggs): an inner one grouped
//     by the group key and x, then the outer one grouped by the key,
//     where each distinct aggregate reads x once per value of its group,
//     and each plain aggregate of the same SELECT merges its inner
//     partials (COUNT's and COUNT(*)'s counts summed, SUM's sums summed,
//     MIN of minima, MAX of maxima). The inner aggregate is keyed by the
//     group key and x: the physical planner shuffles its rows by them
//     (the values are exact decimals, equal by value), as any other
//     GROUP BY.
//
// Refused by name: DISTINCT aggregates of two different arguments in one
// SELECT, and AVG or STDDEV_SAMP without DISTINCT beside a DISTINCT
// aggregate (neither merges exactly from partials of the plan's
// aggregates).

// aggNote is what the checks of checkDistinctAggs need of one aggregate
// a SELECT calls.
type aggNote struct {
	pos      int
	name     string // the function, upper case
	fn       plan.AggFunc
	distinct bool
	arg      string // DISTINCT's argument as the parser renders it
}

// filtered is a FILTER (WHERE c) aggregate call as the call of the
// aggregate of CASE WHEN c THEN x END (x 1 for COUNT(*)).
func filtered(a *parse.Call) *parse.Call {
	f := *a
	f.Filter = nil
	arg := parse.Expr(&parse.Literal{Pos: a.Pos, Kind: parse.NumberLit, Text: "1"})
	if !a.Star && len(a.Args) == 1 {
		arg = a.Args[0]
	}
	f.Star = false
	if a.Star || len(a.Args) == 1 {
		f.Args = []parse.Expr{&parse.Case{Pos: a.Filter.Position(), Whens: []parse.When{{Cond: a.Filter, Val: arg}}}}
	}
	return &f
}

// filterCond checks that a's FILTER (WHERE c) is a condition over the
// FROM clause's row, as WHERE's, naming FILTER where it is not.
func (lv *level) filterCond(a *parse.Call) error {
	post := lv.post
	lv.post = false
	_, v, err := lv.rowExpr(a.Filter)
	lv.post = post
	if err != nil {
		return err
	}
	return lv.unify(v, known(plan.Bool), a.Filter.Position(), "FILTER (WHERE ...)")
}

// noteAggregate records the aggregate agg a calls (a new one of the
// level) for checkDistinctAggs, and marks it for splitDistinctAggs when
// it is of DISTINCT.
func (lv *level) noteAggregate(a *parse.Call, agg *plan.Agg, upper string) error {
	n := aggNote{pos: a.Pos, name: upper, fn: agg.Func, distinct: a.Distinct}
	if a.Distinct {
		if a.Star || len(a.Args) != 1 {
			return lv.err(a.Pos, upper+"(DISTINCT ...)", "takes one argument")
		}
		n.arg = lv.c.render(a.Args[0])
		if lv.c.distinctAggs == nil {
			lv.c.distinctAggs = map[*plan.Agg]bool{}
		}
		lv.c.distinctAggs[agg] = true
	}
	lv.aggNotes = append(lv.aggNotes, n)
	return nil
}

// checkDistinctAggs refuses what splitDistinctAggs cannot split: DISTINCT
// aggregates of two arguments, and AVG or STDDEV_SAMP beside them.
func (lv *level) checkDistinctAggs() error {
	first := slices.IndexFunc(lv.aggNotes, func(n aggNote) bool { return n.distinct })
	if first < 0 {
		return nil
	}
	arg := lv.aggNotes[first].arg
	for _, n := range lv.aggNotes {
		switch {
		case n.distinct && n.arg != arg:
			return lv.err(n.pos, n.name+"(DISTINCT ...)", "not supported beside an aggregate of DISTINCT %s: one SELECT's DISTINCT aggregates take one argument", arg)
		case !n.distinct && (n.fn == plan.Avg || n.fn == "stddev_samp"):
			return lv.err(n.pos, n.name, "not supported beside an aggregate of DISTINCT (%s(DISTINCT ...) is)", n.name)
		}
	}
	return nil
}

// splitDistinctAggs makes each aggregate node of the plan that computes
// an aggregate of DISTINCT (one of distinct) two, in place, once the
// expressions are typed: the inner aggregate grouped by the keys and
// the distinct argument x, computing the partials of the plain
// aggregates; the outer one grouped by the keys, computing each
// distinct aggregate of x and merging each plain one's partials; then,
// where a count or a sum is merged, a projection that makes the count
// of no rows 0 (an aggregate of no GROUP BY over no rows has no inner
// group) and a sum NULL where a partial sum was past the bound on
// numbers (docs/sql.md "Numbers": a SUM is NULL when its total is; a
// partial past the bound leaves the total unknown, so the sum is NULL:
// see overflowed).
func splitDistinctAggs(n *plan.Node, distinct map[*plan.Agg]bool) {
	if len(distinct) == 0 {
		return
	}
	for _, in := range n.Input {
		splitDistinctAggs(in, distinct)
	}
	if n.Op != plan.Aggregate || !slices.ContainsFunc(n.Aggs, func(a *plan.Agg) bool { return distinct[a] }) {
		return
	}
	nk := len(n.Keys)
	x := n.Aggs[slices.IndexFunc(n.Aggs, func(a *plan.Agg) bool { return distinct[a] })].Arg
	xName := x.String()
	if x.Kind == plan.ColRef {
		xName = x.Name
	}
	inner := &plan.Node{Op: plan.Aggregate, Input: n.Input, Keys: append(slices.Clone(n.Keys), x),
		Output: append(slices.Clone(n.Output[:nk]), plan.Column{Name: xName})}
	var types []plan.Type // of inner's columns
	for _, k := range inner.Keys {
		types = append(types, k.Type)
	}
	// The inner partials: a plain aggregate's own column, at part[i]; a
	// SUM's count beside it.
	part := make([]int, len(n.Aggs))
	sums := false
	for i, a := range n.Aggs {
		if distinct[a] {
			continue
		}
		name := n.Output[nk+i].Name
		part[i] = len(types)
		inner.Aggs = append(inner.Aggs, a)
		inner.Output = append(inner.Output, plan.Column{Name: name})
		types = append(types, outerType(a))
		if a.Func == plan.Sum {
			sums = true
			inner.Aggs = append(inner.Aggs, &plan.Agg{Func: plan.Count, Arg: a.Arg})
			inner.Output = append(inner.Output, plan.Column{Name: name + " count"})
			types = append(types, plan.Number)
		}
	}
	below := inner
	if sums { // each SUM's count made whether its partial overflowed
		mid := &plan.Node{Op: plan.Project, Input: []*plan.Node{inner}, Output: slices.Clone(inner.Output)}
		for i, t := range types {
			mid.Exprs = append(mid.Exprs, colRef(i, t, inner.Output[i].Name))
		}
		for i, a := range n.Aggs {
			if !distinct[a] && a.Func == plan.Sum {
				mid.Exprs[part[i]+1] = overflowed(mid.Exprs[part[i]], mid.Exprs[part[i]+1])
			}
		}
		below = mid
	}
	outer := &plan.Node{Op: plan.Aggregate, Input: []*plan.Node{below}, Output: slices.Clone(n.Output)}
	for i := range nk {
		outer.Keys = append(outer.Keys, colRef(i, types[i], n.Output[i].Name))
	}
	top := &plan.Node{Op: plan.Project, Input: []*plan.Node{outer}, Output: slices.Clone(n.Output)}
	for i := range nk {
		top.Exprs = append(top.Exprs, colRef(i, types[i], n.Output[i].Name))
	}
	var extra []*plan.Expr // the final projection's reads of the overflow counts
	merged := false
	for i, a := range n.Aggs {
		name := n.Output[nk+i].Name
		if distinct[a] {
			outer.Aggs = append(outer.Aggs, &plan.Agg{Func: a.Func, Arg: colRef(nk, x.Type, xName)})
			top.Exprs = append(top.Exprs, colRef(nk+i, outerType(outer.Aggs[i]), name))
			continue
		}
		p := colRef(part[i], types[part[i]], name)
		out := colRef(nk+i, types[part[i]], name)
		switch a.Func {
		case plan.CountStar, plan.Count:
			outer.Aggs = append(outer.Aggs, &plan.Agg{Func: plan.Sum, Arg: p})
			out = &plan.Expr{Kind: plan.Call, Fn: plan.FnCoalesce, Type: plan.Number, Args: []*plan.Expr{out, numConst("0")}}
			merged = true
		case plan.Sum:
			outer.Aggs = append(outer.Aggs, &plan.Agg{Func: plan.Sum, Arg: p})
			ov := colRef(nk+len(n.Aggs)+len(extra), plan.Number, name+" overflowed")
			extra = append(extra, colRef(part[i]+1, plan.Number, name+" overflowed"))
			out = &plan.Expr{Kind: plan.Case, Type: plan.Number, Args: []*plan.Expr{
				{Kind: plan.Cmp, Fn: ">", Type: plan.Bool, Args: []*plan.Expr{ov, numConst("0")}},
				{Kind: plan.Const, Type: plan.Number, Null: true}, out}}
			merged = true
		default: // MIN, MAX
			outer.Aggs = append(outer.Aggs, &plan.Agg{Func: a.Func, Arg: p})
		}
		top.Exprs = append(top.Exprs, out)
	}
	for _, e := range extra {
		outer.Aggs = append(outer.Aggs, &plan.Agg{Func: plan.Count, Arg: e})
		outer.Output = append(outer.Output, plan.Column{Name: e.Name})
	}
	if !merged {
		*n = *outer
		return
	}
	*n = *top
}

// overflowed is 1 where a partial sum is NULL though its count of values
// is not 0 (the sum was past the bound on numbers), else NULL.
func overflowed(sum, count *plan.Expr) *plan.Expr {
	cond := &plan.Expr{Kind: plan.And, Type: plan.Bool, Args: []*plan.Expr{
		{Kind: plan.IsNull, Type: plan.Bool, Args: []*plan.Expr{sum}},
		{Kind: plan.Cmp, Fn: ">", Type: plan.Bool, Args: []*plan.Expr{count, numConst("0")}},
	}}
	return &plan.Expr{Kind: plan.Case, Type: plan.Number, Args: []*plan.Expr{cond, numConst("1")}}
}

func colRef(col int, t plan.Type, name string) *plan.Expr {
	return &plan.Expr{Kind: plan.ColRef, Col: col, Type: t, Name: name}
}

func numConst(v string) *plan.Expr {
	return &plan.Expr{Kind: plan.Const, Type: plan.Number, Value: []byte(v)}
}

// outerType is the type of an aggregate's result: its argument's for
// MIN and MAX, else a number.
func outerType(a *plan.Agg) plan.Type {
	if (a.Func == plan.Min || a.Func == plan.Max) && a.Arg != nil {
		return a.Arg.Type
	}
	return plan.Number
}
