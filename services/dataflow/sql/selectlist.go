package sql

import (
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// selectList is a SELECT's output columns as bound: its items (the
// visible columns), then the hidden columns ORDER BY sorts by and does
// not select. It is what the projection computes.
type selectList struct {
	exprs   []*plan.Expr
	vars    []*tvar
	names   []string
	visible int // the items; the columns after them are hidden

	// The ROW_NUMBER() OVER (ORDER BY ...) item: its column, -1 when
	// none, and its window's order.
	rowNum   int
	rowOrder []*parse.OrderItem
	rowPos   int         // of its OVER
	rowCall  *parse.Call // the item; a window's (window.go) if its order is not the query's

	texts []string // text's cache
}

// add appends a column computing e, of kind v.
func (s *selectList) add(e *plan.Expr, v *tvar, name string) {
	s.exprs, s.vars, s.names = append(s.exprs, e), append(s.vars, v), append(s.names, name)
}

// text is exprs[i].String(), rendered once each (an ORDER BY key
// compares with every column).
func (s *selectList) text(i int) string {
	for len(s.texts) <= i {
		s.texts = append(s.texts, s.exprs[len(s.texts)].String())
	}
	return s.texts[i]
}

// hidden reports whether ORDER BY added columns the query does not select.
func (s *selectList) hidden() bool { return len(s.exprs) > s.visible }

// project is the projection computing the list over n.
func (s *selectList) project(n *plan.Node) *plan.Node {
	out := make([]plan.Column, len(s.exprs))
	for i := range s.exprs {
		out[i] = plan.Column{Name: s.names[i]}
	}
	return &plan.Node{Op: plan.Project, Input: []*plan.Node{n}, Exprs: s.exprs, Output: out}
}

// dropHidden is a projection over n (whose columns are the list's) of the
// visible columns only.
func (s *selectList) dropHidden(c *compiler, n *plan.Node) *plan.Node {
	keep := make([]*plan.Expr, s.visible)
	for i := range keep {
		keep[i] = &plan.Expr{Kind: plan.ColRef, Col: i, Name: s.names[i]}
		c.typed = append(c.typed, typedExpr{keep[i], s.vars[i]})
	}
	return &plan.Node{Op: plan.Project, Input: []*plan.Node{n}, Exprs: keep, Output: slices.Clone(n.Output[:s.visible])}
}

// selectItems binds the SELECT list, item by item: *, an expression
// (above the aggregate when the query groups), ROW_NUMBER() OVER (...).
func (lv *level) selectItems(items []*parse.Item) (*selectList, error) {
	s := &selectList{rowNum: -1}
	was := lv.windowsOn(true)
	defer lv.windowsOn(was)
	for _, it := range items {
		var err error
		if it.Star {
			err = lv.star(s, it)
		} else {
			err = lv.item(s, it)
		}
		if err != nil {
			return nil, err
		}
	}
	s.visible = len(s.exprs)
	return s, nil
}

// star binds * or t.*: every column of the FROM clause's tables (of t),
// in their order.
func (lv *level) star(s *selectList, it *parse.Item) error {
	if lv.grouped {
		return lv.err(it.Pos, "*", "SELECT * with GROUP BY or aggregates is not supported")
	}
	if it.Table == "" && lv.from.anyUsing() {
		return lv.usingStar(s, it.Pos) // join.go: USING's columns once
	}
	found := false
	for _, sc := range lv.scans {
		if it.Table != "" && it.Table != sc.alias {
			continue
		}
		found = true
		for _, name := range sc.names {
			e, v, err := lv.expr(&parse.Column{Pos: it.Pos, Table: sc.alias, Name: name})
			if err != nil {
				return err
			}
			s.add(e, v, name)
		}
	}
	if !found {
		return lv.err(it.Pos, it.Table+".*", "no table %s in FROM", it.Table)
	}
	return nil
}

// item binds one expression of the SELECT list, named by its alias, else
// by its column's name, else by its text.
func (lv *level) item(s *selectList, it *parse.Item) error {
	name := it.Alias
	if name == "" {
		if cn, ok := it.Expr.(*parse.Column); ok {
			name = cn.Name
		} else {
			name = lv.c.render(it.Expr)
		}
	}
	if w, ok := it.Expr.(*parse.Call); ok && w.Name == "row_number" && w.Over != nil && s.rowNum < 0 &&
		len(w.Over.PartitionBy) == 0 && len(w.Over.OrderBy) > 0 {
		return lv.rowNumber(s, w, name)
	}
	e, v, err := lv.expr(it.Expr)
	if err != nil {
		return err
	}
	s.add(e, v, name)
	return nil
}

// rowNumber binds q4's ROW_NUMBER() OVER (ORDER BY ...), the first such
// whole item of a SELECT: a column the RowNumber node fills in (a NULL
// until then), whose window orderBy checks against the query's (when
// it is not the query's, the item is a window function: window.go).
func (lv *level) rowNumber(s *selectList, w *parse.Call, name string) error {
	if len(w.Args) > 0 || w.Star || w.Distinct || w.Filter != nil {
		return lv.err(w.Pos, "ROW_NUMBER()", "takes no argument, DISTINCT or FILTER")
	}
	s.rowNum, s.rowOrder, s.rowPos, s.rowCall = len(s.exprs), w.Over.OrderBy, w.Over.Pos, w
	s.add(&plan.Expr{Kind: plan.Const, Type: plan.Number, Null: true}, known(plan.Number), name)
	return nil
}
