// Package plan is the logical plan of a SQL query (services/dataflow/sql
// makes it, services/dataflow/sql/exec runs it): a tree of Nodes (scan,
// filter, project, join, semi-join, aggregate, distinct, sort, limit, row
// number, union all, window) whose expressions refer to their input's columns by position.
//
// A plan is plain data: structs of exported fields, no interfaces and no
// functions, so it serialises as it is (encoding/json, and later the
// job's stored plan) and a process that receives it rebuilds the same
// operators. Literals are bytes; table and column names go through JSON
// as strings, so there they must be UTF-8. The keyed nodes (Join, SemiJoin, Aggregate, Distinct) name
// their keys explicitly, so that a later planner can partition their state
// across shards by the same keys. String renders the tree for `explain`.
//
// The package holds types and their rendering only: no parsing, no
// execution, no I/O; it imports nothing of this module.
package plan

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Type is the type of a value: what it is computed as.
type Type string

// The types.
const (
	Text   Type = "text"
	Number Type = "number"
	Bool   Type = "bool"
)

// Read is a rule by which a scan reads a column's text into values of
// the column's Type, other than the Type's own.
type Read string

// The read rules.
const (
	// ReadDuration reads a duration ("1 day, 2:03:04") as a Number of
	// seconds: the column of DURATION_SECONDS.
	ReadDuration Read = "duration"
)

// Op names a Node's operator.
type Op string

// The operators.
const (
	Scan      Op = "scan"      // Table's Columns, read by their Types' rules or their Read
	Filter    Op = "filter"    // the rows of Input[0] where Cond is true
	Project   Op = "project"   // Exprs over Input[0]
	Join      Op = "join"      // Input[0] × Input[1] where LeftKey = RightKey; the columns of both; JoinType's unmatched rows
	SemiJoin  Op = "semijoin"  // the rows of Input[0] whose LeftKey is among column 0 of Input[1]
	Aggregate Op = "aggregate" // one row per distinct Keys: the keys, then Aggs
	Distinct  Op = "distinct"  // the distinct rows of Input[0]
	Sort      Op = "sort"      // Input[0] ordered by Order, then by every column ascending
	Limit     Op = "limit"     // the first N rows of Input[0] (N -1: all) after its first Offset
	RowNumber Op = "rownumber" // Input[0] with column Col replaced by Offset+1, Offset+2, ... in row order
	UnionAll  Op = "unionall"  // the rows of Input[0] and of Input[1] (UNION ALL), of Input[0]'s columns; the two inputs' types agree
)

// Column is one output column of a node.
type Column struct {
	Name string `json:"name"`
	Type Type   `json:"type"`
	Read Read   `json:"read,omitempty"` // a scanned column's read rule; "": its Type's
}

// Kind is how String shows the column's values: its read rule, else its
// type.
func (c Column) Kind() string {
	if c.Read != "" {
		return string(c.Read)
	}
	return string(c.Type)
}

// UnmarshalJSON reads a column as Encode writes it, and as a plan of an
// older version did, whose duration column had the type "duration" (a
// Number read by ReadDuration).
func (c *Column) UnmarshalJSON(b []byte) error {
	type column Column // the same fields, without this method
	if err := json.Unmarshal(b, (*column)(c)); err != nil {
		return err
	}
	if c.Type == Type(ReadDuration) {
		c.Type, c.Read = Number, ReadDuration
	}
	return nil
}

// Node is one operator of a plan. Which fields it uses depends on Op.
type Node struct {
	Op     Op       `json:"op"`
	Input  []*Node  `json:"input,omitempty"`
	Output []Column `json:"output"` // the node's columns

	Table string `json:"table,omitempty"` // Scan: the table; Output names its columns and their types

	Cond *Expr `json:"cond,omitempty"` // Filter

	Exprs []*Expr `json:"exprs,omitempty"` // Project: one per output column

	LeftKey  *Expr `json:"left_key,omitempty"`  // Join, SemiJoin: over Input[0]
	RightKey *Expr `json:"right_key,omitempty"` // Join: over Input[1]

	Keys []*Expr `json:"keys,omitempty"` // Aggregate: the group key
	Aggs []*Agg  `json:"aggs,omitempty"` // Aggregate

	Order []SortKey `json:"order,omitempty"` // Sort

	N int64 `json:"n,omitempty"` // Limit

	Col int `json:"col,omitempty"` // RowNumber

	// Offset is, of a Limit, the rows skipped before its N (OFFSET; N
	// -1: no LIMIT, the rows after them all); of a RowNumber, the
	// number before its first (the rows an OFFSET skipped: PostgreSQL
	// numbers them before it skips them).
	Offset int64 `json:"offset,omitempty"`
	// JoinType is a Join's kind (join.go): "" (a plan of an older
	// version, or an inner join), JoinLeft, JoinRight or JoinFull.
	JoinType JoinType `json:"join_type,omitempty"`

	// Window (window.go): the partition's key, the order within it, and
	// the functions, one output column each after Input[0]'s.
	Partition []*Expr    `json:"partition,omitempty"`
	WinOrder  []WinKey   `json:"win_order,omitempty"`
	WinFuncs  []*WinFunc `json:"win_funcs,omitempty"`
	// Subquery is, of a Join the binder made for a subquery of an
	// expression (services/dataflow/sql's subquery.go), the construct it
	// was made for ("scalar subquery", "EXISTS (SELECT ...)", "NOT IN
	// (SELECT ...)", ...), which the layers that refuse it name.
	Subquery string `json:"subquery,omitempty"`
}

// MarkCols marks in cols each column the expressions es read, and
// returns cols; a column past its end (an expression not over these
// columns) marks every one, the safe answer of what it may read.
func MarkCols(cols []bool, es ...*Expr) []bool {
	for _, e := range es {
		if e == nil {
			continue
		}
		if e.Kind == ColRef {
			if e.Col < 0 || e.Col >= len(cols) {
				for i := range cols {
					cols[i] = true
				}
				continue
			}
			cols[e.Col] = true
		}
		MarkCols(cols, e.Args...)
	}
	return cols
}

// AggFunc names an aggregate function.
type AggFunc string

// The aggregate functions.
const (
	CountStar AggFunc = "count(*)"
	Count     AggFunc = "count"
	Sum       AggFunc = "sum"
	Min       AggFunc = "min"
	Max       AggFunc = "max"
	Avg       AggFunc = "avg"
	BoolAnd   AggFunc = "bool_and" // true when every value not NULL is; NULL of none
	BoolOr    AggFunc = "bool_or"  // true when some value is; NULL of none
)

// Agg is one aggregate of an Aggregate node.
type Agg struct {
	Func AggFunc `json:"func"`
	Arg  *Expr   `json:"arg,omitempty"` // over the node's input; nil for count(*)
}

// SortKey is one key of a Sort.
type SortKey struct {
	Col  int  `json:"col"`
	Desc bool `json:"desc,omitempty"`
	// NullsFirst puts NULL before every value (NULLS FIRST); without it
	// NULL sorts after every value, ascending or descending.
	NullsFirst bool `json:"nulls_first,omitempty"`
}

// ExprKind names an expression's form.
type ExprKind string

// The expression forms.
const (
	ColRef ExprKind = "col"    // the input's column Col
	Const  ExprKind = "const"  // Value read as Type; Null for NULL
	Cmp    ExprKind = "cmp"    // Args[0] Fn Args[1], Fn one of = <> < <= > >=
	And    ExprKind = "and"    // Args[0] AND Args[1]
	Or     ExprKind = "or"     // Args[0] OR Args[1]
	Not    ExprKind = "not"    // NOT Args[0]
	IsNull ExprKind = "isnull" // Args[0] IS NULL (Fn "not": IS NOT NULL)
	In     ExprKind = "in"     // Args[0] IN (Args[1:]...), each a Const
	Arith  ExprKind = "arith"  // Args[0] Fn Args[1], Fn one of + - * / %
	Neg    ExprKind = "neg"    // -Args[0]
	Case   ExprKind = "case"   // WHEN Args[0] THEN Args[1] ... [ELSE Args[last]] when len is odd
	Call   ExprKind = "call"   // the function Fn of Args
)

// Functions of Call.
const (
	FnPercent     = "percent"      // PERCENT(part, whole): see value.Percent
	FnCoalesce    = "coalesce"     // COALESCE(a, ...): the first argument not NULL, else NULL; all of Type
	FnNullIf      = "nullif"       // NULLIF(a, b): NULL where a = b is true, else a; a and b of one type
	FnLike        = "like"         // Args[0] LIKE Args[1], Args[1] a text Const pattern (% _ and \ escape)
	FnILike       = "ilike"        // FnLike, letters compared lower-cased
	FnStarts      = "starts_with"  // STARTS_WITH(s, p): s begins with the bytes of p
	FnLower       = "lower"        // LOWER(s): letters lower-cased; bytes not UTF-8 kept
	FnUpper       = "upper"        // UPPER(s): letters upper-cased; bytes not UTF-8 kept
	FnLength      = "length"       // LENGTH(s): characters (UTF-8; a byte not UTF-8 is one)
	FnTrim        = "trim"         // TRIM(s): s without its leading and trailing spaces
	FnReplace     = "replace"      // REPLACE(s, from, to): every from in s made to; s when from is ''
	FnSubstr      = "substr"       // SUBSTR(s, start [, len]): characters start..start+len-1, 1-based
	FnConcat      = "||"           // Args[0] || Args[1]: the texts one after the other
	FnAbs         = "abs"          // ABS(x): |x|, at x's scale
	FnRound       = "round"        // ROUND(x [, digits]): half away from zero; digits (Args[1], a Const whole number) 0 when absent
	FnFloor       = "floor"        // FLOOR(x): the largest whole number <= x
	FnCeil        = "ceil"         // CEIL(x): the smallest whole number >= x
	FnCastInt     = "cast_int"     // CAST_INT(x, bits): x rounded half away from zero, NULL outside the signed range of bits (16, 32, 64; a Const)
	FnCastDecimal = "cast_decimal" // CAST_DECIMAL(x, p, s): x rounded half away from zero to scale s, NULL past p digits (Consts)
	FnGreatest    = "greatest"     // GREATEST(a, ...): the largest argument not NULL (of equal numbers the larger scale), else NULL; all of Type
	FnLeast       = "least"        // LEAST(a, ...): the smallest, as GREATEST
	FnConcatAll   = "concat"       // CONCAT(a, ...): the texts one after the other, a NULL as ''; never NULL
	FnLeft        = "left"         // LEFT(s, n): the first n characters; all but the last -n when n < 0
	FnRight       = "right"        // RIGHT(s, n): the last n characters; all but the first -n when n < 0
	FnSplitPart   = "split_part"   // SPLIT_PART(s, d, i): field i of s split at d (DuckDB's: i < 0 from the end, '' out of range or i = 0, d '' splits characters)
	FnExtract     = "extract"      // EXTRACT(seconds, field): of a duration's seconds, field 'epoch' (them), 'day', 'hour' (of the day), 'minute' (of the hour), 'second' (of the minute)
	FnKey         = "key"          // KEY(a, b, ...): a join's key of several columns, one value (join.go)
	FnOneRow      = "one_row"      // ONE_ROW(count, x): x when count <= 1, else an error (a scalar subquery's value)
)

// Expr is an expression over a node's input columns. Type is its result's.
type Expr struct {
	Kind  ExprKind `json:"kind"`
	Type  Type     `json:"type"`
	Col   int      `json:"col,omitempty"`
	Value []byte   `json:"value,omitempty"` // bytes: a text literal need not be UTF-8
	Null  bool     `json:"null,omitempty"`
	Fn    string   `json:"fn,omitempty"`
	Args  []*Expr  `json:"args,omitempty"`
	Name  string   `json:"name,omitempty"` // ColRef: the column's name, for String
}

// String renders the expression in SQL-like form, columns by name. It
// writes the whole tree into one buffer (AppendTo), so its work is linear
// in the expression's size, however deep it nests.
func (e *Expr) String() string { return string(e.AppendTo(nil)) }

// AppendTo appends String's text to dst.
func (e *Expr) AppendTo(dst []byte) []byte {
	if e == nil {
		return append(dst, "<nil>"...)
	}
	switch e.Kind {
	case ColRef:
		dst = append(dst, e.Name...)
		dst = append(dst, '#')
		return strconv.AppendInt(dst, int64(e.Col), 10)
	case Const:
		switch {
		case e.Null:
			return append(dst, "NULL"...)
		case e.Type == Text:
			dst = append(dst, '\'')
			for _, c := range e.Value {
				if c == '\'' {
					dst = append(dst, '\'')
				}
				dst = append(dst, c)
			}
			return append(dst, '\'')
		}
		return append(dst, e.Value...)
	case Cmp, Arith, And, Or:
		op := e.Fn
		if e.Kind == And || e.Kind == Or {
			op = strings.ToUpper(string(e.Kind))
		}
		dst = append(dst, '(')
		dst = e.Args[0].AppendTo(dst)
		dst = append(dst, ' ')
		dst = append(dst, op...)
		dst = append(dst, ' ')
		dst = e.Args[1].AppendTo(dst)
		return append(dst, ')')
	case Not:
		return e.Args[0].AppendTo(append(dst, "NOT "...))
	case Neg:
		return e.Args[0].AppendTo(append(dst, '-'))
	case IsNull:
		dst = e.Args[0].AppendTo(dst)
		if e.Fn == "not" {
			return append(dst, " IS NOT NULL"...)
		}
		return append(dst, " IS NULL"...)
	case In:
		dst = e.Args[0].AppendTo(dst)
		dst = appendList(append(dst, " IN ("...), e.Args[1:])
		return append(dst, ')')
	case Case:
		dst = append(dst, "CASE"...)
		n := len(e.Args)
		for i := 0; i+1 < n; i += 2 {
			dst = e.Args[i].AppendTo(append(dst, " WHEN "...))
			dst = e.Args[i+1].AppendTo(append(dst, " THEN "...))
		}
		if n%2 == 1 {
			dst = e.Args[n-1].AppendTo(append(dst, " ELSE "...))
		}
		return append(dst, " END"...)
	case Call:
		dst = append(dst, strings.ToUpper(e.Fn)...)
		dst = appendList(append(dst, '('), e.Args)
		return append(dst, ')')
	}
	dst = append(dst, e.Kind...)
	return append(dst, '?')
}

// appendList appends the expressions, separated by ", ".
func appendList(dst []byte, es []*Expr) []byte {
	for i, e := range es {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = e.AppendTo(dst)
	}
	return dst
}

// String renders an aggregate.
func (a *Agg) String() string { return string(a.AppendTo(nil)) }

// AppendTo appends String's text to dst.
func (a *Agg) AppendTo(dst []byte) []byte {
	if a.Func == CountStar {
		return append(dst, "count(*)"...)
	}
	dst = append(dst, a.Func...)
	dst = a.Arg.AppendTo(append(dst, '('))
	return append(dst, ')')
}

// String renders the plan as an indented tree, one node a line, the root
// first, each with its output columns.
func (n *Node) String() string {
	var b strings.Builder
	n.write(&b, 0)
	return b.String()
}

func (n *Node) write(b *strings.Builder, depth int) {
	var buf []byte // one line, written into b at its end
	for range depth {
		buf = append(buf, "  "...)
	}
	buf = append(buf, n.Op...)
	switch n.Op {
	case Scan:
		buf = append(append(buf, ' '), n.Table...)
	case Filter:
		buf = n.Cond.AppendTo(append(buf, ' '))
	case Project:
		buf = appendList(append(buf, ' '), n.Exprs)
	case Join:
		if n.JoinType != "" && n.JoinType != JoinInner {
			buf = append(append(buf, ' '), n.JoinType...)
		}
		buf = n.LeftKey.AppendTo(append(buf, " on "...))
		buf = n.RightKey.AppendTo(append(buf, " = "...))
	case SemiJoin:
		buf = n.LeftKey.AppendTo(append(buf, ' '))
		buf = append(buf, " in input 2"...)
	case Aggregate:
		buf = appendList(append(buf, " by ["...), n.Keys)
		buf = append(buf, "] computing ["...)
		for i, a := range n.Aggs {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			buf = a.AppendTo(buf)
		}
		buf = append(buf, ']')
	case Sort:
		buf = append(buf, " by "...)
		for _, k := range n.Order {
			buf = strconv.AppendInt(append(buf, '#'), int64(k.Col), 10)
			if k.Desc {
				buf = append(buf, " desc"...)
			}
			if k.NullsFirst {
				buf = append(buf, " nulls first"...)
			}
			buf = append(buf, ", "...)
		}
		buf = append(buf, "all columns"...)
	case Limit:
		if n.N < 0 {
			buf = append(buf, " all"...)
		} else {
			buf = strconv.AppendInt(append(buf, ' '), n.N, 10)
		}
		if n.Offset > 0 {
			buf = strconv.AppendInt(append(buf, " offset "...), n.Offset, 10)
		}
	case Window:
		buf = n.appendWindow(buf)
	case RowNumber:
		buf = strconv.AppendInt(append(buf, " into #"...), int64(n.Col), 10)
		if n.Offset > 0 {
			buf = strconv.AppendInt(append(buf, " from "...), n.Offset+1, 10)
		}
	}
	buf = append(buf, " -> ("...)
	for i, c := range n.Output {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = append(append(append(buf, c.Name...), ' '), c.Kind()...)
	}
	buf = append(buf, ")\n"...)
	b.Write(buf)
	for _, in := range n.Input {
		in.write(b, depth+1)
	}
}

// Encode is the plan as JSON, the form it is stored and sent in.
func Encode(n *Node) ([]byte, error) {
	b, err := json.Marshal(n)
	if err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	return b, nil
}

// Decode reads a plan Encode wrote.
func Decode(b []byte) (*Node, error) {
	var n Node
	if err := json.Unmarshal(b, &n); err != nil {
		return nil, fmt.Errorf("decode plan: %w", err)
	}
	return &n, nil
}
