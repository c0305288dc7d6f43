package exec

import (
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// This file is what the operators of the physical plan
// (services/dataflow/sql/sqlops) run batch by batch, and what the tests'
// oracle (services/dataflow/sql/sqlgen/oracle) runs over a whole node's
// batches: exported one batch, or one piece of state, at a time, so that
// each operator's logic is written once.

// Project computes exprs over each batch.
func Project(exprs []*plan.Expr, in []*Batch) ([]*Batch, error) { return project(exprs, in) }

// Sort orders the rows by node n's keys, then by every column.
func Sort(n *plan.Node, in []*Batch) []*Batch { return sortRows(n, in) }

// CompareSorted orders row x of a and row y of b as Sort orders rows
// of the Sort node n (its keys, then every column, then every column's
// scale), over n's output columns, the first of each batch's: negative
// when x comes first, 0 when they are equal, scales included.
func CompareSorted(n *plan.Node, a *Batch, x int, b *Batch, y int) int {
	return compareSorted(n, a, x, b, y)
}

// Limit keeps the first n rows.
func Limit(n int64, in []*Batch) []*Batch { return limit(n, in) }

// NumberRows returns b with column col replaced by next, next+1, ...
func NumberRows(col int, next int64, b *Batch) (*Batch, error) {
	return numberRows(col, next, b)
}

// Concat joins batches of columns of the given types into one.
func Concat(cols []plan.Column, in []*Batch) *Batch { return concat(types(cols), in) }

// Rows returns the rows of b at rows.
func (b *Batch) Rows(rows []int32) *Batch { return gatherBatch(b, rows) }

// AppendKey appends value i of v to a hash key (see appendKey): equal
// keys are equal values, a number whatever its trailing zeros.
func AppendKey(dst []byte, v *Vec, i int) []byte { return appendKey(dst, v, i) }

// ReadAs reads a text column as a scan reads column c (docs/queries.md's
// value rules: its type's, or its read rule), counting in st the values
// that read as NULL.
func ReadAs(src *Vec, c plan.Column, st *ColumnStats) *Vec { return readAs(src, c, st) }

// ScanIndex returns, for each output column of a scan node, the index of
// the table column it reads.
func ScanIndex(n *plan.Node, columns []string) ([]int, error) {
	idx := make([]int, len(n.Output))
	for i, c := range n.Output {
		idx[i] = -1
		for j, name := range columns {
			if name == c.Name {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			return nil, fmt.Errorf("table %q has no column %q", n.Table, c.Name)
		}
	}
	return idx, nil
}

// Distinct is the state of a DISTINCT: the rows seen, as keys of a
// (shared) KeyTable.
type Distinct struct {
	set   *KeySet
	slots []int32 // scratch: the slots of a batch's rows
}

// NewDistinct returns an empty DISTINCT in table t.
func NewDistinct(t *KeyTable) *Distinct { return &Distinct{set: NewKeySet(t)} }

// Add returns the rows of b (compared on their first cols columns) not
// seen before, and remembers them; nil when there is none. Their numbers
// are written without trailing fractional zeros (docs/sql.md "Numbers"),
// so that which of 1500 and 1500.0 came first does not show.
func (d *Distinct) Add(b *Batch, cols int) *Batch { return d.AddSlots(b, cols, nil) }

// AddSlots is Add given the slots of the rows (Slots over the first cols
// columns, every key added; nil: looked up here).
func (d *Distinct) AddSlots(b *Batch, cols int, sl []int32) *Batch {
	var rows []int32
	s := d.set
	if sl == nil {
		d.slots = s.t.Slots(b.Cols[:cols], b.N, nil, d.slots)
		sl = d.slots
	}
	for i := range b.N {
		if s.add(sl[i]) {
			rows = append(rows, int32(i))
		}
	}
	if len(rows) == 0 {
		return nil
	}
	out := gatherBatch(b, rows)
	for _, v := range out.Cols[:cols] {
		normalize(v)
	}
	return out
}

// Aggregation is the state of a hash aggregate: the groups by key and
// each aggregate's value per group.
type Aggregation struct {
	keys  []*plan.Expr
	g     *groups
	accs  []*acc
	conds []*plan.Expr // the distinct conditions of the aggregates (aggInput)
}

// NewAggregation returns an empty aggregate grouping by keys computing
// aggs, both over its input's columns.
func NewAggregation(t *KeyTable, keys []*plan.Expr, aggs []*plan.Agg) *Aggregation {
	keyTypes := make([]plan.Type, len(keys))
	for i, k := range keys {
		keyTypes[i] = k.Type
	}
	a := &Aggregation{keys: keys, g: newGroups(t, keyTypes)}
	for _, ag := range aggs {
		a.accs = append(a.accs, newAcc(ag, &a.conds))
	}
	return a
}

// NewPartialAggregation is NewAggregation for a partial aggregate, whose
// result a final aggregate adds up: its sums are written whole, even past
// value.MaxDigits digits (they stay within value.MaxStoredDigits), where
// an aggregate's answer makes such a sum NULL.
func NewPartialAggregation(t *KeyTable, keys []*plan.Expr, aggs []*plan.Agg) *Aggregation {
	a := NewAggregation(t, keys, aggs)
	for _, ac := range a.accs {
		ac.partial = true
	}
	return a
}

// Add folds a batch of input rows into the groups.
func (a *Aggregation) Add(b *Batch) error { return a.AddSlots(b, nil) }

// AddSlots is Add given the slots of the rows' keys (Slots, every key
// added; nil: looked up here).
func (a *Aggregation) AddSlots(b *Batch, sl []int32) error {
	keys, err := a.keyVecs(b)
	if err != nil {
		return err
	}
	ids := a.g.ids(keys, b.N, sl)
	when := make([][]bool, len(a.conds))
	for i, c := range a.conds {
		w, err := trueMask(c, b)
		if err != nil {
			return err
		}
		when[i] = w
	}
	for _, ac := range a.accs {
		var arg *Vec
		if ac.in.arg != nil {
			v, err := evalAt(ac.in.arg, b)
			if err != nil {
				return err
			}
			arg = v
		}
		var w []bool
		if ac.in.cond >= 0 {
			w = when[ac.in.cond]
		}
		ac.update(ids, arg, w, ac.in.els, int(a.g.n))
	}
	return nil
}

// Groups is the number of rows of Result: one per group, or, without
// keys, one even over no input.
func (a *Aggregation) Groups() int {
	if len(a.keys) == 0 && a.g.n == 0 {
		return 1
	}
	return int(a.g.n)
}

// Result is one row per group: the keys, then the aggregates. Without
// keys it is one row, even over no input.
func (a *Aggregation) Result() *Batch { return a.ResultRange(0, a.Groups()) }

// ResultRange is rows from..to-1 of Result (0 <= from < to <= Groups),
// made alone: the result of 1.5M groups need not be made, its values
// held, at once.
func (a *Aggregation) ResultRange(from, to int) *Batch { return a.ResultRangeOf(from, to, nil, nil) }

// ResultRangeOf is ResultRange with only the columns read marks made
// (nil: every one); the others are unread Vecs (unread.go) of their
// types. It is what a HAVING looks at of the groups it may let go
// (sqlops' dropFinished): q2's reads its counts and maxima, not its key,
// whose text was copied out of the table for every group looked at.
func (a *Aggregation) ResultRangeOf(from, to int, read []bool, types []plan.Type) *Batch {
	n := to - from
	out := &Batch{N: n}
	for c := range len(a.g.keys) + len(a.accs) {
		switch k := c - len(a.g.keys); {
		case c < len(read) && !read[c]:
			out.Cols = append(out.Cols, unread(types[c], n))
		case k < 0:
			out.Cols = append(out.Cols, a.g.keyRange(c, from, to))
		default:
			out.Cols = append(out.Cols, a.accs[k].window(from, to).result(n))
		}
	}
	return out
}

// window is a's state of groups from..to-1 alone, as its groups 0..: its
// per-group slices cut (not copied), its wide counts and minima or maxima
// (count.hi, the numbers' big) renumbered; the values of text or booleans (best) are a's.
func (a *acc) window(from, to int) *acc {
	a.grow(to)
	w := *a
	w.count = counts{lo: cut(a.count.lo, from, to), hi: renumber(a.count.hi, from, to)}
	w.sums = make([]decs, len(a.sums))
	for i, s := range a.sums {
		w.sums[i] = s.window(from, to)
	}
	w.has = cut(a.has, from, to)
	w.nums, w.bestN = a.nums.window(from, to), cut(a.bestN, from, to)
	return &w
}

// renumber is the entries of m of groups from..to-1, as groups 0..; nil
// when m is.
func renumber[V any](m map[int32]V, from, to int) map[int32]V {
	if m == nil {
		return nil
	}
	w := map[int32]V{}
	for g, v := range m {
		if int(g) >= from && int(g) < to {
			w[g-int32(from)] = v
		}
	}
	return w
}

// cut is s[from:to], nil when s is, at a capacity that appending to it
// cannot write past to.
func cut[T any](s []T, from, to int) []T {
	if s == nil {
		return nil
	}
	return s[from:to:to]
}
