package sql

import (
	"strconv"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
)

// The bounds of a query's expressions (docs/sql.md "Limits"). A query
// past either is refused before it is bound, so that what compiling it
// costs (and what evaluating it costs per row) is bounded by these and
// by the query's length, whatever the query.
//
// MaxExprDepth: the four queries of queries/ nest at most 6 deep and
// sqlgen's random queries about 12; a chain of n ANDs (or of n + terms)
// nests n deep, so 128 still takes a WHERE of over a hundred conditions.
// MaxExprNodes: q2, the largest of the four, has about 60 nodes;
// 10,000 takes an IN list of thousands of values.
const (
	MaxExprDepth = 128    // expressions nested deeper than this are refused
	MaxExprNodes = 10_000 // a query with more expression nodes than this is refused
)

// checkParens refuses parentheses nested deeper than MaxExprDepth, from
// the tokens alone, before the parser builds the tree: the construct is
// the first parenthesis too deep. A text that does not lex is left to
// the parser, which says why.
func (c *compiler) checkParens() *Error {
	toks, _ := parse.Lex(c.src)
	depth := 0
	for _, t := range toks {
		if t.Kind != parse.Op {
			continue
		}
		switch t.Text {
		case "(":
			depth++
			if depth > MaxExprDepth {
				return c.errPos(t.Pos, "expression depth", "parentheses nested more than %d deep (the limit, docs/sql.md)", MaxExprDepth)
			}
		case ")":
			depth = max(depth-1, 0)
		}
	}
	return nil
}

// exprSizes walks the statement's expressions once, subqueries' too,
// before anything binds them: it refuses one nested deeper than
// MaxExprDepth or a statement of more than MaxExprNodes expression nodes
// (an IN list counts as a node of its own besides its values), and
// returns each node's size (the nodes of its subtree, itself included)
// for the binder's matching of group keys (keyIndex).
func (c *compiler) exprSizes(sel *parse.Select) (map[parse.Expr]int, *Error) {
	w := &sizer{sizes: map[parse.Expr]int{}, selects: map[*parse.Select]int{}}
	w.selectExprs(sel, 0)
	if w.bad != nil {
		return nil, c.errPos(w.bad.Position(), w.construct, "%s (the limit, docs/sql.md)", w.what)
	}
	c.selectNodes = w.selects
	return w.sizes, nil
}

type sizer struct {
	sizes     map[parse.Expr]int
	selects   map[*parse.Select]int // each SELECT's expression nodes, its subqueries' included
	nodes     int
	bad       parse.Expr // the node past a limit
	what      string
	construct string
}

// selectExprs walks the expressions of sel's clauses, its CTEs' too,
// depth levels deep.
func (w *sizer) selectExprs(sel *parse.Select, depth int) {
	before := w.nodes
	defer func() { w.selects[sel] = w.nodes - before }()
	if sel.With != nil {
		for _, cte := range sel.With.CTEs {
			w.selectExprs(cte.Select, depth)
		}
	}
	if sel.Set != nil {
		w.selectExprs(sel.Set.Left, depth)
		w.selectExprs(sel.Set.Right, depth)
	}
	for _, it := range sel.Items {
		if it.Expr != nil {
			w.expr(it.Expr, depth)
		}
	}
	for _, t := range sel.From {
		w.table(t, depth)
	}
	for _, e := range []parse.Expr{sel.Where, sel.Having, sel.Limit, sel.Offset} {
		if e != nil {
			w.expr(e, depth)
		}
	}
	for _, e := range sel.GroupBy {
		w.expr(e, depth)
	}
	for _, o := range sel.OrderBy {
		w.expr(o.Expr, depth)
	}
}

func (w *sizer) table(t parse.Table, depth int) {
	switch x := t.(type) {
	case *parse.Join:
		w.table(x.Left, depth)
		w.table(x.Right, depth)
		if x.On != nil {
			w.expr(x.On, depth)
		}
	case *parse.Derived:
		w.selectExprs(x.Select, depth)
	}
}

// expr measures e, depth levels below the top, and returns its size.
func (w *sizer) expr(e parse.Expr, depth int) int {
	if w.bad != nil {
		return 0
	}
	w.nodes++
	switch {
	case depth >= MaxExprDepth:
		w.bad, w.what, w.construct = e, "nested more than "+strconv.Itoa(MaxExprDepth)+" deep", "expression depth"
		return 0
	case w.nodes > MaxExprNodes:
		w.bad, w.what, w.construct = e, "more than "+strconv.Itoa(MaxExprNodes)+" expression nodes in the query", "expression size"
		return 0
	}
	n := 1
	kids := parse.Children(e)
	if in, ok := e.(*parse.In); ok && in.Sub == nil {
		// The list: a node of its own, one level below the IN.
		n += w.expr(in.X, depth+1)
		w.nodes++
		for _, v := range in.List {
			n += w.expr(v, depth+2)
		}
		kids = nil
		n++
	}
	for _, k := range kids {
		n += w.expr(k, depth+1)
	}
	switch x := e.(type) {
	case *parse.In:
		if x.Sub != nil {
			w.selectExprs(x.Sub, depth+1)
		}
	case *parse.Subquery:
		w.selectExprs(x.Select, depth+1)
	case *parse.Exists:
		w.selectExprs(x.Select, depth+1)
	}
	w.sizes[e] = n
	return n
}

// exprSize is e's size as exprSizes measured it, or measured now for a
// node it did not record.
func (c *compiler) exprSize(e parse.Expr) int {
	if n, ok := c.sizes[e]; ok {
		return n
	}
	n := 1
	for _, k := range parse.Children(e) {
		n += c.exprSize(k)
	}
	return n
}
