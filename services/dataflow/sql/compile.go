package sql

import (
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Catalog names the tables a query may read: table name -> its column
// names, in file order (a CSV header).
type Catalog map[string][]string

// Compile parses query, checks it against the subset and the catalog, and
// returns its logical plan. Every refusal is an *Error.
// The two input tables' columns have their kinds (kinds.go); the other
// tables' take the kinds their uses give them (Options).
func Compile(query string, cat Catalog) (*plan.Node, error) {
	return CompileWith(query, cat, Options{})
}

// CompileWith is Compile, with the columns of the tables other than the
// two input files typed as o says.
func CompileWith(query string, cat Catalog, o Options) (*plan.Node, error) {
	root, _, err := compile(query, cat, o)
	return root, err
}

// compile is CompileWith, with the compiler for the tests to look into.
func compile(query string, cat Catalog, o Options) (*plan.Node, *compiler, error) {
	c := &compiler{src: query, cat: cat, opts: o, cols: map[string]*tvar{}, outVars: map[*plan.Node][]*tvar{}}
	if e := c.checkParens(); e != nil {
		return nil, c, e
	}
	sel, perr := parse.Parse(query, MaxExprDepth)
	if perr != nil {
		return nil, c, c.errPos(perr.Pos, perr.Construct, "%s", perr.Message)
	}
	var e *Error
	if c.sizes, e = c.exprSizes(sel); e != nil {
		return nil, c, e
	}
	root, err := c.selectPlan(sel, topSelect)
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
	splitDistinctAggs(root, c.distinctAggs)
	fixOutputs(root)
	return root, c, nil
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
	case plan.Window:
		n.Output = exec.WindowColumns(n.Input[0].Output, n.WinFuncs)
	default: // filter, semijoin, distinct, sort, limit, rownumber keep their input's
		n.Output = slices.Clone(n.Input[0].Output)
	}
}

type compiler struct {
	src   string
	cat   Catalog
	opts  Options
	cols  map[string]*tvar // "table.column" -> its kind, over the whole statement
	typed []typedExpr      // expressions whose type is known at the end
	scans []*scanInfo
	sizes map[parse.Expr]int // the expressions' sizes (exprSizes)

	rendered int // bytes of query text rendered by render, which the tests bound

	outVars map[*plan.Node][]*tvar // a SELECT's root -> the kinds of its columns

	ctes        *cteScope             // the CTEs in scope (with.go)
	selectNodes map[*parse.Select]int // each SELECT's expression nodes (exprSizes)
	expanded    int                   // expression nodes of the CTE bodies bound so far (cteBody)
	checking    int                   // > 0 while binding a CTE nothing references, to check it

	distinctAggs map[*plan.Agg]bool // the aggregates of DISTINCT, split in two levels once typed (aggdistinct.go)

	outer []*level // the SELECTs whose expressions' subqueries are being bound (subquery.go)
}

// outVar is the kind of the first column of a SELECT's plan.
func (c *compiler) outVar(n *plan.Node) *tvar { return c.outVars[n][0] }

type typedExpr struct {
	e *plan.Expr
	v *tvar
}

// render is e as the parser renders it, counted in c.rendered.
func (c *compiler) render(e parse.Expr) string {
	s := parse.String(e)
	c.rendered += len(s)
	return s
}

// errPos is an Error about construct, which starts at byte offset pos of
// the query.
func (c *compiler) errPos(pos int, construct, format string, args ...any) *Error {
	line, col := lineCol(c.src, pos)
	return &Error{Construct: construct, Line: line, Col: col, Message: fmt.Sprintf(format, args...)}
}
