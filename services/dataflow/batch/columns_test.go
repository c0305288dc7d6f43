package batch_test

import (
	"errors"
	"fmt"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
)

// TestColumnsRoundTrip builds column batches of NULLs at every place in
// and around a byte of marks, and reads back every value.
func TestColumnsRoundTrip(t *testing.T) {
	for rows := 1; rows <= 19; rows++ {
		for nullAt := -1; nullAt < rows; nullAt++ {
			var b batch.ColumnBuilder
			for r := range rows {
				b.Add([][]byte{[]byte(fmt.Sprint(r)), {}}, []bool{r == nullAt, r%2 == 1})
			}
			if b.Len() != rows {
				t.Fatalf("Len = %d, want %d", b.Len(), rows)
			}
			rb := b.Build()
			if batch.Rows(rb) != rows || b.Len() != 0 {
				t.Fatalf("Rows = %d, want %d; Len after Build %d", batch.Rows(rb), rows, b.Len())
			}
			cols, err := batch.ReadColumns(rb.GetColumns())
			if err != nil {
				t.Fatalf("%d rows, NULL at %d: %v", rows, nullAt, err)
			}
			if cols.Width() != 2 || cols.Rows() != rows {
				t.Fatalf("width %d rows %d", cols.Width(), cols.Rows())
			}
			for r := range rows {
				v, ok := cols.Value(0, r)
				if ok != (r != nullAt) || ok && string(v) != fmt.Sprint(r) {
					t.Errorf("%d rows, NULL at %d: row %d = %q, %v", rows, nullAt, r, v, ok)
				}
				if v, ok := cols.Value(1, r); ok != (r%2 == 0) || len(v) != 0 {
					t.Errorf("%d rows: column 1 row %d = %q, %v", rows, r, v, ok)
				}
			}
		}
	}
	var zero batch.ColumnBuilder
	zero.AddRows(3)
	zero.AddRows(2)
	if rb := zero.Build(); batch.Rows(rb) != 5 {
		t.Errorf("rows of no columns: %d, want 5", batch.Rows(rb))
	}
}

// TestColumnsRefused: a column of another length, offsets beyond the
// text, NULL marks of the wrong length, a column in two forms or none,
// numbers whose scales or wide values do not match their rows, a scale
// beyond an int32 and a boolean other than 0 or 1 are refused.
func TestColumnsRefused(t *testing.T) {
	text := func(data string, ends ...uint32) *wololov1.TextColumn {
		return &wololov1.TextColumn{Data: []byte(data), Ends: ends}
	}
	nums := func(d *wololov1.DecimalColumn) *wololov1.ColumnBatch {
		return &wololov1.ColumnBatch{Rows: 2, Columns: []*wololov1.ValueColumn{{Numbers: d}}}
	}
	for _, c := range []*wololov1.ColumnBatch{
		nums(&wololov1.DecimalColumn{Unscaled: []int64{1}}),
		nums(&wololov1.DecimalColumn{Unscaled: []int64{1, 2}, Scales: []uint32{1}}),
		nums(&wololov1.DecimalColumn{Unscaled: []int64{1, 2}, Scale: 1 << 31}),
		nums(&wololov1.DecimalColumn{Unscaled: []int64{1, 2}, Scales: []uint32{0, 1 << 31}}),
		nums(&wololov1.DecimalColumn{Unscaled: []int64{1, 2}, WideRows: []byte{2}}),
		nums(&wololov1.DecimalColumn{Unscaled: []int64{1, 2}, WideRows: []byte{4}, Wide: [][]byte{[]byte("1")}}),
		nums(&wololov1.DecimalColumn{Unscaled: []int64{1, 2}, Wide: [][]byte{[]byte("1")}}),
		nums(&wololov1.DecimalColumn{Unscaled: []int64{1, 2}, WideRows: []byte{1, 0}, Wide: [][]byte{[]byte("1")}}),
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Bools: []byte{1}}}},
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Bools: []byte{1, 2}}}},
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Bools: []byte{1, 0}, Text: text("ab", 1, 2)}}},
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Bools: []byte{1, 0}, Numbers: &wololov1.DecimalColumn{Unscaled: []int64{1, 2}}}}},
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Text: text("ab", 1, 2)}, {Text: text("a", 1)}}},
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Text: text("ab", 1, 3)}}},
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Text: text("ab", 2, 1)}}},
		{Rows: 9, Columns: []*wololov1.ValueColumn{{Text: text("", 0, 0, 0, 0, 0, 0, 0, 0, 0), Nulls: []byte{1}}}},
		{Rows: 1, Columns: []*wololov1.ValueColumn{{}}},
		// Offsets in a compact form that does not fit the text or the
		// rows, or in two forms.
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Text: &wololov1.TextColumn{Data: []byte("abc"), Width: 2}}}},
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Text: &wololov1.TextColumn{Data: []byte("abcd"), Width: 1 << 31}}}},
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Text: &wololov1.TextColumn{Data: []byte("abc"), Lengths: []byte{1, 1}}}}},
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Text: &wololov1.TextColumn{Data: []byte("abc"), Lengths: []byte{3}}}}},
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Text: &wololov1.TextColumn{Data: []byte("ab"), Lengths: []byte{1, 1}, Width: 1}}}},
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Text: &wololov1.TextColumn{Data: []byte("ab"), Lengths: []byte{1, 1}, Ends: []uint32{1, 2}}}}},
		{Rows: 2, Columns: []*wololov1.ValueColumn{{Text: &wololov1.TextColumn{Data: []byte("ab"), Width: 1, Ends: []uint32{1, 2}}}}},
	} {
		if _, err := batch.ReadColumns(c); !errors.Is(err, batch.ErrBadBatch) {
			t.Errorf("%v: err %v, want ErrBadBatch", c, err)
		}
	}
}

// TestColumnsCompactText: a text column whose offsets travel as one
// width, or as a byte per length, reads back the values they cut, and is
// left with end offsets (what every reader of the column reads).
func TestColumnsCompactText(t *testing.T) {
	for _, tc := range []struct {
		text *wololov1.TextColumn
		rows int
		want []string
	}{
		{&wololov1.TextColumn{Data: []byte("abcdef"), Width: 2}, 3, []string{"ab", "cd", "ef"}},
		{&wololov1.TextColumn{Data: []byte("abcdef"), Lengths: []byte{0, 1, 5}}, 3, []string{"", "a", "bcdef"}},
		{&wololov1.TextColumn{Data: []byte("abc"), Ends: []uint32{1, 3}}, 2, []string{"a", "bc"}},
	} {
		cb := &wololov1.ColumnBatch{Rows: uint32(tc.rows), Columns: []*wololov1.ValueColumn{{Text: tc.text}}}
		cols, err := batch.ReadColumns(cb)
		if err != nil {
			t.Fatalf("%v: %v", tc.text, err)
		}
		for r, want := range tc.want {
			if v, ok := cols.Value(0, r); !ok || string(v) != want {
				t.Errorf("%v: row %d = %q, want %q", tc.text, r, v, want)
			}
		}
		if got := cols.Column(0).GetText(); len(got.Ends) != tc.rows || got.Lengths != nil || got.Width != 0 {
			t.Errorf("%v: not left as ends", got)
		}
	}
}
