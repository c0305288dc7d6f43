package sql

import (
	"fmt"
	"slices"
	"strings"

	"vitess.io/vitess/go/vt/sqlparser"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Catalog names the tables a query may read: table name -> its column
// names, in file order (a CSV header).
type Catalog map[string][]string

// Compile parses query, checks it against the subset and the catalog, and
// returns its logical plan. Every refusal is an *Error.
func Compile(query string, cat Catalog) (*plan.Node, error) {
	root, _, err := compile(query, cat)
	return root, err
}

// compile is Compile, with the compiler for the tests to look into.
func compile(query string, cat Catalog) (*plan.Node, *compiler, error) {
	p, err := sqlparser.New(sqlparser.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("sql: parser: %w", err)
	}
	c := &compiler{loc: newLocator(p, query), cat: cat, cols: map[string]*tvar{}, outVars: map[*plan.Node]*tvar{}}
	if e := c.checkParens(); e != nil {
		return nil, c, e
	}
	stmt, err := parse(p, query)
	if err != nil {
		return nil, c, c.loc.syntax(err)
	}
	var e *Error
	if c.sizes, e = c.exprSizes(stmt); e != nil {
		return nil, c, e
	}
	sel, ok := stmt.(*sqlparser.Select)
	if !ok {
		construct, anchor := "statement", ""
		switch stmt.(type) {
		case *sqlparser.Union:
			construct, anchor = "UNION", "union"
		}
		if len(c.loc.toks) > 0 && anchor == "" {
			anchor = c.loc.toks[0].word
			construct = strings.ToUpper(anchor) + " statement"
		}
		return nil, c, c.errAt(0, anchor, construct, "only SELECT is supported")
	}
	root, err := c.selectPlan(sel, false)
	if err != nil {
		return nil, c, err
	}
	// The kinds are known once the whole statement is bound.
	for _, u := range c.typed {
		u.e.Type = u.v.column("").Type
	}
	for _, s := range c.scans {
		for i := range s.node.Output {
			s.node.Output[i] = s.slots[i].v.column(s.node.Output[i].Name)
		}
	}
	fixOutputs(root)
	return root, c, nil
}

// parse is the parser's Parse, with a panic of the parser (it has some:
// "set````" panics in vitess v0.24.4, found by FuzzParse) as an error.
func parse(p *sqlparser.Parser, query string) (stmt sqlparser.Statement, err error) {
	defer func() {
		if r := recover(); r != nil {
			stmt, err = nil, fmt.Errorf("syntax error at position %d: the parser failed: %v", len(query)+1, r)
		}
	}()
	return p.Parse(query)
}

// fixOutputs recomputes the columns' types of every node above the scans
// from their expressions, now that the kinds are resolved.
func fixOutputs(n *plan.Node) {
	for _, in := range n.Input {
		fixOutputs(in)
	}
	switch n.Op {
	case plan.Project:
		for i, e := range n.Exprs {
			n.Output[i].Type = e.Type
		}
	case plan.Aggregate:
		for i, k := range n.Keys {
			n.Output[i].Type = k.Type
		}
		for i, a := range n.Aggs {
			n.Output[len(n.Keys)+i].Type = exec.AggResultType(a)
		}
	case plan.Scan:
	case plan.Join:
		n.Output = append(slices.Clone(n.Input[0].Output), n.Input[1].Output...)
	default: // filter, semijoin, distinct, sort, limit, rownumber keep their input's
		n.Output = slices.Clone(n.Input[0].Output)
	}
}

type compiler struct {
	loc   *locator
	cat   Catalog
	cols  map[string]*tvar // "table.column" -> its kind, over the whole statement
	typed []typedExpr      // expressions whose type is known at the end
	scans []*scanInfo
	nSel  int                    // SELECT keywords met so far, to find each one's clauses
	sizes map[sqlparser.Expr]int // the expressions' sizes (exprSizes)

	rendered int // bytes of query text rendered by render, which the tests bound

	outVars map[*plan.Node]*tvar // a subquery's root -> the kind of its one column
}

// outVar is the kind of the first column of a SELECT's plan.
func (c *compiler) outVar(n *plan.Node) *tvar { return c.outVars[n] }

type typedExpr struct {
	e *plan.Expr
	v *tvar
}

// render is the parser's rendering of n, counted in c.rendered.
func (c *compiler) render(n sqlparser.SQLNode) string {
	s := sqlparser.String(n)
	c.rendered += len(s)
	return s
}

func (c *compiler) errAt(from int, anchor, construct, format string, args ...any) *Error {
	line, col := c.loc.lineCol(c.loc.find(from, anchor))
	return &Error{Construct: construct, Line: line, Col: col, Message: fmt.Sprintf(format, args...)}
}

// firstWord is the first word of e as the parser renders it, to find it
// in the query text.
func firstWord(e sqlparser.SQLNode) string {
	s := sqlparser.String(e)
	if i := strings.IndexAny(s, " (,"); i > 0 {
		s = s[:i]
	}
	return strings.Trim(s, "`")
}
