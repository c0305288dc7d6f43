package sql

import (
	"strconv"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// orderBy binds ORDER BY into sort keys over the SELECT list's columns
// (adding hidden ones, but with DISTINCT), and checks that the
// ROW_NUMBER() item's window, if any, orders as the query does.
func (lv *level) orderBy(sel *parse.Select, items *selectList) ([]plan.SortKey, error) {
	was := lv.windowsOn(true)
	defer lv.windowsOn(was)
	if items.rowNum >= 0 && !lv.rowNumberIsOrder(sel) {
		if err := lv.windowRowNumber(items); err != nil {
			return nil, err
		}
	}
	order, err := lv.orderKeys(sel.OrderBy, items, !sel.Distinct)
	if err != nil || items.rowNum < 0 {
		return order, err
	}
	wkeys, err := lv.orderKeys(items.rowOrder, items, !sel.Distinct)
	if err != nil {
		return nil, err
	}
	if !sameKeys(wkeys, order, items.text) {
		return nil, lv.err(items.rowPos, "ROW_NUMBER()", "its ORDER BY must be the query's ORDER BY (it numbers the output rows in their order)")
	}
	return order, nil
}

// orderKeys binds an ORDER BY: each key an output column by name or
// position, else an expression, which is the column computing it or, when
// hiddenOK, a hidden column added to items.
func (lv *level) orderKeys(ob []*parse.OrderItem, items *selectList, hiddenOK bool) ([]plan.SortKey, error) {
	var keys []plan.SortKey
	for _, o := range ob {
		col, err := lv.orderColumn(o.Expr, items, hiddenOK)
		if err != nil {
			return nil, err
		}
		if col == items.rowNum {
			return nil, lv.err(o.Expr.Position(), "ORDER BY", "cannot order by the row number")
		}
		keys = append(keys, plan.SortKey{Col: col, Desc: o.Desc, NullsFirst: o.Nulls == "first"})
	}
	return keys, nil
}

// orderColumn is the column of items an ORDER BY key sorts by: a visible
// column by its name or position, else the column of the same
// expression, else (hiddenOK) a hidden column added for it.
func (lv *level) orderColumn(x parse.Expr, items *selectList, hiddenOK bool) (int, error) {
	col := -1
	if cn, ok := x.(*parse.Column); ok && cn.Table == "" {
		for i := range items.visible {
			if items.names[i] == cn.Name {
				col = i
				break
			}
		}
	}
	if lit, ok := x.(*parse.Literal); ok && lit.Kind == parse.NumberLit && isWhole(lit.Text) {
		n, err := strconv.Atoi(lit.Text)
		if err != nil || n < 1 || n > items.visible {
			return -1, lv.err(lit.Pos, "ORDER BY position", "there is no output column %s", lit.Text)
		}
		col = n - 1
	}
	if col >= 0 {
		return col, nil
	}
	e, v, err := lv.expr(x)
	if err != nil {
		return -1, err
	}
	text := e.String()
	for i := range items.exprs {
		if items.text(i) == text {
			return i, nil
		}
	}
	if !hiddenOK {
		return -1, lv.err(x.Position(), "ORDER BY", "with DISTINCT, ORDER BY names output columns only")
	}
	items.add(e, v, "")
	return len(items.exprs) - 1, nil
}

// sameKeys reports whether two orderings sort by the same expressions in
// the same directions; exprText renders the output column col's.
func sameKeys(a, b []plan.SortKey, exprText func(col int) string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Desc != b[i].Desc || a[i].NullsFirst != b[i].NullsFirst || exprText(a[i].Col) != exprText(b[i].Col) {
			return false
		}
	}
	return true
}

// limitClause binds LIMIT n (-1: none).
func (lv *level) limitClause(sel *parse.Select) (int64, error) {
	if sel.Limit == nil {
		return -1, nil
	}
	if lit, ok := sel.Limit.(*parse.Literal); ok && lit.Kind == parse.NumberLit && isWhole(lit.Text) {
		if n, err := strconv.ParseInt(lit.Text, 10, 64); err == nil {
			return n, nil
		}
	}
	return -1, lv.err(sel.LimitPos, "LIMIT", "LIMIT takes a whole number")
}

// isWhole reports whether a number as written is digits only.
func isWhole(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
