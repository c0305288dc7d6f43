package sql

import (
	"vitess.io/vitess/go/vt/sqlparser"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// groupBy binds GROUP BY's keys into the level, and says whether the
// query aggregates (it groups, or calls an aggregate: then one group),
// after which the SELECT list, HAVING and ORDER BY bind above the
// aggregate (level.post). The aggregates themselves are bound where
// those clauses call them (bind.go's aggregate).
func (lv *level) groupBy(sel *sqlparser.Select) error {
	if sel.GroupBy != nil && len(sel.GroupBy.Exprs) > 0 {
		if sel.GroupBy.WithRollup {
			return lv.err("rollup", "WITH ROLLUP", "not supported")
		}
		lv.grouped = true
		lv.at("group")
		for _, g := range sel.GroupBy.Exprs {
			if err := lv.groupKey(g); err != nil {
				return err
			}
		}
	}
	if !lv.grouped && hasAggregate(sel) {
		lv.grouped = true
	}
	lv.post = lv.grouped
	return nil
}

// groupKey binds one expression of GROUP BY as the next group key.
func (lv *level) groupKey(g sqlparser.Expr) error {
	// A whole number in GROUP BY is a position of the SELECT
	// list in MySQL and DuckDB; grouping by it as a constant
	// (one group) would be another answer than theirs.
	if lit, ok := g.(*sqlparser.Literal); ok && lit.Type == sqlparser.IntVal {
		return lv.err(lit.Val, "GROUP BY position", "not supported: write the expression")
	}
	e, v, err := lv.expr(g)
	if err != nil {
		return err
	}
	if lv.keySizes == nil {
		lv.keySizes = map[int][]int{}
	}
	size := lv.c.exprSize(g)
	lv.keySizes[size] = append(lv.keySizes[size], len(lv.keys))
	lv.keys = append(lv.keys, e)
	text := lv.c.render(g)
	lv.keyText = append(lv.keyText, text)
	name := text
	var s *slot
	if cn, ok := g.(*sqlparser.ColName); ok {
		name = cn.Name.String()
		s, _ = lv.column(cn)
	}
	lv.keyNames = append(lv.keyNames, name)
	lv.keyVars = append(lv.keyVars, v)
	lv.keySlots = append(lv.keySlots, s)
	return nil
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

// havingClause binds HAVING (nil: none) above the aggregate, where it may
// name a SELECT item by its alias.
func (lv *level) havingClause(having *sqlparser.Where, items *selectList) (*plan.Expr, error) {
	if having == nil {
		return nil, nil
	}
	if !lv.grouped {
		return nil, lv.err("having", "HAVING", "HAVING needs GROUP BY or an aggregate")
	}
	lv.at("having")
	lv.aliases = map[string]typedExpr{}
	for i, name := range items.names {
		if i != items.rowNum {
			lv.aliases[name] = typedExpr{items.exprs[i], items.vars[i]}
		}
	}
	e, v, err := lv.expr(having.Expr)
	if err != nil {
		return nil, err
	}
	if err := lv.unify(v, known(plan.Bool), "having", "HAVING"); err != nil {
		return nil, err
	}
	return e, nil
}
