package sql

import (
	"slices"
	"strconv"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Set operations (UNION [ALL], INTERSECT, EXCEPT), by PostgreSQL's
// rules: the operands' columns are matched by position, their number
// and kinds must agree, the names are the first operand's, and the
// ORDER BY, LIMIT and OFFSET written after the last operand order and
// cut the result (ORDER BY names its columns or their positions).
//
// Each is bound onto the plan's operators, so that every layer after
// the binder runs it as any other plan:
//
//   - UNION ALL is a plan.UnionAll node, the rows of both operands;
//   - UNION is a Distinct over that (shuffled by the whole row, as a
//     SELECT DISTINCT is);
//   - INTERSECT and EXCEPT tag each operand's rows with its side (1, 2),
//     group the UNION ALL of them by the whole row (NULLs are one value
//     there, as a set operation wants), and keep the groups whose
//     smallest side is 1 and largest 2 (INTERSECT) or whose largest is 1
//     (EXCEPT): one row per value, as their DISTINCT forms say.
//
// INTERSECT ALL and EXCEPT ALL (multiplicities) are refused by name.

// setOpPlan compiles a SELECT that is a set operation, standing where
// role says.
func (c *compiler) setOpPlan(sel *parse.Select, role selectRole) (*plan.Node, error) {
	restore, err := c.withClause(sel)
	if err != nil {
		return nil, err
	}
	n, vars, err := c.setOperation(sel.Set)
	if err != nil {
		return nil, err
	}
	lv := &level{c: c}
	names := make([]string, len(n.Output))
	for i, col := range n.Output {
		names[i] = col.Name
	}
	order, err := lv.setOrder(sel.OrderBy, names)
	if err != nil {
		return nil, err
	}
	limit, err := lv.limitClause(sel)
	if err != nil {
		return nil, err
	}
	offset, err := lv.offsetClause(sel)
	if err != nil {
		return nil, err
	}
	if err := restore(); err != nil {
		return nil, err
	}
	if role == topSelect || limit >= 0 || offset > 0 {
		n = over(plan.Sort, n)
		n.Order = order
	}
	if limit >= 0 || offset > 0 {
		n = over(plan.Limit, n)
		n.N, n.Offset = limit, offset
	}
	c.outVars[n] = vars
	return n, nil
}

// setOperation compiles s's operands and joins them: the node and the
// kinds of its columns.
func (c *compiler) setOperation(s *parse.SetOp) (*plan.Node, []*tvar, error) {
	construct := strings.ToUpper(s.Op)
	if s.All {
		construct += " ALL"
	}
	if s.All && s.Op != "union" {
		return nil, nil, c.errPos(s.Pos, construct, "not supported (%s without ALL is)", strings.ToUpper(s.Op))
	}
	l, err := c.selectPlan(s.Left, derivedSelect)
	if err != nil {
		return nil, nil, err
	}
	r, err := c.selectPlan(s.Right, derivedSelect)
	if err != nil {
		return nil, nil, err
	}
	lvars, rvars := c.outVars[l], c.outVars[r]
	if len(lvars) != len(rvars) {
		return nil, nil, c.errPos(s.Pos, construct, "each operand must have the same number of columns (%d and %d)", len(lvars), len(rvars))
	}
	lv := &level{c: c}
	for i := range lvars {
		if err := lv.unify(lvars[i], rvars[i], s.Pos, construct+" column "+strconv.Itoa(i+1)); err != nil {
			return nil, nil, err
		}
	}
	if s.Op == "union" {
		n := &plan.Node{Op: plan.UnionAll, Input: []*plan.Node{l, r}, Output: slices.Clone(l.Output)}
		if !s.All {
			n = over(plan.Distinct, n)
		}
		return n, lvars, nil
	}
	return c.intersectExcept(s.Op == "intersect", l, r, lvars), lvars, nil
}

// intersectExcept is the plan of l INTERSECT r (intersect) or l EXCEPT
// r: the rows of both, tagged with their side, grouped by the row, the
// groups of the sides wanted kept, the tag dropped.
func (c *compiler) intersectExcept(intersect bool, l, r *plan.Node, vars []*tvar) *plan.Node {
	w := len(vars)
	ref := func(i int, name string) *plan.Expr {
		e := &plan.Expr{Kind: plan.ColRef, Col: i, Name: name}
		c.typed = append(c.typed, typedExpr{e, vars[i]})
		return e
	}
	side := func(n *plan.Node, tag string) *plan.Node {
		p := &plan.Node{Op: plan.Project, Input: []*plan.Node{n}, Output: append(slices.Clone(l.Output[:w:w]), plan.Column{Name: "side", Type: plan.Number})}
		for i := range w {
			p.Exprs = append(p.Exprs, ref(i, n.Output[i].Name))
		}
		p.Exprs = append(p.Exprs, numConst(tag))
		return p
	}
	both := &plan.Node{Op: plan.UnionAll, Input: []*plan.Node{side(l, "1"), side(r, "2")}}
	both.Output = slices.Clone(both.Input[0].Output)
	tag := &plan.Expr{Kind: plan.ColRef, Col: w, Type: plan.Number, Name: "side"}
	agg := &plan.Node{Op: plan.Aggregate, Input: []*plan.Node{both},
		Aggs:   []*plan.Agg{{Func: plan.Min, Arg: tag}, {Func: plan.Max, Arg: tag}},
		Output: append(slices.Clone(l.Output[:w:w]), plan.Column{Name: "min(side)"}, plan.Column{Name: "max(side)"})}
	for i := range w {
		agg.Keys = append(agg.Keys, ref(i, l.Output[i].Name))
	}
	lo := &plan.Expr{Kind: plan.ColRef, Col: w, Type: plan.Number, Name: "min(side)"}
	hi := &plan.Expr{Kind: plan.ColRef, Col: w + 1, Type: plan.Number, Name: "max(side)"}
	keep := over(plan.Filter, agg)
	if intersect {
		keep.Cond = &plan.Expr{Kind: plan.Cmp, Fn: "<", Type: plan.Bool, Args: []*plan.Expr{lo, hi}}
	} else {
		keep.Cond = &plan.Expr{Kind: plan.Cmp, Fn: "=", Type: plan.Bool, Args: []*plan.Expr{hi, numConst("1")}}
	}
	out := &plan.Node{Op: plan.Project, Input: []*plan.Node{keep}, Output: slices.Clone(l.Output)}
	for i := range w {
		out.Exprs = append(out.Exprs, ref(i, l.Output[i].Name))
	}
	return out
}

// setOrder binds the ORDER BY of a set operation: each key an output
// column by its name or its position.
func (lv *level) setOrder(ob []*parse.OrderItem, names []string) ([]plan.SortKey, error) {
	var keys []plan.SortKey
	for _, o := range ob {
		col := -1
		switch x := o.Expr.(type) {
		case *parse.Column:
			if x.Table == "" {
				col = slices.Index(names, x.Name)
			}
		case *parse.Literal:
			if x.Kind == parse.NumberLit && isWhole(x.Text) {
				n, err := strconv.Atoi(x.Text)
				if err != nil || n < 1 || n > len(names) {
					return nil, lv.err(x.Pos, "ORDER BY position", "there is no output column %s", x.Text)
				}
				col = n - 1
			}
		}
		if col < 0 {
			return nil, lv.err(o.Expr.Position(), "ORDER BY", "of a UNION, INTERSECT or EXCEPT, names an output column or its position")
		}
		keys = append(keys, plan.SortKey{Col: col, Desc: o.Desc, NullsFirst: o.Nulls == "first"})
	}
	return keys, nil
}
