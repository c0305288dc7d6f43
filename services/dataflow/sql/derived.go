package sql

import (
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Subqueries in FROM, and references to CTEs (with.go), which are bound
// the same way: the subquery's SELECT compiled as a SELECT of its own
// (derivedSelect: unordered unless its LIMIT or row number needs it), a
// table of the FROM clause whose columns are the subquery's output
// columns, of their kinds. Its plan is an ordinary subtree, so it is
// placed on the cluster like any other (a join of it shuffles it by the
// join's key, an aggregate in it runs at the shards).

// derivedPlan is a subquery's plan, its columns' names and kinds.
type derivedPlan struct {
	node  *plan.Node
	names []string
	vars  []*tvar
}

// derivedPlan compiles sel as a subquery in FROM.
func (c *compiler) derivedPlan(sel *parse.Select) (*derivedPlan, error) {
	n, err := c.selectPlan(sel, derivedSelect)
	if err != nil {
		return nil, err
	}
	d := &derivedPlan{node: n, vars: c.outVars[n]}
	for _, col := range n.Output {
		d.names = append(d.names, col.Name)
	}
	return d, nil
}

// derivedTable binds (SELECT ...) [AS] alias [(columns)] in FROM.
func (lv *level) derivedTable(t *parse.Derived) (*scanInfo, error) {
	if err := lv.newAlias(t.Pos, t.Alias); err != nil {
		return nil, err
	}
	d, err := lv.c.derivedPlan(t.Select)
	if err != nil {
		return nil, err
	}
	what := "subquery"
	if t.Alias != "" {
		what = "subquery " + t.Alias
	}
	return lv.derivedSource(d, t.Alias, what, t.Columns, t.ColPos)
}

// cteRef binds a reference to the CTE of scope s in FROM, [AS] alias
// [(columns)]: the CTE's body bound here anew, its columns named by the
// CTE's column list, then by the alias's.
func (lv *level) cteRef(t *parse.TableName, s *cteScope) (*scanInfo, error) {
	alias := t.Name
	if t.Alias != "" {
		alias = t.Alias
	}
	if err := lv.newAlias(t.Pos, alias); err != nil {
		return nil, err
	}
	d, err := lv.c.cteBody(s, t.Pos)
	if err != nil {
		return nil, err
	}
	if d, err = lv.renamed(d, "common table expression "+s.cte.Name, s.cte.Columns, s.cte.ColPos); err != nil {
		return nil, err
	}
	return lv.derivedSource(d, alias, "common table expression "+s.cte.Name, t.Columns, t.Pos)
}

// derivedSource makes d a table of the FROM clause named alias, its
// columns renamed by columns (written at pos) when given.
func (lv *level) derivedSource(d *derivedPlan, alias, what string, columns []string, pos int) (*scanInfo, error) {
	d, err := lv.renamed(d, what, columns, pos)
	if err != nil {
		return nil, err
	}
	s := &scanInfo{alias: alias, table: what, names: d.names, node: d.node, derived: true, vars: d.vars}
	lv.scans = append(lv.scans, s)
	return s, nil
}

// renamed is d with its first columns named by columns (PostgreSQL's
// rule: a list may name fewer columns than there are, not more), through
// a projection, the subquery's own names being its nodes'.
func (lv *level) renamed(d *derivedPlan, what string, columns []string, pos int) (*derivedPlan, error) {
	if len(columns) == 0 {
		return d, nil
	}
	if len(columns) > len(d.names) {
		return nil, lv.err(pos, what, "has %d columns, and its column list names %d", len(d.names), len(columns))
	}
	for i, c := range columns {
		if slices.Contains(columns[:i], c) {
			return nil, lv.err(pos, what, "its column list names %s twice", c)
		}
	}
	out := &derivedPlan{names: slices.Clone(d.names), vars: d.vars}
	copy(out.names, columns)
	p := &plan.Node{Op: plan.Project, Input: []*plan.Node{d.node}}
	for i, name := range out.names {
		ref := &plan.Expr{Kind: plan.ColRef, Col: i, Name: name}
		lv.c.typed = append(lv.c.typed, typedExpr{ref, d.vars[i]})
		p.Exprs = append(p.Exprs, ref)
		p.Output = append(p.Output, plan.Column{Name: name})
	}
	out.node = p
	lv.c.outVars[p] = d.vars
	return out, nil
}
