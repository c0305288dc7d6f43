package plan

import "strconv"

// A Window node computes window functions (docs/sql.md "Window
// functions"): Input[0]'s rows, each with one more column per WinFunc,
// its value over the row's partition (the rows of equal Partition
// values: SQL's equality, NULL equal to NULL) ordered by WinOrder.
// The frame is PostgreSQL's default, the only one of the subset: with
// WinOrder, the partition's rows up to the row and its peers (the rows
// of equal WinOrder values), so that peers share an aggregate's value;
// without, the whole partition. Peers are ordered by every column, as a
// Sort breaks ties, so that ROW_NUMBER does not depend on the order rows
// arrived in. A query's windows of different OVER clauses are stacked,
// one Window node per clause, each adding its columns after its input's.

// Window is the operator.
const Window Op = "window" // Input[0]'s columns, then one per WinFuncs over Partition ordered by WinOrder

// The window functions beyond the aggregates (which a WinFunc names by
// their AggFunc).
const (
	WinRowNumber = "row_number" // 1, 2, ... in the partition's order
	WinRank      = "rank"       // 1 + the rows of the partition before the row's peers
	WinDenseRank = "dense_rank" // 1 + the peer groups of the partition before the row's
	WinLag       = "lag"        // Arg of the row Offset rows before in the partition's order, else Default (NULL when nil)
	WinLead      = "lead"       // Arg of the row Offset rows after, else Default
)

// WinKey is one key of a Window's ORDER BY: an expression over Input[0].
type WinKey struct {
	Expr *Expr `json:"expr"`
	Desc bool  `json:"desc,omitempty"`
	// NullsFirst: NULL before every value (NULLS FIRST), as SortKey's.
	NullsFirst bool `json:"nulls_first,omitempty"`
}

// WinFunc is one window function: WinRowNumber, WinRank, WinDenseRank,
// or an aggregate's AggFunc over Arg (nil for count(*)).
type WinFunc struct {
	Func string `json:"func"`
	Arg  *Expr  `json:"arg,omitempty"`
	// Offset and Default are WinLag's and WinLead's: how many rows
	// before (after) the row, and the value (a Const; nil: NULL) where
	// the partition has no such row.
	Offset  int64 `json:"offset,omitempty"`
	Default *Expr `json:"default,omitempty"`
}

// AppendTo appends the function's text (rank(), sum(x#1)) to dst.
func (f *WinFunc) AppendTo(dst []byte) []byte {
	if f.Func == string(CountStar) {
		return append(dst, "count(*)"...)
	}
	dst = append(append(dst, f.Func...), '(')
	if f.Arg != nil {
		dst = f.Arg.AppendTo(dst)
	}
	if f.Func == WinLag || f.Func == WinLead {
		dst = strconv.AppendInt(append(dst, ", "...), f.Offset, 10)
		if f.Default != nil {
			dst = f.Default.AppendTo(append(dst, ", "...))
		}
	}
	return append(dst, ')')
}

// appendWindow appends a Window node's line after its operator's name:
// its functions, then OVER (PARTITION BY ... ORDER BY ...).
func (n *Node) appendWindow(buf []byte) []byte {
	buf = append(buf, " ["...)
	for i, f := range n.WinFuncs {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = f.AppendTo(buf)
	}
	buf = append(buf, "] over ("...)
	if len(n.Partition) > 0 {
		buf = appendList(append(buf, "partition by "...), n.Partition)
	}
	if len(n.WinOrder) > 0 {
		if len(n.Partition) > 0 {
			buf = append(buf, ' ')
		}
		buf = append(buf, "order by "...)
		for i, k := range n.WinOrder {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			buf = k.Expr.AppendTo(buf)
			if k.Desc {
				buf = append(buf, " desc"...)
			}
			if k.NullsFirst {
				buf = append(buf, " nulls first"...)
			}
		}
	}
	return append(buf, ')')
}
