package sql

import (
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// One SELECT is bound clause by clause, each by its own binder, in the
// order a clause may depend on the ones before it (and in which a query
// with several faults is refused for the first one):
//
//	from.go        FROM and JOIN: the tables, their columns, the join (fromPlan)
//	where.go       WHERE: the filter and the IN (SELECT ...) semi-joins (whereClause)
//	group.go       GROUP BY, the aggregates (groupBy), HAVING (havingClause)
//	selectlist.go  the SELECT list, ROW_NUMBER() OVER (...) among it (selectItems)
//	window.go      the window functions of the SELECT list and ORDER BY
//	order.go       ORDER BY, the row number's order, LIMIT (orderBy, limitClause)
//
// Each binder reads its clause and the level, and returns what it bound;
// assemble then stacks the plan's nodes in the order they run.

// level is one SELECT being compiled.
type level struct {
	c     *compiler
	scans []*scanInfo

	// The aggregate stage, when the query groups.
	grouped  bool
	keys     []*plan.Expr
	keyText  []string      // the group keys as the parser renders them
	keySizes map[int][]int // the keys by their sizes (exprSize), for keyIndex
	keyNames []string      // and as the aggregate's output names them
	keySlots []*slot       // a key that is a column: its slot
	keyVars  []*tvar
	aggs     []*plan.Agg
	aggText  []string
	aggIndex map[string]int // aggText's index of each text
	aggVars  []*tvar
	post     bool // binding above the aggregate

	aliases map[string]typedExpr // HAVING: the SELECT items by alias

	from  *fromItem  // the FROM clause's joins (join.go), nil when it has none
	joins []joinInfo // and their nodes

	aggNotes []aggNote // the aggregates, for the checks of DISTINCT ones (aggdistinct.go)

	wins *windowSet // the window functions (window.go), nil when none may stand yet
	subs subJoins   // the joins of the subqueries of expressions (subquery.go)
}

// err is an Error about construct, which starts at byte offset pos.
func (lv *level) err(pos int, construct, format string, args ...any) *Error {
	return lv.c.errPos(pos, construct, format, args...)
}

// bound is one SELECT with every clause bound: what assemble stacks.
type bound struct {
	from   *plan.Node
	where  whereClause
	having *plan.Expr // nil: none
	items  *selectList
	order  []plan.SortKey
	limit  int64 // -1: none
	// distinct is SELECT DISTINCT; role, where the SELECT stands.
	distinct bool
	role     selectRole
	offset   int64 // OFFSET's rows, 0: none
}

// selectRole is where a SELECT stands in the statement, which decides
// whether its rows need an order.
type selectRole int

const (
	topSelect     selectRole = iota // the statement: its rows are the output, ordered
	inSelect                        // an IN (SELECT ...) subquery: a set
	derivedSelect                   // a subquery in FROM or a CTE: rows another SELECT reads
)

// selectPlan compiles one SELECT, which stands where role says.
func (c *compiler) selectPlan(sel *parse.Select, role selectRole) (*plan.Node, error) {
	if sel.Set != nil {
		return c.setOpPlan(sel, role)
	}
	restore, err := c.withClause(sel)
	if err != nil {
		return nil, err
	}
	lv := &level{c: c}
	b := bound{distinct: sel.Distinct, role: role}
	if b.from, err = lv.fromPlan(sel); err != nil {
		return nil, err
	}
	if b.where, err = lv.whereClause(sel); err != nil {
		return nil, err
	}
	if err := lv.groupBy(sel); err != nil {
		return nil, err
	}
	if b.items, err = lv.selectItems(sel.Items); err != nil {
		return nil, err
	}
	if b.having, err = lv.havingClause(sel, b.items); err != nil {
		return nil, err
	}
	if b.order, err = lv.orderBy(sel, b.items); err != nil {
		return nil, err
	}
	if b.limit, err = lv.limitClause(sel); err != nil {
		return nil, err
	}
	if b.offset, err = lv.offsetClause(sel); err != nil {
		return nil, err
	}
	if err := lv.checkDistinctAggs(); err != nil {
		return nil, err
	}
	if err := restore(); err != nil {
		return nil, err
	}
	// The columns each scan reads are known now: number them.
	lv.finishScans()
	lv.finishJoins()
	n := lv.assemble(&b)
	c.outVars[n] = b.items.vars[:b.items.visible]
	return n, nil
}

// assemble stacks a bound SELECT's nodes in the order they run: filter,
// semi-joins, aggregate and HAVING (groups), the projection, then
// outputs (DISTINCT, sort, LIMIT, row number, hidden columns dropped).
func (lv *level) assemble(b *bound) *plan.Node {
	n := stackSubJoins(b.from, lv.fromWidth(), lv.subs.row)
	if len(b.where.filters) > 0 {
		n = over(plan.Filter, n)
		n.Cond = andAll(b.where.filters)
	}
	for _, s := range b.where.semis {
		n = &plan.Node{Op: plan.SemiJoin, Input: []*plan.Node{n, s.sub}, LeftKey: s.key, Output: slices.Clone(n.Output)}
	}
	if lv.grouped {
		n = lv.groups(n, b.having)
	}
	n = lv.windowNodes(n)
	return lv.outputs(b, b.items.project(n))
}

// groups is n grouped by the level's keys into its aggregates, then
// filtered by having (nil: none).
func (lv *level) groups(n *plan.Node, having *plan.Expr) *plan.Node {
	out := make([]plan.Column, 0, len(lv.keys)+len(lv.aggs))
	for _, t := range lv.keyNames {
		out = append(out, plan.Column{Name: t})
	}
	for _, t := range lv.aggText {
		out = append(out, plan.Column{Name: t})
	}
	n = &plan.Node{Op: plan.Aggregate, Input: []*plan.Node{n}, Keys: lv.keys, Aggs: lv.aggs, Output: out}
	n = stackSubJoins(n, len(out), lv.subs.post)
	if having != nil {
		n = over(plan.Filter, n)
		n.Cond = having
	}
	return n
}

// outputs stacks over the projection n what orders and trims the rows:
// DISTINCT, the sort (none in a subquery whose rows another SELECT reads
// as a set, unless its LIMIT or its row number needs the order), LIMIT,
// the row number, and a projection dropping the hidden columns ORDER BY
// added.
func (lv *level) outputs(b *bound, n *plan.Node) *plan.Node {
	if b.distinct {
		n = over(plan.Distinct, n)
	}
	if b.role == topSelect || b.limit >= 0 || b.offset > 0 || b.items.rowNum >= 0 {
		n = over(plan.Sort, n)
		n.Order = b.order
	}
	if b.limit >= 0 || b.offset > 0 {
		n = over(plan.Limit, n)
		n.N, n.Offset = b.limit, b.offset
	}
	if rn := b.items.rowNum; rn >= 0 {
		n = over(plan.RowNumber, n)
		n.Col, n.Offset = rn, b.offset
	}
	if b.items.hidden() {
		n = b.items.dropHidden(lv.c, n)
	}
	return n
}

// over is a node of op over n, with n's columns.
func over(op plan.Op, n *plan.Node) *plan.Node {
	return &plan.Node{Op: op, Input: []*plan.Node{n}, Output: slices.Clone(n.Output)}
}
