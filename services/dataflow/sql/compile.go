package sql

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"vitess.io/vitess/go/vt/sqlparser"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Catalog names the tables a query may read: table name -> its column
// names, in file order (a CSV header).
type Catalog map[string][]string

// Compile parses query, checks it against the subset and the catalog, and
// returns its logical plan. Every refusal is an *Error.
func Compile(query string, cat Catalog) (*plan.Node, error) {
	root, _, err := compile(query, cat)
	return root, err
}

// compile is Compile, with the compiler for the tests to look into.
func compile(query string, cat Catalog) (*plan.Node, *compiler, error) {
	p, err := sqlparser.New(sqlparser.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("sql: parser: %w", err)
	}
	c := &compiler{loc: newLocator(p, query), cat: cat, cols: map[string]*tvar{}, outVars: map[*plan.Node]*tvar{}}
	if e := c.checkParens(); e != nil {
		return nil, c, e
	}
	stmt, err := parse(p, query)
	if err != nil {
		return nil, c, c.loc.syntax(err)
	}
	var e *Error
	if c.sizes, e = c.exprSizes(stmt); e != nil {
		return nil, c, e
	}
	sel, ok := stmt.(*sqlparser.Select)
	if !ok {
		construct, anchor := "statement", ""
		switch stmt.(type) {
		case *sqlparser.Union:
			construct, anchor = "UNION", "union"
		}
		if len(c.loc.toks) > 0 && anchor == "" {
			anchor = c.loc.toks[0].word
			construct = strings.ToUpper(anchor) + " statement"
		}
		return nil, c, c.errAt(0, anchor, construct, "only SELECT is supported")
	}
	root, err := c.selectPlan(sel, false)
	if err != nil {
		return nil, c, err
	}
	// The kinds are known once the whole statement is bound.
	for _, u := range c.typed {
		u.e.Type = u.v.column("").Type
	}
	for _, s := range c.scans {
		for i := range s.node.Output {
			s.node.Output[i] = s.slots[i].v.column(s.node.Output[i].Name)
		}
	}
	fixOutputs(root)
	return root, c, nil
}

// parse is the parser's Parse, with a panic of the parser (it has some:
// "set````" panics in vitess v0.24.4, found by FuzzParse) as an error.
func parse(p *sqlparser.Parser, query string) (stmt sqlparser.Statement, err error) {
	defer func() {
		if r := recover(); r != nil {
			stmt, err = nil, fmt.Errorf("syntax error at position %d: the parser failed: %v", len(query)+1, r)
		}
	}()
	return p.Parse(query)
}

// fixOutputs recomputes the columns' types of every node above the scans
// from their expressions, now that the kinds are resolved.
func fixOutputs(n *plan.Node) {
	for _, in := range n.Input {
		fixOutputs(in)
	}
	switch n.Op {
	case plan.Project:
		for i, e := range n.Exprs {
			n.Output[i].Type = e.Type
		}
	case plan.Aggregate:
		for i, k := range n.Keys {
			n.Output[i].Type = k.Type
		}
		for i, a := range n.Aggs {
			n.Output[len(n.Keys)+i].Type = exec.AggResultType(a)
		}
	case plan.Scan:
	case plan.Join:
		n.Output = append(slices.Clone(n.Input[0].Output), n.Input[1].Output...)
	default: // filter, semijoin, distinct, sort, limit, rownumber keep their input's
		n.Output = slices.Clone(n.Input[0].Output)
	}
}

type compiler struct {
	loc   *locator
	cat   Catalog
	cols  map[string]*tvar // "table.column" -> its kind, over the whole statement
	typed []typedExpr      // expressions whose type is known at the end
	scans []*scanInfo
	nSel  int                    // SELECT keywords met so far, to find each one's clauses
	sizes map[sqlparser.Expr]int // the expressions' sizes (exprSizes)

	rendered int // bytes of query text rendered by render, which the tests bound

	outVars map[*plan.Node]*tvar // a subquery's root -> the kind of its one column
}

// outVar is the kind of the first column of a SELECT's plan.
func (c *compiler) outVar(n *plan.Node) *tvar { return c.outVars[n] }

type typedExpr struct {
	e *plan.Expr
	v *tvar
}

// scanInfo is one table of a FROM clause: its scan node and the columns
// the query reads of it, in the order first met.
type scanInfo struct {
	alias, table string
	names        []string // the catalog's columns
	node         *plan.Node
	slots        []*slot
	offset       int // of its first column in the FROM clause's row
}

type slot struct {
	name string
	v    *tvar
	refs []*plan.Expr
}

// render is the parser's rendering of n, counted in c.rendered.
func (c *compiler) render(n sqlparser.SQLNode) string {
	s := sqlparser.String(n)
	c.rendered += len(s)
	return s
}

func (c *compiler) errAt(from int, anchor, construct, format string, args ...any) *Error {
	line, col := c.loc.lineCol(c.loc.find(from, anchor))
	return &Error{Construct: construct, Line: line, Col: col, Message: fmt.Sprintf(format, args...)}
}

// level is one SELECT being compiled.
type level struct {
	c      *compiler
	scans  []*scanInfo
	clause int // token index of the clause being checked
	start  int // token index of this SELECT

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
}

func (lv *level) err(anchor, construct, format string, args ...any) *Error {
	return lv.c.errAt(lv.clause, anchor, construct, format, args...)
}

// at moves the clause cursor to the first token word after this SELECT.
func (lv *level) at(word string) { lv.clause = lv.c.loc.index(lv.start, word, 0) }

// selectPlan compiles one SELECT; sub says it is an IN subquery.
func (c *compiler) selectPlan(sel *sqlparser.Select, sub bool) (*plan.Node, error) {
	lv := &level{c: c}
	lv.start = c.loc.index(0, "select", c.nSel)
	lv.clause = lv.start
	c.nSel++
	switch {
	case sel.With != nil:
		return nil, lv.err("with", "WITH", "common table expressions are not supported; use col IN (SELECT ...)")
	case sel.Into != nil:
		return nil, lv.err("into", "SELECT INTO", "not supported")
	case sel.Lock != sqlparser.NoLock:
		return nil, lv.err("for", "locking clause", "not supported")
	case len(sel.Windows) > 0:
		return nil, lv.err("window", "WINDOW", "named windows are not supported")
	case sel.Cache != nil || sel.HighPriority || sel.StraightJoinHint || sel.SQLSmallResult || sel.SQLBigResult || sel.SQLBufferResult || sel.SQLCalcFoundRows:
		return nil, lv.err("select", "SELECT option", "MySQL's SELECT options are not supported")
	}

	// FROM.
	lv.at("from")
	from, err := lv.fromPlan(sel.From)
	if err != nil {
		return nil, err
	}

	// WHERE: the IN (SELECT ...) conjuncts become semi-joins, the rest a filter.
	var filters []*plan.Expr
	type semi struct {
		key *plan.Expr
		sub *plan.Node
	}
	var semis []semi
	if sel.Where != nil {
		lv.at("where")
		for _, conj := range conjuncts(sel.Where.Expr) {
			if cmp, ok := conj.(*sqlparser.ComparisonExpr); ok && cmp.Operator == sqlparser.InOp {
				if sq, ok := cmp.Right.(*sqlparser.Subquery); ok {
					key, kv, err := lv.expr(cmp.Left)
					if err != nil {
						return nil, err
					}
					inner, ok := sq.Select.(*sqlparser.Select)
					if !ok {
						return nil, lv.err("select", "subquery", "an IN subquery is one SELECT")
					}
					sub, err := c.selectPlan(inner, true)
					if err != nil {
						return nil, err
					}
					if len(sub.Output) != 1 {
						return nil, lv.err("select", "subquery", "an IN subquery selects one column, not %d", len(sub.Output))
					}
					if err := lv.unify(kv, c.outVar(sub), "in", "IN (SELECT ...)"); err != nil {
						return nil, err
					}
					semis = append(semis, semi{key, sub})
					continue
				}
			}
			e, v, err := lv.expr(conj)
			if err != nil {
				return nil, err
			}
			if err := lv.unify(v, known(plan.Bool), "where", "WHERE"); err != nil {
				return nil, err
			}
			filters = append(filters, e)
		}
	}

	// GROUP BY, and whether the query aggregates at all.
	if sel.GroupBy != nil && len(sel.GroupBy.Exprs) > 0 {
		if sel.GroupBy.WithRollup {
			return nil, lv.err("rollup", "WITH ROLLUP", "not supported")
		}
		lv.grouped = true
		lv.at("group")
		for _, g := range sel.GroupBy.Exprs {
			// A whole number in GROUP BY is a position of the SELECT
			// list in MySQL and DuckDB; grouping by it as a constant
			// (one group) would be another answer than theirs.
			if lit, ok := g.(*sqlparser.Literal); ok && lit.Type == sqlparser.IntVal {
				return nil, lv.err(lit.Val, "GROUP BY position", "not supported: write the expression")
			}
			e, v, err := lv.expr(g)
			if err != nil {
				return nil, err
			}
			if lv.keySizes == nil {
				lv.keySizes = map[int][]int{}
			}
			size := c.exprSize(g)
			lv.keySizes[size] = append(lv.keySizes[size], len(lv.keys))
			lv.keys = append(lv.keys, e)
			lv.keyText = append(lv.keyText, c.render(g))
			name := lv.keyText[len(lv.keyText)-1]
			if cn, ok := g.(*sqlparser.ColName); ok {
				name = cn.Name.String()
			}
			lv.keyNames = append(lv.keyNames, name)
			lv.keyVars = append(lv.keyVars, v)
			var s *slot
			if cn, ok := g.(*sqlparser.ColName); ok {
				s, _ = lv.column(cn)
			}
			lv.keySlots = append(lv.keySlots, s)
		}
	}
	if !lv.grouped && hasAggregate(sel) {
		lv.grouped = true
	}
	lv.post = lv.grouped

	// SELECT list.
	lv.clause = lv.start
	var (
		exprs    []*plan.Expr
		vars     []*tvar
		names    []string
		rowNum   = -1
		rowOrder sqlparser.OrderBy
	)
	for _, item := range sel.SelectExprs.Exprs {
		switch it := item.(type) {
		case *sqlparser.StarExpr:
			if lv.grouped {
				return nil, lv.err("*", "*", "SELECT * with GROUP BY or aggregates is not supported")
			}
			for _, s := range lv.scans {
				if !it.TableName.IsEmpty() && it.TableName.Name.String() != s.alias {
					continue
				}
				for _, name := range s.names {
					cn := &sqlparser.ColName{Name: sqlparser.NewIdentifierCI(name), Qualifier: sqlparser.TableName{Name: sqlparser.NewIdentifierCS(s.alias)}}
					e, v, err := lv.expr(cn)
					if err != nil {
						return nil, err
					}
					exprs, vars, names = append(exprs, e), append(vars, v), append(names, name)
				}
			}
		case *sqlparser.AliasedExpr:
			name := it.As.String()
			if name == "" {
				if cn, ok := it.Expr.(*sqlparser.ColName); ok {
					name = cn.Name.String()
				} else {
					name = c.render(it.Expr)
				}
			}
			if w, ok := it.Expr.(*sqlparser.ArgumentLessWindowExpr); ok && w.Type == sqlparser.RowNumberExprType {
				spec := (*sqlparser.WindowSpecification)(nil)
				if w.OverClause != nil {
					spec = w.OverClause.WindowSpec
				}
				if rowNum >= 0 || spec == nil || len(spec.PartitionClause) > 0 || spec.FrameClause != nil || len(spec.OrderClause) == 0 || !w.OverClause.WindowName.IsEmpty() {
					return nil, lv.err("row_number", "ROW_NUMBER()", "supported once, as OVER (ORDER BY the query's ORDER BY keys)")
				}
				rowNum, rowOrder = len(exprs), spec.OrderClause
				v := known(plan.Number)
				e := &plan.Expr{Kind: plan.Const, Type: plan.Number, Null: true}
				exprs, vars, names = append(exprs, e), append(vars, v), append(names, name)
				continue
			}
			e, v, err := lv.expr(it.Expr)
			if err != nil {
				return nil, err
			}
			exprs, vars, names = append(exprs, e), append(vars, v), append(names, name)
		default:
			return nil, lv.err("select", "select item", "%s is not supported", sqlparser.String(item))
		}
	}
	visible := len(exprs)

	// HAVING.
	var having *plan.Expr
	if sel.Having != nil {
		if !lv.grouped {
			return nil, lv.err("having", "HAVING", "HAVING needs GROUP BY or an aggregate")
		}
		lv.at("having")
		lv.aliases = map[string]typedExpr{}
		for i, name := range names {
			if i != rowNum {
				lv.aliases[name] = typedExpr{exprs[i], vars[i]}
			}
		}
		e, v, err := lv.expr(sel.Having.Expr)
		if err != nil {
			return nil, err
		}
		if err := lv.unify(v, known(plan.Bool), "having", "HAVING"); err != nil {
			return nil, err
		}
		having = e
	}

	// ORDER BY: an output column by name or position, else an expression
	// computed as a hidden column.
	lv.at("order")
	// exprText is exprs[i].String(), rendered once each (a key compares
	// with every output column).
	var texts []string
	exprText := func(i int) string {
		for len(texts) <= i {
			texts = append(texts, exprs[len(texts)].String())
		}
		return texts[i]
	}
	orderKeys := func(ob sqlparser.OrderBy, hiddenOK bool) ([]plan.SortKey, error) {
		var keys []plan.SortKey
		for _, o := range ob {
			col := -1
			if cn, ok := o.Expr.(*sqlparser.ColName); ok && cn.Qualifier.IsEmpty() {
				for i := range visible {
					if names[i] == cn.Name.String() {
						col = i
						break
					}
				}
			}
			if lit, ok := o.Expr.(*sqlparser.Literal); ok && lit.Type == sqlparser.IntVal {
				n, err := strconv.Atoi(lit.Val)
				if err != nil || n < 1 || n > visible {
					return nil, lv.err(lit.Val, "ORDER BY position", "there is no output column %s", lit.Val)
				}
				col = n - 1
			}
			if col < 0 {
				e, v, err := lv.expr(o.Expr)
				if err != nil {
					return nil, err
				}
				text := e.String()
				for i := range exprs {
					if exprText(i) == text {
						col = i
						break
					}
				}
				if col < 0 {
					if !hiddenOK {
						return nil, lv.err(firstWord(o.Expr), "ORDER BY", "with DISTINCT, ORDER BY names output columns only")
					}
					col = len(exprs)
					exprs, vars, names = append(exprs, e), append(vars, v), append(names, "")
				}
			}
			if col == rowNum {
				return nil, lv.err("row_number", "ORDER BY", "cannot order by the row number")
			}
			keys = append(keys, plan.SortKey{Col: col, Desc: o.Direction == sqlparser.DescOrder})
		}
		return keys, nil
	}
	order, err := orderKeys(sel.OrderBy, !sel.Distinct)
	if err != nil {
		return nil, err
	}
	if rowNum >= 0 {
		lv.at("over")
		wkeys, err := orderKeys(rowOrder, !sel.Distinct)
		if err != nil {
			return nil, err
		}
		if !sameKeys(wkeys, order, exprText) {
			return nil, lv.err("over", "ROW_NUMBER()", "its ORDER BY must be the query's ORDER BY (it numbers the output rows in their order)")
		}
	}

	// LIMIT.
	limit := int64(-1)
	if sel.Limit != nil {
		lv.at("limit")
		if sel.Limit.Offset != nil {
			return nil, lv.err("offset", "OFFSET", "not supported")
		}
		lit, ok := sel.Limit.Rowcount.(*sqlparser.Literal)
		n, err := int64(0), error(nil)
		if ok && lit.Type == sqlparser.IntVal {
			n, err = strconv.ParseInt(lit.Val, 10, 64)
		}
		if !ok || lit.Type != sqlparser.IntVal || err != nil {
			return nil, lv.err("limit", "LIMIT", "LIMIT takes a whole number")
		}
		limit = n
	}

	// The columns each scan reads are known now: number them.
	lv.finishScans()
	if from.Op == plan.Join {
		from.RightKey.Col -= lv.scans[1].offset // it reads the right input alone
	}

	// Assemble: filter, semi-joins, aggregate, having, project, distinct,
	// sort, limit, row number, and the hidden columns dropped.
	n := from
	if len(filters) > 0 {
		n = &plan.Node{Op: plan.Filter, Input: []*plan.Node{n}, Cond: andAll(filters), Output: slices.Clone(n.Output)}
	}
	for _, s := range semis {
		n = &plan.Node{Op: plan.SemiJoin, Input: []*plan.Node{n, s.sub}, LeftKey: s.key, Output: slices.Clone(n.Output)}
	}
	if lv.grouped {
		out := make([]plan.Column, 0, len(lv.keys)+len(lv.aggs))
		for _, t := range lv.keyNames {
			out = append(out, plan.Column{Name: t})
		}
		for _, t := range lv.aggText {
			out = append(out, plan.Column{Name: t})
		}
		n = &plan.Node{Op: plan.Aggregate, Input: []*plan.Node{n}, Keys: lv.keys, Aggs: lv.aggs, Output: out}
		if having != nil {
			n = &plan.Node{Op: plan.Filter, Input: []*plan.Node{n}, Cond: having, Output: slices.Clone(n.Output)}
		}
	}
	out := make([]plan.Column, len(exprs))
	for i := range exprs {
		out[i] = plan.Column{Name: names[i]}
	}
	n = &plan.Node{Op: plan.Project, Input: []*plan.Node{n}, Exprs: exprs, Output: out}
	if sel.Distinct {
		n = &plan.Node{Op: plan.Distinct, Input: []*plan.Node{n}, Output: slices.Clone(n.Output)}
	}
	if !sub || limit >= 0 { // an IN subquery's order does not matter
		n = &plan.Node{Op: plan.Sort, Input: []*plan.Node{n}, Order: order, Output: slices.Clone(n.Output)}
	}
	if limit >= 0 {
		n = &plan.Node{Op: plan.Limit, Input: []*plan.Node{n}, N: limit, Output: slices.Clone(n.Output)}
	}
	if rowNum >= 0 {
		n = &plan.Node{Op: plan.RowNumber, Input: []*plan.Node{n}, Col: rowNum, Output: slices.Clone(n.Output)}
	}
	if len(exprs) > visible {
		keep := make([]*plan.Expr, visible)
		for i := range keep {
			keep[i] = &plan.Expr{Kind: plan.ColRef, Col: i, Name: names[i]}
			c.typed = append(c.typed, typedExpr{keep[i], vars[i]})
		}
		n = &plan.Node{Op: plan.Project, Input: []*plan.Node{n}, Exprs: keep, Output: slices.Clone(n.Output[:visible])}
	}
	c.outVars[n] = vars[0]
	return n, nil
}

// sameKeys reports whether two orderings sort by the same expressions in
// the same directions; exprText renders the output column col's.
func sameKeys(a, b []plan.SortKey, exprText func(col int) string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Desc != b[i].Desc || exprText(a[i].Col) != exprText(b[i].Col) {
			return false
		}
	}
	return true
}

func andAll(es []*plan.Expr) *plan.Expr {
	e := es[0]
	for _, x := range es[1:] {
		e = &plan.Expr{Kind: plan.And, Type: plan.Bool, Args: []*plan.Expr{e, x}}
	}
	return e
}

func conjuncts(e sqlparser.Expr) []sqlparser.Expr { return appendConjuncts(nil, e) }

// appendConjuncts appends e's conjuncts to dst: one slice for the whole
// chain, where concatenating each side's would copy a chain of n ANDs
// n times.
func appendConjuncts(dst []sqlparser.Expr, e sqlparser.Expr) []sqlparser.Expr {
	if a, ok := e.(*sqlparser.AndExpr); ok {
		return appendConjuncts(appendConjuncts(dst, a.Left), a.Right)
	}
	return append(dst, e)
}

// hasAggregate reports whether the SELECT list, HAVING or ORDER BY calls
// an aggregate function.
func hasAggregate(sel *sqlparser.Select) bool {
	found := false
	visit := func(node sqlparser.SQLNode) (bool, error) {
		switch node.(type) {
		case sqlparser.AggrFunc:
			found = true
			return false, nil
		case *sqlparser.Subquery:
			return false, nil
		}
		return true, nil
	}
	_ = sqlparser.Walk(visit, sel.SelectExprs)
	if sel.Having != nil {
		_ = sqlparser.Walk(visit, sel.Having)
	}
	_ = sqlparser.Walk(visit, sel.OrderBy)
	return found
}

// firstWord is the first word of e as the parser renders it, to find it
// in the query text.
func firstWord(e sqlparser.SQLNode) string {
	s := sqlparser.String(e)
	if i := strings.IndexAny(s, " (,"); i > 0 {
		s = s[:i]
	}
	return strings.Trim(s, "`")
}

// fromPlan resolves the FROM clause: one table, or an inner equi-join of
// two on one column each.
func (lv *level) fromPlan(from []sqlparser.TableExpr) (*plan.Node, error) {
	if len(from) == 0 {
		return nil, lv.err("select", "SELECT without FROM", "a query reads one table or a join of two")
	}
	if len(from) > 1 {
		return nil, lv.err(",", "comma join", "join two tables with JOIN ... ON a.x = b.y")
	}
	switch t := from[0].(type) {
	case *sqlparser.AliasedTableExpr:
		s, err := lv.table(t)
		if err != nil {
			return nil, err
		}
		return s.node, nil
	case *sqlparser.JoinTableExpr:
		if t.Join != sqlparser.NormalJoinType {
			construct := strings.ToUpper(t.Join.ToString())
			return nil, lv.err(strings.Fields(t.Join.ToString())[0], construct, "only the inner JOIN ... ON a.x = b.y is supported")
		}
		l, ok1 := t.LeftExpr.(*sqlparser.AliasedTableExpr)
		r, ok2 := t.RightExpr.(*sqlparser.AliasedTableExpr)
		if !ok1 || !ok2 {
			return nil, lv.err("join", "JOIN", "a join is of two tables")
		}
		ls, err := lv.table(l)
		if err != nil {
			return nil, err
		}
		rs, err := lv.table(r)
		if err != nil {
			return nil, err
		}
		if t.Condition == nil || t.Condition.On == nil || len(t.Condition.Using) > 0 {
			return nil, lv.err("join", "JOIN", "a join needs ON a.x = b.y")
		}
		lv.at("on")
		cmp, ok := t.Condition.On.(*sqlparser.ComparisonExpr)
		var lc, rc *sqlparser.ColName
		if ok && cmp.Operator == sqlparser.EqualOp {
			lc, _ = cmp.Left.(*sqlparser.ColName)
			rc, _ = cmp.Right.(*sqlparser.ColName)
		}
		if lc == nil || rc == nil {
			return nil, lv.err("on", "JOIN condition", "ON is one equality of a column of each table")
		}
		le, lvv, err := lv.expr(lc)
		if err != nil {
			return nil, err
		}
		re, rvv, err := lv.expr(rc)
		if err != nil {
			return nil, err
		}
		if slices.Contains(rs.slots, lv.slotOf(le)) { // written the other way round
			le, re = re, le
		}
		if !slices.Contains(ls.slots, lv.slotOf(le)) || !slices.Contains(rs.slots, lv.slotOf(re)) {
			return nil, lv.err("on", "JOIN condition", "ON compares a column of each table")
		}
		if err := lv.unify(lvv, rvv, "on", "JOIN condition"); err != nil {
			return nil, err
		}
		return &plan.Node{Op: plan.Join, Input: []*plan.Node{ls.node, rs.node}, LeftKey: le, RightKey: re}, nil
	}
	return nil, lv.err("from", "FROM", "%s is not supported", sqlparser.String(from[0]))
}

// table resolves one table of FROM against the catalog.
func (lv *level) table(t *sqlparser.AliasedTableExpr) (*scanInfo, error) {
	tn, ok := t.Expr.(sqlparser.TableName)
	if !ok {
		return nil, lv.err("select", "derived table", "FROM names tables, not subqueries")
	}
	if len(t.Partitions) > 0 || len(t.Hints) > 0 || len(t.Columns) > 0 || !tn.Qualifier.IsEmpty() {
		return nil, lv.err(tn.Name.String(), "table reference", "only a table name and an alias are supported")
	}
	name := tn.Name.String()
	cols, ok := lv.c.cat[name]
	if !ok && name == "dual" { // the parser's table of a SELECT without FROM
		return nil, lv.err("select", "SELECT without FROM", "a query reads one table or a join of two")
	}
	if !ok {
		return nil, lv.err(name, "table "+name, "no such table")
	}
	alias := name
	if !t.As.IsEmpty() {
		alias = t.As.String()
	}
	for _, s := range lv.scans {
		if s.alias == alias {
			return nil, lv.err(alias, "table "+alias, "named twice in FROM: give one an alias")
		}
	}
	s := &scanInfo{alias: alias, table: name, names: cols, node: &plan.Node{Op: plan.Scan, Table: name}}
	lv.scans = append(lv.scans, s)
	lv.c.scans = append(lv.c.scans, s)
	return s, nil
}

// finishScans numbers the columns each scan reads and points the column
// references at them.
func (lv *level) finishScans() {
	offset := 0
	for _, s := range lv.scans {
		// In the table's order, whatever order the query names them in.
		slices.SortStableFunc(s.slots, func(a, b *slot) int {
			return slices.Index(s.names, a.name) - slices.Index(s.names, b.name)
		})
		s.offset = offset
		s.node.Output = make([]plan.Column, len(s.slots))
		for i, sl := range s.slots {
			s.node.Output[i] = plan.Column{Name: sl.name}
			for _, e := range sl.refs {
				e.Col = offset + i
			}
		}
		offset += len(s.slots)
	}
}

// slotOf returns the slot a column reference was bound to.
func (lv *level) slotOf(e *plan.Expr) *slot {
	for _, s := range lv.scans {
		for _, sl := range s.slots {
			if slices.Contains(sl.refs, e) {
				return sl
			}
		}
	}
	return nil
}

// column resolves a column name to its slot in this level's scans,
// creating the slot on first use.
func (lv *level) column(cn *sqlparser.ColName) (*slot, error) {
	name := cn.Name.String()
	var found *scanInfo
	for _, s := range lv.scans {
		if !cn.Qualifier.IsEmpty() && cn.Qualifier.Name.String() != s.alias {
			continue
		}
		n := 0
		for _, c := range s.names {
			if c == name {
				n++
			}
		}
		if n > 1 {
			return nil, lv.err(name, "column "+name, "table %s has two columns named %s", s.table, name)
		}
		if n == 1 {
			if found != nil {
				return nil, lv.err(name, "column "+name, "ambiguous: name its table")
			}
			found = s
		}
	}
	if found == nil {
		what := name
		if !cn.Qualifier.IsEmpty() {
			what = cn.Qualifier.Name.String() + "." + name
		}
		e := lv.err(name, "column "+what, "no such column")
		e.Missing = name
		return nil, e
	}
	for _, sl := range found.slots {
		if sl.name == name {
			return sl, nil
		}
	}
	key := found.table + "." + name
	v, ok := lv.c.cols[key]
	if !ok {
		v = &tvar{}
		lv.c.cols[key] = v
	}
	sl := &slot{name: name, v: v}
	found.slots = append(found.slots, sl)
	return sl, nil
}

// unify makes two kinds one, or refuses the construct at anchor.
func (lv *level) unify(a, b *tvar, anchor, construct string) error {
	ok, ta, tb := unify(a, b)
	if ok {
		return nil
	}
	what := ""
	if w := a.root().what; w != "" {
		what = " (" + w + ")"
	} else if w := b.root().what; w != "" {
		what = " (" + w + ")"
	}
	return lv.err(anchor, construct, "a %s is used as a %s%s", ta, tb, what)
}
