package rewrite

import (
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Shift is a copy of e reading column i+d for each column i.
func Shift(e *plan.Expr, d int) *plan.Expr {
	return Columns(e, func(c *plan.Expr) *plan.Expr {
		m := *c
		m.Col += d
		return &m
	})
}

// Columns copies e, replacing each column reference by col's result (a
// plain copy when col is nil).
func Columns(e *plan.Expr, col func(*plan.Expr) *plan.Expr) *plan.Expr {
	if e == nil {
		return nil
	}
	if e.Kind == plan.ColRef && col != nil {
		return col(e)
	}
	c := *e
	c.Args = nil
	for _, a := range e.Args {
		c.Args = append(c.Args, Columns(a, col))
	}
	return &c
}

// Subst is a copy of e with each column i replaced by a copy of
// exprs[i].
func Subst(e *plan.Expr, exprs []*plan.Expr) *plan.Expr {
	return Columns(e, func(c *plan.Expr) *plan.Expr { return Columns(exprs[c.Col], nil) })
}

// columnsOnly says whether every expression of exprs is a column
// reference: a projection of them picks and orders columns, and computes
// nothing that substituting it would compute twice.
func columnsOnly(exprs []*plan.Expr) bool {
	for _, e := range exprs {
		if e.Kind != plan.ColRef {
			return false
		}
	}
	return true
}

// ColRef is a reference to column col, c, as an expression.
func ColRef(col int, c plan.Column) *plan.Expr {
	return &plan.Expr{Kind: plan.ColRef, Col: col, Type: c.Type, Name: c.Name}
}

// ColRefs is a reference to each of cols, in order.
func ColRefs(cols []plan.Column) []*plan.Expr {
	out := make([]*plan.Expr, len(cols))
	for i, c := range cols {
		out[i] = ColRef(i, c)
	}
	return out
}
