package exec

import (
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// What an outer join adds to the inner one (plan.JoinType), and the key
// of a join of several columns (plan.FnKey).

// keyVec is KEY(args...) over n rows: each row's values as one text, the
// concatenation of their appendKey bytes (which tell where each value
// ends, and write equal numbers alike: 1500 and 1500.0), so that two
// rows' keys are equal exactly when each pair of their values is; NULL
// when any value is, for a NULL matches nothing.
func keyVec(args []*Vec, n int) *Vec {
	out := newBuilder(plan.Text, n)
	var key []byte
	for i := range n {
		key = key[:0]
		null := false
		for _, a := range args {
			j := at(a, i)
			if a.IsNull(j) {
				null = true
				break
			}
			key = appendKey(key, a, j)
		}
		if null {
			out.null()
		} else {
			out.text(key)
		}
	}
	return out.v
}

// keyNulls is, for a join given its rows' slots (a task looked them up
// from its channel's key column), what it still reads of its key over b:
// which rows' keys are NULL, as the Vecs a row's key is NULL when any of
// whose values is, only those with NULLs. A key of several columns,
// KEY(match, team), is not made for it (its text per row, a copy of
// both values, was made again for each batch only for its NULLs).
func keyNulls(key *plan.Expr, b *Batch) ([]*Vec, error) {
	parts := []*plan.Expr{key}
	if key.Kind == plan.Call && key.Fn == plan.FnKey {
		parts = key.Args
	}
	var out []*Vec
	for _, e := range parts {
		v, err := evalAt(e, b)
		if err != nil {
			return nil, err
		}
		if v.Null != nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// anyNullAt says whether row i's value is NULL in any of vs (keyNulls').
func anyNullAt(vs []*Vec, i int) bool {
	for _, v := range vs {
		if v.IsNull(at(v, i)) {
			return true
		}
	}
	return false
}

// outer is what an outer join keeps beyond the inner one's state: which
// unmatched rows it emits, and, when it emits the right ones, which
// right rows have matched a left row so far.
type outer struct {
	left, right bool
	leftCols    []plan.Column // the left input's, for the NULLs of an unmatched right row
	hit         []bool        // per right row: matched (right only)
}

// matched marks right row r as matched.
func (o *outer) matched(r int32) {
	if !o.right {
		return
	}
	if int(r) >= len(o.hit) {
		o.hit = append(o.hit, make([]bool, int(r)+1-len(o.hit))...)
	}
	o.hit[r] = true
}

// SetType makes j a join of type t over left rows of leftCols: an outer
// one also emits the left rows that match no right row (ProbeChunks,
// as they are probed) or the right rows that matched no left row
// (UnmatchedRight, once every left row has been probed), the other
// side's columns NULL.
func (j *Join) SetType(t plan.JoinType, leftCols []plan.Column) {
	j.outer = outer{left: t.KeepsLeft(), right: t.KeepsRight(), leftCols: leftCols}
}

// gatherRight is the right rows at rows, -1 a row of NULLs (gather's),
// the columns not read unread.
func (j *Join) gatherRight(rows []int32) *Batch {
	var read []bool
	if j.read != nil {
		read = j.read[len(j.read)-len(j.right.types):]
	}
	return j.right.gather(rows, read)
}

// gatherLeft is the rows of b (a left batch) at rows, the columns not
// read unread.
func (j *Join) gatherLeft(b *Batch, rows []int32) *Batch {
	return gatherReadCols(b, rows, j.read, len(j.right.types))
}

// SetRead says which of the join's output columns (the left input's,
// then the right's) the operators after it read: the others it makes
// unread Vecs (unread.go), their rows not gathered. nil: every one. Of a
// join that holds no right row yet, the right columns not read are not
// held either (rowChunks.skip): a join of the players to the matches on
// their token held each match's 16-byte token again, the key its table
// holds. What needs every right column (a snapshot's rows, a spill's,
// Right) reads those as NULL, but the right key's column when it is
// one text column, which Right makes from the table.
func (j *Join) SetRead(read []bool) {
	j.read = read
	if read == nil || j.n > 0 {
		return
	}
	right := read[len(read)-len(j.right.types):]
	skip := make([]bool, len(right))
	for k, r := range right {
		skip[k] = !r
	}
	// The columns of the right key are kept, which Right's rows are keyed
	// by again, but one text column's, which Right makes.
	if k := j.rightKey; k == nil || k.Kind != plan.ColRef || k.Type != plan.Text {
		for c, r := range plan.MarkCols(make([]bool, len(skip)), k) {
			skip[c] = skip[c] && !r
		}
	}
	if slices.Contains(skip, true) {
		j.right.skip = skip
	}
}

// UnmatchedRight hands emit the right rows that no left row probed so
// far matched, in the order they were added, their left columns NULL,
// at most chunk rows at a time (0: all at once); nothing unless the join
// keeps its unmatched right rows.
func (j *Join) UnmatchedRight(chunk int, emit func(*Batch) error) error {
	if !j.outer.right {
		return nil
	}
	var rows []int32
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		nb := &Batch{N: len(rows)}
		for _, c := range j.outer.leftCols {
			nb.Cols = append(nb.Cols, unread(c.Type, len(rows))) // NULLs
		}
		nb.Cols = append(nb.Cols, j.gatherRight(rows).Cols...)
		rows = rows[:0]
		return emit(nb)
	}
	for r := range int32(j.n) {
		if int(r) < len(j.outer.hit) && j.outer.hit[r] {
			continue
		}
		rows = append(rows, r)
		if chunk > 0 && len(rows) == chunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// Matched is which right rows have matched a left row (a right outer
// join's state beside its rows, for its snapshot): per right row in the
// order added.
func (j *Join) Matched() []bool {
	out := make([]bool, j.n)
	copy(out, j.outer.hit)
	return out
}

// SetMatched restores Matched's marks, given after the right rows.
func (j *Join) SetMatched(hit []bool) error {
	if len(hit) != j.n {
		return fmt.Errorf("join: %d matched marks for %d right rows", len(hit), j.n)
	}
	j.outer.hit = append(j.outer.hit[:0], hit...)
	return nil
}
