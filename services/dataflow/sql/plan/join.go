package plan

// A Join node's kind and its key (docs/sql.md "The subset").
//
// A join of several equalities (ON a.x = b.y AND a.z = b.w, USING (x, z))
// has one key per side all the same: a Call of FnKey over that side's
// columns, in the equalities' order. Its value is the tuple as one
// value, NULL when any of its columns is (so that it matches nothing,
// SQL's rule), and equal for two tuples exactly when each pair of
// columns is (1500 = 1500.0). So every keyed operator, the shuffles and
// the placement keep reading one key expression per side, a key list
// being one expression of its columns.

// JoinType is the kind of a Join node: which unmatched rows it keeps.
type JoinType string

// The join types.
const (
	JoinInner JoinType = "inner" // the pairs of rows of equal keys ("" is one too)
	JoinLeft  JoinType = "left"  // and each left row that matches none, the right columns NULL
	JoinRight JoinType = "right" // and each right row that matches none, the left columns NULL
	JoinFull  JoinType = "full"  // and both
)

// KeepsLeft says whether a join of type t emits the left rows that match
// no right row.
func (t JoinType) KeepsLeft() bool { return t == JoinLeft || t == JoinFull }

// KeepsRight says whether a join of type t emits the right rows that
// match no left row.
func (t JoinType) KeepsRight() bool { return t == JoinRight || t == JoinFull }

// Outer says whether a join of type t emits unmatched rows.
func (t JoinType) Outer() bool { return t.KeepsLeft() || t.KeepsRight() }

// Mirrored is the type of the join of t's inputs swapped: a LEFT join's
// is RIGHT, a RIGHT join's LEFT, and an inner or full join is its own.
func (t JoinType) Mirrored() JoinType { return JoinKeeping(t.KeepsRight(), t.KeepsLeft()) }

// JoinKeeping is the join type that keeps the unmatched left rows when
// left does, and the right ones when right does.
func JoinKeeping(left, right bool) JoinType {
	switch {
	case left && right:
		return JoinFull
	case left:
		return JoinLeft
	case right:
		return JoinRight
	}
	return JoinInner
}
