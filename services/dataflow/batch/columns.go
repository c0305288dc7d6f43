package batch

import (
	"fmt"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// ColumnBuilder accumulates rows of any columns as text, each value
// present or NULL: the rows of a SQL query's operators (ColumnBatch).
// Every row of a batch has the number of values its first row had; a row
// of another width is a caller's bug, and panics.
type ColumnBuilder struct {
	rows int
	cols []valueBuilder
}

type valueBuilder struct {
	text  textBuilder
	nulls []byte // a bit per row, set for NULL; nil until a NULL comes
}

// Add appends one row: values[i] is column i's text, and null (nil when no
// value is NULL) marks the NULL ones, whose text is not kept.
func (b *ColumnBuilder) Add(values [][]byte, null []bool) {
	if b.rows == 0 {
		b.cols = make([]valueBuilder, len(values))
	} else if len(values) != len(b.cols) {
		panic(fmt.Sprintf("batch: a row of %d values after rows of %d", len(values), len(b.cols)))
	}
	for i := range b.cols {
		c := &b.cols[i]
		if null != nil && null[i] {
			if c.nulls == nil {
				c.nulls = make([]byte, (b.rows+8)/8, max(8, (b.rows+8)/4))
			}
			c.text.add(nil)
			setBit(&c.nulls, b.rows)
			continue
		}
		c.text.add(values[i])
		if c.nulls != nil {
			growBits(&c.nulls, b.rows)
		}
	}
	b.rows++
}

func growBits(bits *[]byte, row int) {
	for len(*bits) <= row/8 {
		*bits = append(*bits, 0)
	}
}

func setBit(bits *[]byte, row int) {
	growBits(bits, row)
	(*bits)[row/8] |= 1 << (row % 8)
}

// AddRows appends n rows of no columns (the rows of a query that reads no
// column, which COUNT(*) still counts).
func (b *ColumnBuilder) AddRows(n int) {
	if b.rows > 0 && len(b.cols) != 0 {
		panic(fmt.Sprintf("batch: rows of no values after rows of %d", len(b.cols)))
	}
	b.cols = nil
	b.rows += n
}

// Len is the number of rows added since the last Build.
func (b *ColumnBuilder) Len() int { return b.rows }

// Build returns the batch and resets the builder.
func (b *ColumnBuilder) Build() *wololov1.RowBatch {
	rows := &wololov1.ColumnBatch{Rows: uint32(b.rows)}
	for i := range b.cols {
		c := &b.cols[i]
		vc := &wololov1.ValueColumn{Text: c.text.build()}
		if c.nulls != nil {
			growBits(&c.nulls, b.rows-1)
			vc.Nulls = c.nulls[:(b.rows+7)/8]
		}
		rows.Columns = append(rows.Columns, vc)
	}
	b.rows, b.cols = 0, nil
	return &wololov1.RowBatch{Rows: &wololov1.RowBatch_Columns{Columns: rows}}
}

// Columns is a checked ColumnBatch: every column has Rows values.
type Columns struct{ c *wololov1.ColumnBatch }

// ReadColumns checks a ColumnBatch: every column has as many values as
// the batch has rows, its offsets stay within its text, and its NULL
// marks are none or one bit per row. A batch whose columns disagree is
// refused with an error wrapping ErrBadBatch.
func ReadColumns(c *wololov1.ColumnBatch) (Columns, error) {
	n := int(c.GetRows())
	for i, col := range c.GetColumns() {
		name := fmt.Sprintf("#%d", i)
		if err := checkText(col.GetText(), n, name); err != nil {
			return Columns{}, err
		}
		if nb := len(col.GetNulls()); nb != 0 && nb != (n+7)/8 {
			return Columns{}, fmt.Errorf("%w: column %s has %d bytes of NULL marks for %d rows", ErrBadBatch, name, nb, n)
		}
	}
	return Columns{c: c}, nil
}

// Rows is the number of rows.
func (c Columns) Rows() int { return int(c.c.GetRows()) }

// Width is the number of columns.
func (c Columns) Width() int { return len(c.c.GetColumns()) }

// Value returns column col's value of row row, and false when it is NULL.
// The bytes alias the batch.
func (c Columns) Value(col, row int) ([]byte, bool) {
	vc := c.c.Columns[col]
	if nulls := vc.GetNulls(); len(nulls) > 0 && nulls[row/8]&(1<<(row%8)) != 0 {
		return nil, false
	}
	return textAt(vc.Text, row), true
}
