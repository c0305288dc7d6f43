package sql

import (
	"slices"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// The joins of a FROM clause: INNER, LEFT, RIGHT and FULL [OUTER] JOIN on
// one or more equalities of a column of each side (ON a.x = b.y AND
// a.z = b.w) or USING (columns), of two or more tables left-deep
// (a JOIN b ON .. JOIN c ON ..: each join's left input is the joins
// before it). Each is one plan.Join node keyed by its equalities, whose
// inputs the physical plan shuffles by that key. An inner join's other
// ON conditions are a filter right above it; an outer join's are
// refused (they decide which rows match, not which are kept), as are
// NATURAL joins. A CROSS JOIN (and a comma join, from.go) is a join on a
// constant key, as the cross product of a subquery of an expression is
// (subquery.go), marked plan.Node.Subquery "CROSS JOIN" so that the
// physical planner places it as that one: its right side broadcast to
// every shard, its left rows staying where they are; the rows it makes
// count against the job's budget of join rows as any join's.

// fromItem is a FROM clause as joined: a table (scan), or a join of two.
type fromItem struct {
	scan        *scanInfo
	left, right *fromItem
	kind        plan.JoinType
	using       []string
}

// joinInfo is a join node whose right key is made relative to its right
// input once the scans' columns are numbered (finishJoins).
type joinInfo struct {
	node  *plan.Node
	right *scanInfo
}

// joinTypes are the joins by their keywords (parse.Join's Kind).
var joinTypes = map[string]plan.JoinType{
	"JOIN": plan.JoinInner, "LEFT JOIN": plan.JoinLeft, "RIGHT JOIN": plan.JoinRight, "FULL JOIN": plan.JoinFull,
}

// join resolves a join of the FROM clause (and those left of it) into
// its plan: the join node, under the filter of an inner join's other ON
// conditions.
func (lv *level) join(t *parse.Join) (*plan.Node, error) {
	n, _, err := lv.joinItem(t)
	return n, err
}

// joinItem is join's, with the FROM item the join makes.
func (lv *level) joinItem(t *parse.Join) (*plan.Node, *fromItem, error) {
	kind, ok := joinTypes[t.Kind]
	if t.Kind == crossJoin {
		kind, ok = plan.JoinInner, true
	}
	if !ok {
		hint := "write JOIN ... ON a.x = b.y (INNER, LEFT, RIGHT or FULL)"
		if strings.HasPrefix(t.Kind, "NATURAL") {
			hint = "not supported: name the columns, JOIN ... USING (columns)"
		}
		return nil, nil, lv.err(t.Pos, t.Kind, "%s", hint)
	}
	var ln *plan.Node
	var left *fromItem
	if lj, ok := t.Left.(*parse.Join); ok {
		var err error
		if ln, left, err = lv.joinItem(lj); err != nil {
			return nil, nil, err
		}
	} else {
		ls, err := lv.source(t.Left)
		if err != nil {
			return nil, nil, err
		}
		ln, left = ls.node, &fromItem{scan: ls}
	}
	if _, ok := t.Right.(*parse.Join); ok {
		return nil, nil, lv.err(t.Right.Position(), "JOIN", "a join's right side is a table or a subquery: write the joins one after the other, a JOIN b ON .. JOIN c ON ..")
	}
	rs, err := lv.source(t.Right)
	if err != nil {
		return nil, nil, err
	}
	item := &fromItem{left: left, right: &fromItem{scan: rs}, kind: kind, using: t.Using}
	lv.from = item // ON reads the USING columns of the joins before it
	var lks, rks, rest []*plan.Expr
	switch {
	case t.Kind == crossJoin:
		lks, rks = []*plan.Expr{numConst("1")}, []*plan.Expr{numConst("1")}
	case t.Using != nil:
		lks, rks, err = lv.usingKeys(t, item)
	default:
		lks, rks, rest, err = lv.onKeys(t, kind, rs)
	}
	if err != nil {
		return nil, nil, err
	}
	n := &plan.Node{Op: plan.Join, Input: []*plan.Node{ln, rs.node}, LeftKey: joinKey(lks), RightKey: joinKey(rks)}
	if kind != plan.JoinInner {
		n.JoinType = kind
	}
	if t.Kind == crossJoin {
		n.Subquery = crossJoin // placed as a subquery's cross product (physical's subquery.go)
	}
	lv.joins = append(lv.joins, joinInfo{node: n, right: rs})
	if len(rest) > 0 {
		n = over(plan.Filter, n)
		n.Cond = andAll(rest)
	}
	return n, item, nil
}

// crossJoin is a CROSS JOIN's parse.Join Kind, and the construct its
// plan.Node.Subquery names.
const crossJoin = "CROSS JOIN"

// joinKey is the key of a side of a join of the equalities' expressions
// keys: the one, or KEY() of them all (plan.FnKey).
func joinKey(keys []*plan.Expr) *plan.Expr {
	if len(keys) == 1 {
		return keys[0]
	}
	return &plan.Expr{Kind: plan.Call, Fn: plan.FnKey, Type: plan.Text, Args: keys}
}

// onKeys binds ON: its conjuncts that equate a column of the right
// table with one of the left side's are the keys; an inner join's other
// conjuncts filter its rows (rest).
func (lv *level) onKeys(t *parse.Join, kind plan.JoinType, rs *scanInfo) (lks, rks, rest []*plan.Expr, err error) {
	if t.On == nil {
		return nil, nil, nil, lv.err(t.Pos, t.Kind, "a join needs ON a.x = b.y or USING (columns)")
	}
	for _, conj := range conjuncts(t.On) {
		le, re, ok, err := lv.onEquality(conj, rs)
		if err != nil {
			return nil, nil, nil, err
		}
		if ok {
			lks, rks = append(lks, le), append(rks, re)
			continue
		}
		if kind != plan.JoinInner {
			return nil, nil, nil, lv.err(conj.Position(), t.Kind+" condition", "ON of an outer join is equalities of a column of each table (ON a.x = b.y AND a.z = b.w): filter in WHERE, or in a subquery of a side")
		}
		e, v, err := lv.onCondition(conj)
		if err != nil {
			return nil, nil, nil, err
		}
		if err := lv.unify(v, known(plan.Bool), conj.Position(), "JOIN condition"); err != nil {
			return nil, nil, nil, err
		}
		rest = append(rest, e)
	}
	if len(lks) == 0 {
		return nil, nil, nil, lv.err(t.OnPos, "JOIN condition", "ON needs an equality of a column of each table, a.x = b.y")
	}
	return lks, rks, rest, nil
}

// onEquality binds conj when it equates a column of the right table
// with a column of the left side's tables, in either order: the left
// one, the right one; ok false when it is anything else.
func (lv *level) onEquality(conj parse.Expr, rs *scanInfo) (le, re *plan.Expr, ok bool, err error) {
	cmp, isCmp := conj.(*parse.Binary)
	if !isCmp || cmp.Op != "=" {
		return nil, nil, false, nil
	}
	lc, _ := cmp.L.(*parse.Column)
	rc, _ := cmp.R.(*parse.Column)
	if lc == nil || rc == nil {
		return nil, nil, false, nil
	}
	ls, err := lv.resolveJoined(lc)
	if err != nil {
		return nil, nil, false, err
	}
	rss, err := lv.resolveJoined(rc)
	if err != nil {
		return nil, nil, false, err
	}
	if ls == rs { // written the other way round
		lc, rc, ls, rss = rc, lc, rss, ls
	}
	if ls == rs || rss != rs {
		return nil, nil, false, nil // both of one side: a condition
	}
	le, lvv, err := lv.expr(lc)
	if err != nil {
		return nil, nil, false, err
	}
	re, rvv, err := lv.expr(rc)
	if err != nil {
		return nil, nil, false, err
	}
	if err := lv.unify(lvv, rvv, cmp.OpPos, "JOIN condition"); err != nil {
		return nil, nil, false, err
	}
	return le, re, true, nil
}

// resolveJoined is the table of the FROM clause so far that column cn
// names (a USING column: the table that stands for it, else nil).
func (lv *level) resolveJoined(cn *parse.Column) (*scanInfo, error) {
	if sub := lv.usingColumn(cn); sub != nil {
		c, ok := sub.(*parse.Column)
		if !ok {
			return nil, nil
		}
		cn = c
	}
	return lv.resolve(cn)
}

// usingKeys binds USING (columns): per column, the left side's (the
// USING column of the joins before, when it is one) equals the right
// table's.
func (lv *level) usingKeys(t *parse.Join, item *fromItem) (lks, rks []*plan.Expr, err error) {
	for i, name := range t.Using {
		if slices.Contains(t.Using[:i], name) {
			return nil, nil, lv.err(t.Pos, "USING "+name, "column named twice in USING")
		}
		l, n := usingExpr(item.left, name, t.Pos)
		if n != 1 {
			return nil, nil, lv.usingErr(t, name, "left", n)
		}
		r, n := usingExpr(item.right, name, t.Pos)
		if n != 1 {
			return nil, nil, lv.usingErr(t, name, "right", n)
		}
		le, lvv, err := lv.expr(l)
		if err != nil {
			return nil, nil, err
		}
		re, rvv, err := lv.expr(r)
		if err != nil {
			return nil, nil, err
		}
		if err := lv.unify(lvv, rvv, t.Pos, "USING "+name); err != nil {
			return nil, nil, err
		}
		lks, rks = append(lks, le), append(rks, re)
	}
	return lks, rks, nil
}

// usingErr is the error of a USING column that a side has n times.
func (lv *level) usingErr(t *parse.Join, name, side string, n int) *Error {
	if n == 0 {
		return lv.err(t.Pos, "USING "+name, "the %s side of the join has no column %s", side, name)
	}
	return lv.err(t.Pos, "USING "+name, "ambiguous: the %s side of the join has %d columns named %s", side, n, name)
}

// usingExpr is what name, unqualified, stands for in the FROM item it:
// a table's column; in a join USING it, PostgreSQL's merged column (the
// left side's, a RIGHT join's the right side's, a FULL join's the first
// of the two that is not NULL); and how many columns of it is names (0:
// none; more than 1: ambiguous, the expression nil).
func usingExpr(it *fromItem, name string, pos int) (parse.Expr, int) {
	if it.scan != nil {
		n := 0
		for _, c := range it.scan.names {
			if c == name {
				n++
			}
		}
		if n != 1 {
			return nil, n
		}
		return &parse.Column{Pos: pos, Table: it.scan.alias, Name: name}, 1
	}
	l, nl := usingExpr(it.left, name, pos)
	r, nr := usingExpr(it.right, name, pos)
	if !slices.Contains(it.using, name) {
		if nl+nr != 1 {
			return nil, nl + nr
		}
		if l != nil {
			return l, 1
		}
		return r, 1
	}
	switch it.kind {
	case plan.JoinRight:
		return r, 1
	case plan.JoinFull:
		return &parse.Call{Pos: pos, Name: plan.FnCoalesce, Args: []parse.Expr{l, r}}, 1
	}
	return l, 1
}

// hasUsing reports whether a join of it is USING name.
func (it *fromItem) hasUsing(name string) bool {
	if it == nil || it.scan != nil {
		return false
	}
	return slices.Contains(it.using, name) || it.left.hasUsing(name) || it.right.hasUsing(name)
}

// usingColumn is what an unqualified column of a USING of the FROM
// clause stands for (usingExpr), nil for any other column.
func (lv *level) usingColumn(cn *parse.Column) parse.Expr {
	if cn.Table != "" || !lv.from.hasUsing(cn.Name) {
		return nil
	}
	e, n := usingExpr(lv.from, cn.Name, cn.Pos)
	if n != 1 {
		return nil
	}
	return e
}

// usingStar binds * over a FROM clause with USING: PostgreSQL's columns,
// each join's USING columns first (merged), then its left side's others,
// then its right side's.
func (lv *level) usingStar(s *selectList, pos int) error {
	for _, c := range starColumns(lv.from, pos) {
		e, v, err := lv.expr(c.e)
		if err != nil {
			return err
		}
		s.add(e, v, c.name)
	}
	return nil
}

// starColumn is one column of *: its name and what it stands for.
type starColumn struct {
	name string
	e    parse.Expr
}

// starColumns are the columns * gives of the FROM item it.
func starColumns(it *fromItem, pos int) []starColumn {
	if it.scan != nil {
		out := make([]starColumn, len(it.scan.names))
		for i, name := range it.scan.names {
			out[i] = starColumn{name, &parse.Column{Pos: pos, Table: it.scan.alias, Name: name}}
		}
		return out
	}
	l, r := starColumns(it.left, pos), starColumns(it.right, pos)
	var out []starColumn
	for _, name := range it.using {
		e, _ := usingExpr(it, name, pos)
		out = append(out, starColumn{name, e})
		l, r = dropColumn(l, name), dropColumn(r, name)
	}
	return append(append(out, l...), r...)
}

// dropColumn is cs without its first column named name.
func dropColumn(cs []starColumn, name string) []starColumn {
	i := slices.IndexFunc(cs, func(c starColumn) bool { return c.name == name })
	if i < 0 {
		return cs
	}
	return slices.Delete(slices.Clone(cs), i, i+1)
}

// finishJoins makes each join's right key read its right input alone,
// once the scans' columns are numbered (finishScans): the FROM clause's
// row is its tables' columns one after the other, so the left side's
// are its row's first ones, and the right table's start at its offset.
func (lv *level) finishJoins() {
	for _, j := range lv.joins {
		shiftCols(j.node.RightKey, -j.right.offset)
	}
}

// shiftCols adds d to the column of every column reference of e, in
// place.
func shiftCols(e *plan.Expr, d int) {
	if e.Kind == plan.ColRef {
		e.Col += d
	}
	for _, a := range e.Args {
		shiftCols(a, d)
	}
}

// anyUsing reports whether a join of it is USING columns.
func (it *fromItem) anyUsing() bool {
	if it == nil || it.scan != nil {
		return false
	}
	return it.using != nil || it.left.anyUsing() || it.right.anyUsing()
}
