package sql

import (
	"strconv"

	"vitess.io/vitess/go/vt/sqlparser"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// orderBy binds ORDER BY into sort keys over the SELECT list's columns
// (adding hidden ones, but with DISTINCT), and checks that the
// ROW_NUMBER() item's window, if any, orders as the query does.
func (lv *level) orderBy(sel *sqlparser.Select, items *selectList) ([]plan.SortKey, error) {
	lv.at("order")
	order, err := lv.orderKeys(sel.OrderBy, items, !sel.Distinct)
	if err != nil || items.rowNum < 0 {
		return order, err
	}
	lv.at("over")
	wkeys, err := lv.orderKeys(items.rowOrder, items, !sel.Distinct)
	if err != nil {
		return nil, err
	}
	if !sameKeys(wkeys, order, items.text) {
		return nil, lv.err("over", "ROW_NUMBER()", "its ORDER BY must be the query's ORDER BY (it numbers the output rows in their order)")
	}
	return order, nil
}

// orderKeys binds an ORDER BY: each key an output column by name or
// position, else an expression, which is the column computing it or, when
// hiddenOK, a hidden column added to items.
func (lv *level) orderKeys(ob sqlparser.OrderBy, items *selectList, hiddenOK bool) ([]plan.SortKey, error) {
	var keys []plan.SortKey
	for _, o := range ob {
		col, err := lv.orderColumn(o.Expr, items, hiddenOK)
		if err != nil {
			return nil, err
		}
		if col == items.rowNum {
			return nil, lv.err("row_number", "ORDER BY", "cannot order by the row number")
		}
		keys = append(keys, plan.SortKey{Col: col, Desc: o.Direction == sqlparser.DescOrder})
	}
	return keys, nil
}

// orderColumn is the column of items an ORDER BY key sorts by: a visible
// column by its name or position, else the column of the same
// expression, else (hiddenOK) a hidden column added for it.
func (lv *level) orderColumn(x sqlparser.Expr, items *selectList, hiddenOK bool) (int, error) {
	col := -1
	if cn, ok := x.(*sqlparser.ColName); ok && cn.Qualifier.IsEmpty() {
		for i := range items.visible {
			if items.names[i] == cn.Name.String() {
				col = i
				break
			}
		}
	}
	if lit, ok := x.(*sqlparser.Literal); ok && lit.Type == sqlparser.IntVal {
		n, err := strconv.Atoi(lit.Val)
		if err != nil || n < 1 || n > items.visible {
			return -1, lv.err(lit.Val, "ORDER BY position", "there is no output column %s", lit.Val)
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
		return -1, lv.err(firstWord(x), "ORDER BY", "with DISTINCT, ORDER BY names output columns only")
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
		if a[i].Desc != b[i].Desc || exprText(a[i].Col) != exprText(b[i].Col) {
			return false
		}
	}
	return true
}

// limitClause binds LIMIT n (-1: none); OFFSET is refused.
func (lv *level) limitClause(l *sqlparser.Limit) (int64, error) {
	if l == nil {
		return -1, nil
	}
	lv.at("limit")
	if l.Offset != nil {
		return -1, lv.err("offset", "OFFSET", "not supported")
	}
	lit, ok := l.Rowcount.(*sqlparser.Literal)
	if ok && lit.Type == sqlparser.IntVal {
		if n, err := strconv.ParseInt(lit.Val, 10, 64); err == nil {
			return n, nil
		}
	}
	return -1, lv.err("limit", "LIMIT", "LIMIT takes a whole number")
}
