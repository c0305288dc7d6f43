package sql

import (
	"slices"
	"strings"

	"vitess.io/vitess/go/vt/sqlparser"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// The FROM clause: its tables, their columns as the query reads them
// (slots), and the scopes that column names resolve in.

// scanInfo is one table of a FROM clause: its scan node and the columns
// the query reads of it, in the order first met.
type scanInfo struct {
	alias, table string
	names        []string // the catalog's columns
	node         *plan.Node
	slots        []*slot
	offset       int // of its first column in the FROM clause's row
}

// slot is one column of a table that the query reads: its kind, and the
// references to it, numbered once the scan's columns are (finishScans).
type slot struct {
	name string
	v    *tvar
	refs []*plan.Expr
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
		return lv.join(t)
	}
	return nil, lv.err("from", "FROM", "%s is not supported", sqlparser.String(from[0]))
}

// join resolves an inner equi-join of two tables on one column each:
// JOIN ... ON a.x = b.y, the sides in either order. The join node's keys
// read the columns of its two inputs as bound; the right one is made
// relative to the right input once the scans' columns are numbered
// (selectPlan).
func (lv *level) join(t *sqlparser.JoinTableExpr) (*plan.Node, error) {
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
