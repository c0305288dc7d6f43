package sql

import (
	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// The subqueries of expressions (uncorrelated; a correlated one names a
// column of the outer query, which its own FROM does not have, and is
// refused as that unknown column) are bound onto the plan's joins, so
// that every layer after the binder runs them as any other join:
//
//   - a scalar subquery (SELECT x FROM ...) is a cross product with a
//     one-row aggregate of it (COUNT(*) and MAX(x)), its value
//     ONE_ROW(count, max): x, NULL when it has no row, and an error at
//     run time when it has more than one (PostgreSQL's "more than one
//     row returned by a subquery used as an expression");
//   - EXISTS (SELECT ...) is a cross product with a one-row aggregate
//     COUNT(*) > 0 of it;
//   - x IN (SELECT c ...) where it is not a top-level WHERE conjunct (the
//     semi-join, where.go), and x NOT IN (SELECT c ...) anywhere, is a
//     mark join: a LEFT join keyed by x with the distinct values of c
//     that are not NULL (shuffled by the key, as the semi-join is), and
//     a cross product with the one-row aggregate COUNT(*), COUNT(c) of
//     the subquery, which gives SQL's NULL rules: x IN S is true when x
//     matched, false when S is empty, NULL when x is NULL or S has a
//     NULL, else false; NOT IN is its NOT.
//
// A cross product is a plan.Join on a constant key, so that exec, the
// rewrites and incr run it as any join, with no operator of its own.
// Each such join carries the construct it was made for
// (plan.Node.Subquery): the physical planner places a cross product by
// it where the query's rows are, the subquery's one row broadcast to
// every shard (physical's subquery.go) rather than every row shuffled
// to the one shard the constant's hash picks; a standing job refuses
// the mark join's LEFT join naming it. The one-row aggregate is
// computed once (at the gateway, or partial on the shards and merged
// there) and then broadcast: the alternative of a count broadcast by a
// new operator would have been a second path for the same thing.
//
// A subquery in an expression over the FROM row (WHERE, the SELECT list
// of a query that does not group, an aggregate's argument) is joined to
// that row before WHERE's filter; one in an expression over the groups
// (the SELECT list and HAVING of a query that groups) is joined to the
// aggregate's rows, before HAVING.

// subJoin is a join a subquery of an expression adds over the rows the
// expression reads.
type subJoin struct {
	node *plan.Node   // the join: Input[1], LeftKey, RightKey, JoinType, Subquery set
	refs []*plan.Expr // the references to the join's right columns, numbered from 0
}

// subJoins are the joins of one level's subqueries, over the FROM row and
// over the groups.
type subJoins struct {
	row, post []*subJoin
}

// The constructs of plan.Node.Subquery.
const (
	subScalar = "scalar subquery"
	subExists = "EXISTS (SELECT ...)"
	subIn     = "IN (SELECT ...)"
	subNotIn  = "NOT IN (SELECT ...)"
)

// addSubJoin records a join of the level's subqueries over the row its
// current clause reads: a cross product when leftKey is nil, else a
// LEFT join keyed by leftKey and column 0 of right. It returns a
// reference to each of right's columns.
func (lv *level) addSubJoin(construct string, right *plan.Node, leftKey *plan.Expr, vars []*tvar) []*plan.Expr {
	j := &plan.Node{Op: plan.Join, Input: []*plan.Node{nil, right}, Subquery: construct}
	if leftKey == nil {
		j.LeftKey, j.RightKey = numConst("1"), numConst("1")
	} else {
		j.LeftKey, j.JoinType = leftKey, plan.JoinLeft
		j.RightKey = &plan.Expr{Kind: plan.ColRef, Col: 0, Name: right.Output[0].Name}
		lv.typed(j.RightKey, vars[0])
	}
	s := &subJoin{node: j}
	for i, c := range right.Output {
		ref := &plan.Expr{Kind: plan.ColRef, Col: i, Name: c.Name}
		lv.typed(ref, vars[i])
		s.refs = append(s.refs, ref)
	}
	if lv.post {
		lv.subs.post = append(lv.subs.post, s)
	} else {
		lv.subs.row = append(lv.subs.row, s)
	}
	return s.refs
}

// stackSubJoins stacks the joins js over n, whose rows are width columns
// wide (its Output may not be numbered yet), numbering their references.
func stackSubJoins(n *plan.Node, width int, js []*subJoin) *plan.Node {
	for _, s := range js {
		for _, r := range s.refs {
			r.Col += width
		}
		s.node.Input[0] = n
		n = s.node
		width += len(s.node.Input[1].Output)
	}
	return n
}

// fromWidth is the number of columns of the FROM row, once finishScans
// has numbered them.
func (lv *level) fromWidth() int {
	w := 0
	for _, s := range lv.scans {
		if s.derived {
			w += len(s.names)
		} else {
			w += len(s.slots)
		}
	}
	return w
}

// subSelect compiles a subquery of one of lv's expressions, lv its
// outer query while it does, so that a column only lv has is refused
// as a correlated subquery's (correlated).
func (lv *level) subSelect(sel *parse.Select) (*plan.Node, error) {
	lv.c.outer = append(lv.c.outer, lv)
	defer func() { lv.c.outer = lv.c.outer[:len(lv.c.outer)-1] }()
	return lv.c.selectPlan(sel, inSelect)
}

// correlated is the error of a column cn that lv's tables lack but an
// outer query's have (nil if none has): a correlated subquery, which the
// subset does not run.
func (lv *level) correlated(cn *parse.Column) *Error {
	for _, o := range lv.c.outer {
		if o == lv {
			return nil
		}
	}
	for _, o := range lv.c.outer {
		if _, err := o.resolve(cn); err == nil {
			return lv.err(cn.Pos, "correlated subquery", "%s is a column of an outer query: a subquery that reads its outer query's columns (correlated) is not supported; join the tables instead", parse.String(cn))
		}
	}
	return nil
}

// onCondition binds a condition of an inner join's ON other than its
// keys, which filters the join inside the FROM row: a subquery there is
// refused (its join would come after that filter), to be written in
// WHERE, where it means the same.
func (lv *level) onCondition(conj parse.Expr) (*plan.Expr, *tvar, error) {
	before := len(lv.subs.row)
	e, v, err := lv.expr(conj)
	if err == nil && len(lv.subs.row) > before {
		return nil, nil, lv.err(conj.Position(), "JOIN condition", "a subquery in ON is not supported: write the condition in WHERE (of an inner join, the same rows)")
	}
	return e, v, err
}

// subPlan compiles the subquery of an expression, of one column.
func (lv *level) subPlan(sel *parse.Select, construct string) (*plan.Node, *tvar, error) {
	sub, err := lv.subSelect(sel)
	if err != nil {
		return nil, nil, err
	}
	if len(sub.Output) != 1 {
		return nil, nil, lv.err(sel.Pos, construct, "a subquery used as an expression selects one column, not %d", len(sub.Output))
	}
	return sub, lv.c.outVar(sub), nil
}

// colOf is a reference to column i of n, of kind v.
func (lv *level) colOf(n *plan.Node, i int, v *tvar) *plan.Expr {
	e := &plan.Expr{Kind: plan.ColRef, Col: i, Name: n.Output[i].Name}
	lv.typed(e, v)
	return e
}

// oneRow is the global aggregate of sub computing aggs, its columns
// named names.
func oneRow(sub *plan.Node, aggs []*plan.Agg, names ...string) *plan.Node {
	n := &plan.Node{Op: plan.Aggregate, Input: []*plan.Node{sub}, Aggs: aggs}
	for _, name := range names {
		n.Output = append(n.Output, plan.Column{Name: name, Type: plan.Number})
	}
	return n
}

// scalarSubquery binds (SELECT x FROM ...) as a value.
func (lv *level) scalarSubquery(x *parse.Subquery) (*plan.Expr, *tvar, error) {
	sub, v, err := lv.subPlan(x.Select, "subquery")
	if err != nil {
		return nil, nil, err
	}
	agg := oneRow(sub, []*plan.Agg{{Func: plan.CountStar}, {Func: plan.Max, Arg: lv.colOf(sub, 0, v)}}, "count", "value")
	val := &plan.Expr{Kind: plan.Call, Fn: plan.FnOneRow, Args: []*plan.Expr{lv.colOf(agg, 0, known(plan.Number)), lv.colOf(agg, 1, v)}}
	lv.typed(val, v)
	right := &plan.Node{Op: plan.Project, Input: []*plan.Node{agg}, Exprs: []*plan.Expr{val}, Output: []plan.Column{{Name: "(subquery)"}}}
	refs := lv.addSubJoin(subScalar, right, nil, []*tvar{v})
	return refs[0], v, nil
}

// existsSubquery binds EXISTS (SELECT ...).
func (lv *level) existsSubquery(x *parse.Exists) (*plan.Expr, *tvar, error) {
	sub, err := lv.subSelect(x.Select)
	if err != nil {
		return nil, nil, err
	}
	agg := oneRow(sub, []*plan.Agg{{Func: plan.CountStar}}, "count")
	some := &plan.Expr{Kind: plan.Cmp, Type: plan.Bool, Fn: ">", Args: []*plan.Expr{lv.colOf(agg, 0, known(plan.Number)), numConst("0")}}
	right := &plan.Node{Op: plan.Project, Input: []*plan.Node{agg}, Exprs: []*plan.Expr{some}, Output: []plan.Column{{Name: "exists"}}}
	refs := lv.addSubJoin(subExists, right, nil, []*tvar{known(plan.Bool)})
	return refs[0], known(plan.Bool), nil
}

func boolConst(b bool) *plan.Expr {
	s := "false"
	if b {
		s = "true"
	}
	return &plan.Expr{Kind: plan.Const, Type: plan.Bool, Value: []byte(s)}
}

// inSubqueryValue binds x [NOT] IN (SELECT c ...) as a value (a mark
// join): see the comment at the top of the file.
func (lv *level) inSubqueryValue(in *parse.In) (*plan.Expr, *tvar, error) {
	key, kv, err := lv.expr(in.X)
	if err != nil {
		return nil, nil, err
	}
	x, _, err := lv.expr(in.X) // bound again: the join's key and the CASE's are two trees
	if err != nil {
		return nil, nil, err
	}
	construct := subIn
	if in.Not {
		construct = subNotIn
	}
	sub, v, err := lv.subPlan(in.Sub, construct)
	if err != nil {
		return nil, nil, err
	}
	if err := lv.unify(kv, v, in.InPos, construct); err != nil {
		return nil, nil, err
	}
	// The set: the distinct values of c that are not NULL.
	notNull := &plan.Expr{Kind: plan.IsNull, Type: plan.Bool, Fn: "not", Args: []*plan.Expr{lv.colOf(sub, 0, v)}}
	set := &plan.Node{Op: plan.Filter, Input: []*plan.Node{sub}, Cond: notNull, Output: []plan.Column{{Name: sub.Output[0].Name}}}
	set = over(plan.Distinct, set)
	match := lv.addSubJoin(construct, set, key, []*tvar{v})[0]
	// Its size and the number of c not NULL.
	agg := oneRow(sub, []*plan.Agg{{Func: plan.CountStar}, {Func: plan.Count, Arg: lv.colOf(sub, 0, v)}}, "count", "count not null")
	stats := lv.addSubJoin(construct, agg, nil, []*tvar{known(plan.Number), known(plan.Number)})
	cmp := func(fn string, a, b *plan.Expr) *plan.Expr {
		return &plan.Expr{Kind: plan.Cmp, Type: plan.Bool, Fn: fn, Args: []*plan.Expr{a, b}}
	}
	isNull := func(e *plan.Expr, fn string) *plan.Expr {
		return &plan.Expr{Kind: plan.IsNull, Type: plan.Bool, Fn: fn, Args: []*plan.Expr{e}}
	}
	nullable := &plan.Expr{Kind: plan.Or, Type: plan.Bool, Args: []*plan.Expr{isNull(x, ""), cmp("<", stats[1], stats[0])}}
	null := &plan.Expr{Kind: plan.Const, Type: plan.Bool, Null: true}
	mark := &plan.Expr{Kind: plan.Case, Type: plan.Bool, Args: []*plan.Expr{
		isNull(match, "not"), boolConst(true),
		cmp("=", stats[0], numConst("0")), boolConst(false),
		nullable, null,
		boolConst(false),
	}}
	if in.Not {
		mark = &plan.Expr{Kind: plan.Not, Type: plan.Bool, Args: []*plan.Expr{mark}}
	}
	return mark, known(plan.Bool), nil
}
