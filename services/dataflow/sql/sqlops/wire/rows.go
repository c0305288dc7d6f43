package wire

import (
	"fmt"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// ToRows is b as a ColumnBatch, built a column at a time, each in the
// form of its type: a text column's arena and offsets are the Vec's own
// (a Vec is not modified once built, and a NULL's text is empty in
// both), a number column's values are written as their unscaled integers
// and scales (decimalColumn), a boolean column's as bytes. A batch of no
// rows has no columns, as batch.ColumnBuilder writes it.
func ToRows(b *exec.Batch) *wololov1.RowBatch { return ToSelectedRows(b, Selection{n: b.N}, nil) }

// Selection is some rows of a batch, in order: rows when it is not nil,
// else the run start..start+n-1.
type Selection struct {
	rows     []int32
	start, n int
}

// Span is the run start..start+n-1 of a batch's rows.
func Span(start, n int) Selection { return Selection{start: start, n: n} }

// Picked is the rows of a batch at rows, in their order.
func Picked(rows []int32) Selection { return Selection{rows: rows, n: len(rows)} }

// Len is the number of rows selected.
func (s Selection) Len() int { return s.n }

// Whole reports whether s is every row of a batch of n rows, in order.
func (s Selection) Whole(n int) bool { return s.rows == nil && s.start == 0 && s.n == n }

// Rows is the batch's rows selected, in their order.
func (s Selection) Rows() []int32 {
	if s.rows != nil {
		return s.rows
	}
	rows := make([]int32, s.n)
	for k := range rows {
		rows[k] = int32(s.start + k)
	}
	return rows
}

// at is the batch's row of the Selection's k-th.
func (s Selection) at(k int) int {
	if s.rows != nil {
		return int(s.rows[k])
	}
	return s.start + k
}

// ToSelectedRows is ToRows of the selected rows of b, with the routes each is
// for (nil: the channel's one route): the rows are written from b's
// columns, not gathered into a batch first.
func ToSelectedRows(b *exec.Batch, s Selection, routes []uint64) *wololov1.RowBatch {
	cb := &wololov1.ColumnBatch{Rows: uint32(s.n), Routes: routes}
	if s.n > 0 {
		cb.Columns = make([]*wololov1.ValueColumn, len(b.Cols))
		for c, v := range b.Cols {
			cb.Columns[c] = valueColumn(v, s)
		}
	}
	return &wololov1.RowBatch{Rows: &wololov1.RowBatch_Columns{Columns: cb}}
}

// valueColumn is the selected values of v as a ValueColumn.
func valueColumn(v *exec.Vec, s Selection) *wololov1.ValueColumn {
	vc := &wololov1.ValueColumn{}
	var null []bool // per selected row, whether it is NULL; nil if none is
	if v.Null != nil {
		sel := selected(v.Null, s)
		for k, isNull := range sel {
			if isNull {
				if vc.Nulls == nil {
					vc.Nulls = make([]byte, (s.n+7)/8)
				}
				vc.Nulls[k/8] |= 1 << (k % 8)
				null = sel
			}
		}
	}
	switch v.Type {
	case plan.Text:
		vc.Text = textColumn(v, s)
	case plan.Number:
		vc.Numbers = decimalColumn(v.Nums, s, null)
	case plan.Bool:
		vc.Bools = make([]byte, s.n)
		for k, b := range selected(v.Bools, s) {
			if b && (null == nil || !null[k]) {
				vc.Bools[k] = 1
			}
		}
	}
	return vc
}

// selected is the selected ones of values, one per selected row: for a
// run, values' own (not copied).
func selected[T any](values []T, s Selection) []T {
	if s.rows == nil {
		return values[s.start : s.start+s.n]
	}
	out := make([]T, s.n)
	for k, r := range s.rows {
		out[k] = values[r]
	}
	return out
}

// textColumn is the selected values of a text Vec: its arena (a run's
// part of it, not copied) for a run of rows, the values copied for other
// rows; their offsets in the most compact form that holds them
// (textShape.form).
func textColumn(v *exec.Vec, s Selection) *wololov1.TextColumn {
	sh := textShapeOf(v, s)
	tc := &wololov1.TextColumn{}
	if s.rows == nil {
		tc.Data = runText(v, s, sh.size)
	} else {
		tc.Data = make([]byte, 0, sh.size)
		for _, r := range s.rows {
			tc.Data = append(tc.Data, v.Text(int(r))...)
		}
	}
	switch sh.form() {
	case textWidth:
		tc.Width = sh.longest
	case textLengths:
		tc.Lengths = make([]byte, s.n)
		for k := range s.n {
			tc.Lengths[k] = byte(textLength(v, s, k))
		}
	default:
		tc.Ends = make([]uint32, s.n)
		end := uint32(0)
		for k := range s.n {
			end += textLength(v, s, k)
			tc.Ends[k] = end
		}
	}
	return tc
}

// textShape is what decides how a Selection of a text Vec's values is
// written, by ToSelectedRows and by the wire codec alike: their bytes in all,
// the longest one, and whether all have one length.
type textShape struct {
	size, longest uint32
	same          bool
}

// textForm is the form a text column's offsets travel in
// (wololov1.TextColumn).
type textForm int

const (
	textWidth   textForm = iota // one width for all values
	textLengths                 // a byte per value
	textEnds                    // end offsets
)

func textShapeOf(v *exec.Vec, s Selection) textShape {
	sh := textShape{same: true}
	for k := range s.n {
		l := textLength(v, s, k)
		sh.size += l
		sh.same = sh.same && (k == 0 || l == sh.longest)
		sh.longest = max(sh.longest, l)
	}
	return sh
}

// form is the most compact form that holds the values: one width when
// they all have it (above 0), a byte per length when all are shorter
// than 256 bytes, else ends.
func (sh textShape) form() textForm {
	switch {
	case sh.same && sh.longest > 0:
		return textWidth
	case sh.longest < 256:
		return textLengths
	}
	return textEnds
}

// runText is the bytes of the values of a run s, size in all: v's own.
func runText(v *exec.Vec, s Selection, size uint32) []byte {
	base := uint32(0)
	if s.start > 0 {
		base = v.Ends[s.start-1]
	}
	return v.Data[base : base+size]
}

// textLength is the length of v's selected value k.
func textLength(v *exec.Vec, s Selection, k int) uint32 {
	r := s.at(k)
	if r == 0 {
		return v.Ends[0]
	}
	return v.Ends[r] - v.Ends[r-1]
}

// decimalColumn is the selected numbers as a DecimalColumn: one scale for
// all rows when the rows that are neither NULL (null, per selected row)
// nor wide agree on it (a column's usual case), and a NULL row as 0,
// whatever its Dec holds.
func decimalColumn(nums []value.Dec, s Selection, null []bool) *wololov1.DecimalColumn {
	dc := &wololov1.DecimalColumn{Unscaled: make([]int64, s.n)}
	scale, mixed, first := int32(0), false, true
	for k := range s.n {
		if null != nil && null[k] {
			continue
		}
		d := nums[s.at(k)]
		u, ds, ok := d.Unscaled()
		if !ok {
			if dc.WideRows == nil {
				dc.WideRows = make([]byte, (s.n+7)/8)
			}
			dc.WideRows[k/8] |= 1 << (k % 8)
			dc.Wide = append(dc.Wide, d.Append(nil))
			continue
		}
		dc.Unscaled[k] = u
		if first {
			scale, first = ds, false
		} else if ds != scale {
			mixed = true
		}
	}
	if !mixed {
		dc.Scale = uint32(scale)
		return dc
	}
	dc.Scales = make([]uint32, s.n)
	for k := range s.n {
		if (null == nil || !null[k]) && (dc.WideRows == nil || dc.WideRows[k/8]&(1<<(k%8)) == 0) {
			dc.Scales[k] = uint32(nums[s.at(k)].Scale())
		}
	}
	return dc
}

// FromRows reads a ColumnBatch of the given columns: a batch of another
// width, whose columns are not in their types' forms (a number's or a
// boolean's may also be text), or whose values do not read as their
// columns' types, is refused. A text column of the result aliases rb's
// arena and offsets, which must not be modified afterwards.
func FromRows(rb *wololov1.RowBatch, cols []plan.Column) (*exec.Batch, error) {
	cb := rb.GetColumns()
	if cb == nil {
		return nil, fmt.Errorf("%w: not a column batch", batch.ErrBadBatch)
	}
	v, err := batch.ReadColumns(cb)
	if err != nil {
		return nil, err
	}
	// A batch of no rows is written with no columns (ColumnBuilder).
	if v.Width() != len(cols) && (v.Rows() != 0 || v.Width() != 0) {
		return nil, fmt.Errorf("%w: %d columns, want %d", batch.ErrBadBatch, v.Width(), len(cols))
	}
	n := v.Rows()
	out := &exec.Batch{N: n, Cols: make([]*exec.Vec, len(cols))}
	for c, col := range cols {
		if n == 0 {
			out.Cols[c] = exec.NewVecBuilder(col.Type, 0).Vec()
			continue
		}
		vec, err := fromColumn(v, c, col.Type, n)
		if err != nil {
			return nil, fmt.Errorf("%w: column %s: %v", batch.ErrBadBatch, col.Name, err)
		}
		out.Cols[c] = vec
	}
	return out, nil
}

// fromColumn reads column c, of n rows, of a checked batch as a Vec of
// type t.
func fromColumn(v batch.Columns, c int, t plan.Type, n int) (*exec.Vec, error) {
	vc := v.Column(c)
	null := nullMarks(vc.GetNulls(), n)
	switch {
	case t == plan.Text && vc.GetText() != nil:
		return &exec.Vec{Type: plan.Text, N: n, Null: null, Data: vc.Text.GetData(), Ends: vc.Text.GetEnds()}, nil
	case t == plan.Number && vc.GetNumbers() != nil:
		nums, err := decimals(vc.GetNumbers(), null)
		if err != nil {
			return nil, err
		}
		return &exec.Vec{Type: plan.Number, N: n, Null: null, Nums: nums}, nil
	case t == plan.Bool && len(vc.GetBools()) > 0:
		bools := make([]bool, n)
		for i, b := range vc.GetBools() {
			bools[i] = b == 1
		}
		return &exec.Vec{Type: plan.Bool, N: n, Null: null, Bools: bools}, nil
	case t != plan.Text && vc.GetText() != nil:
		b := exec.NewVecBuilder(t, n)
		for i := range n {
			text, ok := v.Value(c, i)
			if !ok {
				b.Null()
				continue
			}
			if err := b.Text(text); err != nil {
				return nil, err
			}
		}
		return b.Vec(), nil
	}
	return nil, fmt.Errorf("not in the form of a %s", t)
}

// nullMarks is a column's NULL marks, one bit per row of n, as a bool
// per row; nil when there are none.
func nullMarks(bits []byte, n int) []bool {
	if len(bits) == 0 {
		return nil
	}
	null := make([]bool, n)
	for i := range null {
		null[i] = bits[i/8]&(1<<(i%8)) != 0
	}
	return null
}

// decimals reads a checked DecimalColumn (batch.ReadColumns); a NULL
// row's number is 0, and a wide value must read as a number.
func decimals(dc *wololov1.DecimalColumn, null []bool) ([]value.Dec, error) {
	unscaled, scales, wide := dc.GetUnscaled(), dc.GetScales(), dc.GetWideRows()
	nums := make([]value.Dec, len(unscaled))
	if scales == nil && wide == nil && null == nil {
		for i, u := range unscaled {
			nums[i] = value.FromUnscaled(u, int32(dc.GetScale()))
		}
		return nums, nil
	}
	next := 0 // the next wide value
	for i, u := range unscaled {
		if wide != nil && wide[i/8]&(1<<(i%8)) != 0 {
			d, ok := value.ReadStored(dc.Wide[next])
			if !ok {
				return nil, fmt.Errorf("%q is not a number", dc.Wide[next])
			}
			next++
			if null == nil || !null[i] {
				nums[i] = d
			}
			continue
		}
		if null != nil && null[i] {
			continue
		}
		scale := dc.GetScale()
		if scales != nil {
			scale = scales[i]
		}
		nums[i] = value.FromUnscaled(u, int32(scale))
	}
	return nums, nil
}
