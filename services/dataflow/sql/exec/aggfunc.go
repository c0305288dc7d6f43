package exec

import (
	"slices"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// The table of aggregate functions: each function is one entry of
// aggFuncs, which says everything the engine does with it, from the
// binder to the snapshot:
//
//   - how a query calls it (its SQL name, what it takes, the type of its
//     result), which the binder reads through LookupAggregate and
//     AggResultType;
//   - its accumulator: the state it keeps per group (accState: a count,
//     running sums, a seen flag, a best value so far), how a batch's
//     rows update it and how a group's result is read off it. The
//     snapshot writes an accumulator's state by its accState alone
//     (Aggregation.AppendState), so a function needs no encoding of its
//     own;
//   - its two phases (a shard's partial aggregate, the gateway's final
//     one): the partial columns a shard sends (parts, each itself an
//     entry of the table, or the function's own result), the function
//     that merges each partial column (merge), and the result made of
//     the merged partials (finish). PartialColumns, PartialAggs and
//     MergeAggs read them for the physical planner and sqlops.
//
// The package doc says why the table is here. A new function is one
// entry (and its arithmetic, when it needs some, in
// services/dataflow/sql/value).

// AggArg is what an aggregate function takes.
type AggArg int

// The arguments an aggregate function may take.
const (
	NoArg     AggArg = iota // none: COUNT(*)
	AnyArg                  // one value of any kind
	NumberArg               // one number
	BoolArg                 // one boolean
)

// aggFunc is one aggregate function.
type aggFunc struct {
	sql      string // the lower-case name a query calls it by ("count(*)" for COUNT(*)); "" for a partial's only
	arg      AggArg
	sameType bool // the result is of its argument's type; else a number

	state  accState
	update func(a *acc, ids []int32, arg *Vec, when []bool, els *Vec)
	// read is group g's result as a number (ok false: NULL), for the
	// functions of a number; result makes the column of groups 0..n-1
	// (nil: read's, group by group).
	read   func(a *acc, g int) (value.Dec, bool)
	result func(a *acc, n int) *Vec

	// parts are the functions (over the same argument) a shard computes
	// for it, one partial column each, and finish its result from their
	// merged values, none NULL; no parts: a shard computes the function
	// itself, one column, which merge folds into the final result.
	parts  []plan.AggFunc
	finish func(parts []value.Dec) (value.Dec, bool)
	merge  plan.AggFunc
}

// aggFuncs are the aggregate functions by their plan's name.
var aggFuncs = map[plan.AggFunc]*aggFunc{
	plan.CountStar: {
		sql: "count(*)", arg: NoArg,
		state:  accState{count: true},
		update: func(a *acc, ids []int32, _ *Vec, _ []bool, _ *Vec) { a.countAll(ids) },
		result: (*acc).countResult,
		merge:  plan.Sum,
	},
	plan.Count: {
		sql: "count", arg: AnyArg,
		state:  accState{count: true},
		update: (*acc).updateCount,
		result: (*acc).countResult,
		merge:  plan.Sum,
	},
	plan.Sum: {
		sql: "sum", arg: NumberArg,
		state:  accState{count: true, has: true, sums: 1},
		update: (*acc).updateSum,
		read:   (*acc).boundedSum,
		merge:  plan.Sum,
	},
	plan.Avg: {
		sql: "avg", arg: NumberArg,
		state:  accState{count: true, has: true, sums: 1},
		update: (*acc).updateSum,
		read: func(a *acc, g int) (value.Dec, bool) {
			if !a.has[g] {
				return value.Dec{}, false
			}
			return avg([]value.Dec{a.sums[0].get(int32(g)), value.Int(a.count.get(g))})
		},
		parts:  []plan.AggFunc{plan.Sum, plan.Count},
		finish: avg,
	},
	plan.Min: {
		sql: "min", arg: AnyArg, sameType: true,
		state:  accState{has: true, best: true},
		update: func(a *acc, ids []int32, arg *Vec, when []bool, els *Vec) { a.updateExtreme(ids, arg, when, els, -1) },
		result: (*acc).extremeResult,
		merge:  plan.Min,
	},
	plan.Max: {
		sql: "max", arg: AnyArg, sameType: true,
		state:  accState{has: true, best: true},
		update: func(a *acc, ids []int32, arg *Vec, when []bool, els *Vec) { a.updateExtreme(ids, arg, when, els, 1) },
		result: (*acc).extremeResult,
		merge:  plan.Max,
	},
	// BOOL_AND and BOOL_OR are MIN and MAX of booleans (false before
	// true), NULLs skipped: PostgreSQL's and DuckDB's.
	plan.BoolAnd: {
		sql: "bool_and", arg: BoolArg, sameType: true,
		state:  accState{has: true, best: true},
		update: func(a *acc, ids []int32, arg *Vec, when []bool, els *Vec) { a.updateExtreme(ids, arg, when, els, -1) },
		result: (*acc).extremeResult,
		merge:  plan.BoolAnd,
	},
	plan.BoolOr: {
		sql: "bool_or", arg: BoolArg, sameType: true,
		state:  accState{has: true, best: true},
		update: func(a *acc, ids []int32, arg *Vec, when []bool, els *Vec) { a.updateExtreme(ids, arg, when, els, 1) },
		result: (*acc).extremeResult,
		merge:  plan.BoolOr,
	},
	stddevSamp: {
		sql: "stddev_samp", arg: NumberArg,
		state:  accState{count: true, has: true, sums: 2},
		update: (*acc).updateSquares,
		read: func(a *acc, g int) (value.Dec, bool) {
			if !a.has[g] {
				return value.Dec{}, false
			}
			return stddev([]value.Dec{value.Int(a.count.get(g)), a.sums[0].get(int32(g)), a.sums[1].get(int32(g))})
		},
		parts:  []plan.AggFunc{plan.Count, plan.Sum, sumSquares},
		finish: stddev,
	},
	sumSquares: {
		arg:    NumberArg,
		state:  accState{has: true, sums: 1},
		update: (*acc).updateSquares,
		read:   (*acc).boundedSum,
		merge:  plan.Sum,
	},
}

// STDDEV_SAMP, and the sum of squares a shard computes for it.
const (
	stddevSamp plan.AggFunc = "stddev_samp"
	sumSquares plan.AggFunc = "sumsq"
)

// stddev is STDDEV_SAMP of the count, sum and sum of squares of its
// values (value.StddevSamp).
func stddev(v []value.Dec) (value.Dec, bool) { return value.StddevSamp(v[0], v[1], v[2]) }

// updateSquares adds the squares of the values that are not NULL up in
// the last of a's sums, and, when a keeps them, counts the values and
// adds them up in its first sum. A square past value.MaxDigits is added
// as tooWide: the sum of the squares is then past too, whatever the
// other values (squares are not negative, and a sum has the largest
// scale of its terms), and the sum of any squares stays within
// value.MaxStoredDigits, however the shards split them.
func (a *acc) updateSquares(ids []int32, arg *Vec, when []bool, els *Vec) {
	squares := &a.sums[len(a.sums)-1]
	for i, g := range ids {
		v, j, ok := pick(arg, when, els, i)
		if !ok {
			continue
		}
		d := v.Nums[j]
		if a.u.count {
			a.count.inc(g)
			a.sums[0].add(g, d)
		}
		sq := d.Mul(d)
		if !sq.Fits() {
			sq = tooWide
		}
		squares.add(g, sq)
		a.has[g] = true
	}
}

// tooWide is 10^value.MaxDigits, the least integer that does not Fit.
var tooWide, _ = value.ReadStored([]byte("1" + strings.Repeat("0", value.MaxDigits)))

// avg is AVG of its sum and count (value.Avg: DuckDB's double, written
// as its shortest text), NULL when either does not fit.
func avg(v []value.Dec) (value.Dec, bool) {
	s := v[0]
	n, ok := v[1].UnscaledAt(0) // a count: a whole number of rows
	if !ok {
		return value.Dec{}, false
	}
	d, ok := value.Avg(s, n)
	return d, ok && s.Fits() && d.Fits()
}

// aggFuncsBySQL are the functions a query may call, by SQL name.
var aggFuncsBySQL = func() map[string]plan.AggFunc {
	m := map[string]plan.AggFunc{}
	for name, f := range aggFuncs {
		if f.sql != "" {
			m[f.sql] = name
		}
	}
	return m
}()

// AggSpec is what the binder knows of an aggregate function.
type AggSpec struct {
	Func plan.AggFunc
	Arg  AggArg
	// SameType: the result is of its argument's type; else a number.
	SameType bool
}

// LookupAggregate is the aggregate function a query calls by name (lower
// case; "count(*)" for COUNT(*)), or false.
func LookupAggregate(name string) (AggSpec, bool) {
	fn, ok := aggFuncsBySQL[name]
	if !ok {
		return AggSpec{}, false
	}
	f := aggFuncs[fn]
	return AggSpec{Func: fn, Arg: f.arg, SameType: f.sameType}, true
}

// AggResultType is the type of a's result, its argument's types resolved.
func AggResultType(a *plan.Agg) plan.Type {
	if f := aggFuncs[a.Func]; f != nil && f.sameType && a.Arg != nil {
		return a.Arg.Type
	}
	return plan.Number
}

// PartialColumns are the columns of a partial aggregate computing an
// Aggregate of output cols grouped by nKeys keys with aggs: the keys,
// then each aggregate's own column, or, for a function of parts, one
// number per part ("x sum", "x count" of AVG's x).
func PartialColumns(cols []plan.Column, nKeys int, aggs []*plan.Agg) []plan.Column {
	out := slices.Clone(cols[:nKeys])
	for i, a := range aggs {
		c := cols[nKeys+i]
		parts := aggFuncs[a.Func].partsOf()
		if parts == nil {
			out = append(out, c)
			continue
		}
		for _, p := range parts {
			out = append(out, plan.Column{Name: c.Name + " " + string(p), Type: plan.Number})
		}
	}
	return out
}

// partsOf is f's parts; nil for a function a shard computes itself, or
// an unknown one.
func (f *aggFunc) partsOf() []plan.AggFunc {
	if f == nil {
		return nil
	}
	return f.parts
}

// PartialAggs are the aggregates a partial aggregate computes for aggs,
// one per column of PartialColumns after the keys.
func PartialAggs(aggs []*plan.Agg) []*plan.Agg {
	var out []*plan.Agg
	for _, a := range aggs {
		parts := aggFuncs[a.Func].partsOf()
		if parts == nil {
			out = append(out, a)
			continue
		}
		for _, p := range parts {
			out = append(out, &plan.Agg{Func: p, Arg: a.Arg})
		}
	}
	return out
}

// MergeAggs are the aggregates a final aggregate computes over the
// partials' columns (the keys, then PartialColumns) of the Aggregate n,
// and the projection that makes n's output of theirs: each partial
// column folded by its function's merge (counts and sums add up, minima
// and maxima are taken again), and a function of parts finished over
// its merged parts (AVG: the sum of the sums over the sum of the
// counts, the division its accumulator does).
func MergeAggs(n *plan.Node) ([]*plan.Agg, []*plan.Expr) {
	nk := len(n.Keys)
	col := func(i int, t plan.Type, name string) *plan.Expr {
		return &plan.Expr{Kind: plan.ColRef, Col: i, Type: t, Name: name}
	}
	var aggs []*plan.Agg
	var post []*plan.Expr
	for i := range nk {
		post = append(post, col(i, n.Keys[i].Type, n.Output[i].Name))
	}
	in := nk // the partials' column being read
	for i, a := range n.Aggs {
		name, t := n.Output[nk+i].Name, n.Output[nk+i].Type
		f := aggFuncs[a.Func]
		if parts := f.partsOf(); parts != nil {
			call := &plan.Expr{Kind: plan.Call, Fn: string(a.Func), Type: plan.Number}
			for _, p := range parts {
				aggs = append(aggs, &plan.Agg{Func: aggFuncs[p].merge, Arg: col(in, plan.Number, name)})
				call.Args = append(call.Args, col(nk+len(aggs)-1, plan.Number, name))
				in++
			}
			post = append(post, call)
			continue
		}
		merge := a.Func
		if f != nil {
			merge = f.merge
		}
		aggs = append(aggs, &plan.Agg{Func: merge, Arg: col(in, t, name)})
		post = append(post, col(nk+len(aggs)-1, t, name))
		in++
	}
	return aggs, post
}

// finishCall evaluates a Call of a function of parts over its merged
// parts (MergeAggs), or reports that fn is none.
func finishCall(fn string, args []*Vec, n int) (*Vec, bool) {
	f := aggFuncs[plan.AggFunc(fn)]
	if f == nil || f.finish == nil || len(args) != len(f.parts) {
		return nil, false
	}
	out := newBuilder(plan.Number, n)
	vals := make([]value.Dec, len(args))
rows:
	for i := range n {
		for k, v := range args {
			j := at(v, i)
			if v.IsNull(j) {
				out.null()
				continue rows
			}
			vals[k] = v.Nums[j]
		}
		if d, ok := f.finish(vals); ok {
			out.num(d)
		} else {
			out.null()
		}
	}
	return out.v, true
}
