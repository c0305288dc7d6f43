package sql

import (
	"maps"
	"slices"
	"strconv"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
)

// WITH: the common table expressions (non-recursive) a SELECT defines,
// and the names they give its FROM clauses and those of its subqueries.
//
// A CTE is not a node of the plan: each reference to it is bound as a
// subquery in FROM of the CTE's text (derived.go), so its plan is the
// subtree the query would have if the body were written inline there,
// one subtree per reference. A plan has no shared nodes (it is a tree,
// plain data), each reference's filters and columns are pruned and
// placed as its own (services/dataflow/sql/rewrite, physical), and a
// CTE read twice reads its tables twice, as a self-join does.

// cteScope is one CTE in scope: the CTEs a name may refer to form a
// chain, innermost first, each link's parent the scope its body is bound
// in (the CTEs before it in its WITH and the enclosing SELECTs'), so
// that a CTE's body sees the CTEs before it but not itself or those
// after it, as PostgreSQL's non-recursive WITH does.
type cteScope struct {
	parent *cteScope
	cte    *parse.CTE
	used   bool         // referenced: its body has been bound at least once
	last   *derivedPlan // the last plan bound of its body (cteBody)
}

// tableNames are the names a FROM may read: the catalog's tables and
// the CTEs in scope, sorted.
func (c *compiler) tableNames() []string {
	names := slices.Collect(maps.Keys(c.cat))
	for s := c.ctes; s != nil; s = s.parent {
		names = append(names, s.cte.Name)
	}
	slices.Sort(names)
	return names
}

// lookupCTE is the CTE in scope named name, or nil.
func (c *compiler) lookupCTE(name string) *cteScope {
	for s := c.ctes; s != nil; s = s.parent {
		if s.cte.Name == name {
			return s
		}
	}
	return nil
}

// withClause brings sel's CTEs into scope, and returns the scope to
// restore once sel is bound and a check of the CTEs nothing referenced
// (each is bound once then, so that an error in it is still an error,
// as in PostgreSQL).
func (c *compiler) withClause(sel *parse.Select) (restore func() error, err error) {
	outer := c.ctes
	if sel.With == nil {
		return func() error { return nil }, nil
	}
	w := sel.With
	var defined []*cteScope
	for _, cte := range w.CTEs {
		for _, d := range defined {
			if d.cte.Name == cte.Name {
				return nil, c.errPos(cte.Pos, "WITH "+cte.Name, "the name %s is given to two common table expressions", cte.Name)
			}
		}
		c.ctes = &cteScope{parent: c.ctes, cte: cte}
		defined = append(defined, c.ctes)
	}
	return func() error {
		for _, d := range defined {
			if d.used {
				continue
			}
			c.checking++
			_, err := c.cteBody(d, d.cte.Pos)
			c.checking--
			if err != nil {
				return err
			}
		}
		c.ctes = outer
		return nil
	}, nil
}

// cteBody binds the body of the CTE of scope s, referenced at pos, in
// the scope the CTE was defined in: a new subtree of the plan. Each
// binding counts the body's expression nodes towards MaxExprNodes, so
// that CTEs referencing each other twice over (each doubling the plan)
// are refused before the plan grows past the bound.
//
// A CTE nothing references is bound once to be checked (checking), its
// plan dropped: there a reference to a CTE bound before takes that plan
// as it is, unchanged (the plan being checked is dropped, and binding
// over a plan never changes it), so that checking CTEs that each read
// the one before twice costs one binding each, not a doubling plan.
func (c *compiler) cteBody(s *cteScope, pos int) (*derivedPlan, error) {
	if c.checking > 0 && s.last != nil {
		return s.last, nil
	}
	c.expanded += 1 + c.selectNodes[s.cte.Select]
	if c.expanded > MaxExprNodes {
		return nil, c.errPos(pos, "expression size", "more than %s expression nodes in the query once its common table expressions are expanded, one copy per reference (the limit, docs/sql.md)", strconv.Itoa(MaxExprNodes))
	}
	s.used = true
	saved := c.ctes
	c.ctes = s.parent
	defer func() { c.ctes = saved }()
	d, err := c.derivedPlan(s.cte.Select)
	s.last = d
	return d, err
}
