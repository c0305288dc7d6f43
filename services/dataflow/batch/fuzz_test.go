package batch_test

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
)

// FuzzReaders decodes arbitrary bytes as a RowBatch and reads it with
// ReadColumns. It must never panic: it either refuses the batch with an
// error wrapping ErrBadBatch, or every value of every row (Rows of the
// batch) reads.
//
//	go test -run='^$' -fuzz=FuzzReaders -fuzztime=30s ./services/dataflow/batch
func FuzzReaders(f *testing.F) {
	for _, rb := range fuzzSeeds(f) {
		b, err := proto.Marshal(rb)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		var rb wololov1.RowBatch
		if err := proto.Unmarshal(data, &rb); err != nil {
			return
		}
		calls := 0
		var err error
		switch r := rb.GetRows().(type) {
		case *wololov1.RowBatch_Columns:
			var cols batch.Columns
			if cols, err = batch.ReadColumns(r.Columns); err == nil {
				wide := make([]int, cols.Width()) // per column, the next wide value
				for row := range cols.Rows() {
					calls++
					for c := range cols.Width() {
						touchValue(t, cols, c, row, &wide[c])
					}
				}
			}
		default:
			if n := batch.Rows(&rb); n != 0 {
				t.Fatalf("Rows of a batch without rows = %d", n)
			}
			return
		}
		switch {
		case err != nil && !errors.Is(err, batch.ErrBadBatch):
			t.Fatalf("error %v does not wrap ErrBadBatch", err)
		case err != nil && calls != 0:
			t.Fatalf("fn called %d times before error %v", calls, err)
		case err == nil && calls != batch.Rows(&rb):
			t.Fatalf("fn called %d times, Rows = %d", calls, batch.Rows(&rb))
		}
	})
}

// touchValue reads column c's value of row row of a checked batch, in
// whatever form the column is, as FromRows of the SQL operators does
// (services/dataflow/sql/sqlops); *wide is the column's next wide value.
func touchValue(t *testing.T, cols batch.Columns, c, row int, wide *int) {
	vc := cols.Column(c)
	switch {
	case cols.Text(c):
		v, ok := cols.Value(c, row)
		if !ok && len(v) != 0 {
			t.Fatalf("NULL value %q", v)
		}
	case vc.GetNumbers() != nil:
		dc := vc.GetNumbers()
		_ = dc.Unscaled[row]
		if len(dc.Scales) > 0 {
			_ = dc.Scales[row]
		}
		if w := dc.WideRows; len(w) > 0 && w[row/8]&(1<<(row%8)) != 0 {
			_ = dc.Wide[*wide]
			*wide++
		}
	case len(vc.GetBools()) > 0:
		if b := vc.Bools[row]; b > 1 {
			t.Fatalf("boolean %d after a successful check", b)
		}
	default:
		t.Fatalf("column %d of %d rows has no values after a successful check", c, cols.Rows())
	}
}

// typedColumns is a ColumnBatch of 10 rows in the typed forms: numbers of
// one scale, of mixed scales with wide ones and NULLs, and booleans.
func typedColumns() *wololov1.ColumnBatch {
	return &wololov1.ColumnBatch{Rows: 10, Columns: []*wololov1.ValueColumn{
		{Numbers: &wololov1.DecimalColumn{Unscaled: []int64{15230, -1, 0, 7, 9, 10, 11, 12, 13, 14}, Scale: 1}},
		{Numbers: &wololov1.DecimalColumn{
			Unscaled: []int64{1, 0, 0, 250, 0, 5, 6, 7, 8, 9},
			Scales:   []uint32{0, 0, 0, 2, 0, 1, 1, 1, 1, 1},
			WideRows: []byte{0b00000110, 0},
			Wide:     [][]byte{[]byte("123456789012345678901.5"), []byte("-99999999999999999999")},
		}, Nulls: []byte{0b00010000, 0}},
		{Bools: []byte{1, 0, 0, 1, 1, 0, 1, 0, 1, 1}, Nulls: []byte{0b00000100, 0}},
	}}
}

// fuzzSeeds are valid batches and a few broken ones.
func fuzzSeeds(testing.TB) []*wololov1.RowBatch {
	var vb batch.ColumnBuilder
	for i := range 10 {
		vb.Add([][]byte{[]byte("x"), []byte(fmt.Sprint(i))}, []bool{i%3 == 0, false})
	}
	var zero batch.ColumnBuilder
	zero.AddRows(4)
	return []*wololov1.RowBatch{
		vb.Build(), zero.Build(),
		{Rows: &wololov1.RowBatch_Columns{Columns: &wololov1.ColumnBatch{Rows: 3, Columns: []*wololov1.ValueColumn{{Text: &wololov1.TextColumn{Data: []byte("ab"), Ends: []uint32{1, 2}}}}}}},
		{Rows: &wololov1.RowBatch_Columns{Columns: &wololov1.ColumnBatch{Rows: 2, Columns: []*wololov1.ValueColumn{{Text: &wololov1.TextColumn{Data: []byte("ab"), Ends: []uint32{1, 2}}, Nulls: []byte{1, 0}}}}}},
		{Rows: &wololov1.RowBatch_Columns{Columns: typedColumns()}},
		{Rows: &wololov1.RowBatch_Columns{Columns: &wololov1.ColumnBatch{Rows: 2, Columns: []*wololov1.ValueColumn{{Bools: []byte{1, 2}}}}}},
		{Rows: &wololov1.RowBatch_Columns{Columns: &wololov1.ColumnBatch{Rows: 2, Columns: []*wololov1.ValueColumn{{Numbers: &wololov1.DecimalColumn{Unscaled: []int64{1, 2}, WideRows: []byte{1}}}}}}},
	}
}
