package sql

import (
	"slices"
	"strconv"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// groupBy binds GROUP BY's keys into the level, and says whether the
// query aggregates (it groups, or calls an aggregate: then one group),
// after which the SELECT list, HAVING and ORDER BY bind above the
// aggregate (level.post). The aggregates themselves are bound where
// those clauses call them (bind.go's aggregate).
func (lv *level) groupBy(sel *parse.Select) error {
	if len(sel.GroupBy) > 0 {
		lv.grouped = true
		for _, g := range sel.GroupBy {
			g, err := lv.groupTarget(sel.Items, g)
			if err != nil {
				return err
			}
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

// groupTarget is the expression a GROUP BY item groups by, by
// PostgreSQL's rule: a whole number is a position of the SELECT list
// (not a constant: one group), the item's expression; a bare name that
// no input column has is a SELECT item's alias, the item's expression;
// anything else is itself (an input column wins over an alias).
func (lv *level) groupTarget(items []*parse.Item, g parse.Expr) (parse.Expr, error) {
	switch x := g.(type) {
	case *parse.Literal:
		if x.Kind != parse.NumberLit || !isWhole(x.Text) {
			return g, nil
		}
		for _, it := range items {
			if it.Star {
				return nil, lv.err(it.Pos, "*", "SELECT * with GROUP BY or aggregates is not supported")
			}
		}
		n, err := strconv.Atoi(x.Text)
		if err != nil || n < 1 || n > len(items) {
			return nil, lv.err(x.Pos, "GROUP BY position", "there is no output column %s", x.Text)
		}
		return items[n-1].Expr, nil
	case *parse.Column:
		if x.Table != "" || lv.hasColumn(x.Name) {
			return g, nil
		}
		var target parse.Expr
		for _, it := range items {
			if it.Star || it.Alias != x.Name {
				continue
			}
			if target != nil && lv.c.render(target) != lv.c.render(it.Expr) {
				return nil, lv.err(x.Pos, "GROUP BY "+x.Name, "ambiguous: two SELECT items are named %s", x.Name)
			}
			target = it.Expr
		}
		if target != nil {
			return target, nil
		}
	}
	return g, nil
}

// hasColumn reports whether a table of the FROM clause has a column name.
func (lv *level) hasColumn(name string) bool {
	for _, s := range lv.scans {
		if slices.Contains(s.names, name) {
			return true
		}
	}
	return false
}

// groupKey binds one expression of GROUP BY as the next group key.
func (lv *level) groupKey(g parse.Expr) error {
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
	if cn, ok := g.(*parse.Column); ok {
		name = cn.Name
		s, _ = lv.column(cn)
	}
	lv.keyNames = append(lv.keyNames, name)
	lv.keyVars = append(lv.keyVars, v)
	lv.keySlots = append(lv.keySlots, s)
	return nil
}

// hasAggregate reports whether the SELECT list, HAVING or ORDER BY calls
// an aggregate function (not inside a subquery).
func hasAggregate(sel *parse.Select) bool {
	var found func(e parse.Expr) bool
	found = func(e parse.Expr) bool {
		if c, ok := e.(*parse.Call); ok && isAggregate(c) && c.Over == nil {
			return true
		}
		return slices.ContainsFunc(parse.Children(e), found)
	}
	for _, it := range sel.Items {
		if it.Expr != nil && found(it.Expr) {
			return true
		}
	}
	if sel.Having != nil && found(sel.Having) {
		return true
	}
	return slices.ContainsFunc(sel.OrderBy, func(o *parse.OrderItem) bool { return found(o.Expr) })
}

// aggregateNames are the aggregate functions of PostgreSQL and DuckDB a
// query may call: those of the subset (exec.LookupAggregate), and others
// the binder refuses as aggregates rather than as unknown functions.
var aggregateNames = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"string_agg": true, "array_agg": true, "bool_and": true, "bool_or": true, "every": true, "stddev": true,
	"stddev_pop": true, "stddev_samp": true, "variance": true, "var_pop": true, "var_samp": true,
	"any_value": true, "bit_and": true, "bit_or": true, "median": true, "mode": true, "first": true,
	"last": true, "list": true, "group_concat": true, "listagg": true}

// isAggregate reports whether c calls an aggregate function (with OVER,
// a window function of one).
func isAggregate(c *parse.Call) bool { return aggregateNames[c.Name] }

// havingClause binds HAVING (nil: none) above the aggregate, where it may
// name a SELECT item by its alias.
func (lv *level) havingClause(sel *parse.Select, items *selectList) (*plan.Expr, error) {
	if sel.Having == nil {
		return nil, nil
	}
	if !lv.grouped {
		return nil, lv.err(sel.HavingPos, "HAVING", "HAVING needs GROUP BY or an aggregate")
	}
	lv.aliases = map[string]typedExpr{}
	for i, name := range items.names {
		if i != items.rowNum && !lv.hasWindow(items.exprs[i]) {
			lv.aliases[name] = typedExpr{items.exprs[i], items.vars[i]}
		}
	}
	e, v, err := lv.expr(sel.Having)
	if err != nil {
		return nil, err
	}
	if err := lv.unify(v, known(plan.Bool), sel.HavingPos, "HAVING"); err != nil {
		return nil, err
	}
	return e, nil
}
