package sql

import (
	"reflect"
	"strconv"

	"vitess.io/vitess/go/vt/sqlparser"
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
// the first parenthesis too deep.
func (c *compiler) checkParens() *Error {
	depth := 0
	for _, t := range c.loc.toks {
		switch t.word {
		case "(":
			depth++
			if depth > MaxExprDepth {
				line, col := c.loc.lineCol(t.start)
				return &Error{Construct: "expression depth", Line: line, Col: col,
					Message: "parentheses nested more than " + itoa(MaxExprDepth) + " deep (the limit, docs/sql.md)"}
			}
		case ")":
			depth = max(depth-1, 0)
		}
	}
	return nil
}

// exprSizes walks the statement's expressions once, before anything binds
// them: it refuses one nested deeper than MaxExprDepth or a statement of
// more than MaxExprNodes expression nodes, and returns each node's size
// (the nodes of its subtree, itself included) for the binder's matching
// of group keys (keyIndex). Only pointer nodes are recorded: the others
// (BoolVal, ValTuple...) cannot all be map keys, and the binder
// measures them itself (exprSize).
func (c *compiler) exprSizes(stmt sqlparser.Statement) (map[sqlparser.Expr]int, *Error) {
	sizes := map[sqlparser.Expr]int{}
	var (
		stack     []int // the sizes counted so far of the open expressions
		nodes     int
		bad       sqlparser.Expr // the node past a limit
		what      string
		construct = "expression depth"
	)
	pre := func(cur *sqlparser.Cursor) bool {
		e, ok := cur.Node().(sqlparser.Expr)
		if bad != nil || !ok {
			return bad == nil
		}
		nodes++
		switch {
		case len(stack) >= MaxExprDepth:
			bad, what = e, "nested more than "+itoa(MaxExprDepth)+" deep"
			return false
		case nodes > MaxExprNodes:
			bad, what, construct = e, "more than "+itoa(MaxExprNodes)+" expression nodes in the query", "expression size"
			return false
		}
		stack = append(stack, 1)
		return true
	}
	post := func(cur *sqlparser.Cursor) bool {
		e, ok := cur.Node().(sqlparser.Expr)
		if !ok || bad != nil {
			return true
		}
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if len(stack) > 0 {
			stack[len(stack)-1] += n
		}
		if reflect.ValueOf(e).Kind() == reflect.Pointer {
			sizes[e] = n
		}
		return true
	}
	sqlparser.Rewrite(stmt, pre, post)
	if bad != nil {
		return nil, c.errAt(0, firstWord(bad), construct, "%s (the limit, docs/sql.md)", what)
	}
	return sizes, nil
}

// exprSize is e's size as exprSizes measured it, or measured now for a
// node it did not record.
func (c *compiler) exprSize(e sqlparser.Expr) int {
	if n, ok := c.sizes[e]; ok {
		return n
	}
	n := 0
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		if _, ok := node.(sqlparser.Expr); ok {
			n++
		}
		return true, nil
	}, e)
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }
