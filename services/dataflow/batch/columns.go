package batch

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

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

// Columns is a checked ColumnBatch: every column has Rows values, in one
// form.
type Columns struct{ c *wololov1.ColumnBatch }

// ReadColumns checks a ColumnBatch: every column is in at most one form
// (text, numbers or bools; in one unless the batch has no rows) and has
// as many values as the batch has rows; a text column's offsets stay
// within its text, a number column has a scale per row or one for all
// (each within an int32) and a wide value for each row marked wide, a
// boolean column's values are 0 or 1; its NULL marks are none or one bit
// per row. A batch whose columns disagree is refused with an error
// wrapping ErrBadBatch. A text column in a compact form (lengths or a
// width) is turned into end offsets here, in c (expandText). That a wide
// value reads as a number is the reader's to check (the value rules are
// not this package's).
func ReadColumns(c *wololov1.ColumnBatch) (Columns, error) {
	n := int(c.GetRows())
	for i, col := range c.GetColumns() {
		name := fmt.Sprintf("#%d", i)
		if err := checkForm(col, n, name); err != nil {
			return Columns{}, err
		}
		if nb := len(col.GetNulls()); nb != 0 && nb != (n+7)/8 {
			return Columns{}, fmt.Errorf("%w: column %s has %d bytes of NULL marks for %d rows", ErrBadBatch, name, nb, n)
		}
	}
	return Columns{c: c}, nil
}

// checkForm checks that a column is in at most one form, and its values
// in it.
func checkForm(col *wololov1.ValueColumn, n int, name string) error {
	forms := 0
	for _, in := range []bool{col.GetText() != nil, col.GetNumbers() != nil, len(col.GetBools()) > 0} {
		if in {
			forms++
		}
	}
	switch {
	case forms > 1:
		return fmt.Errorf("%w: column %s is in %d forms", ErrBadBatch, name, forms)
	case forms == 0 && n > 0:
		return fmt.Errorf("%w: column %s has no values", ErrBadBatch, name)
	case col.GetNumbers() != nil:
		return checkDecimals(col.GetNumbers(), n, name)
	case len(col.GetBools()) > 0:
		return checkBools(col.GetBools(), n, name)
	case col.GetText() != nil:
		if err := expandText(col.GetText(), n, name); err != nil {
			return err
		}
		return checkText(col.GetText(), n, name)
	}
	return nil
}

// expandText turns a text column of n rows that travelled in a compact
// form (its values' lengths, or one width for all) back into end offsets,
// in place, so that what reads the column reads ends, whatever form it
// came in. A column in more than one form, or whose lengths do not add up
// to its text, is refused.
func expandText(c *wololov1.TextColumn, n int, name string) error {
	lengths, width := c.GetLengths(), c.GetWidth()
	if lengths == nil && width == 0 {
		return nil
	}
	if len(c.GetEnds()) != 0 {
		return fmt.Errorf("%w: column %s has its text's offsets in more than one form", ErrBadBatch, name)
	}
	ends, err := CompactEnds(n, uint64(width), lengths, len(c.GetData()))
	if err != nil {
		return fmt.Errorf("%w: column %s %v", ErrBadBatch, name, err)
	}
	c.Ends, c.Lengths, c.Width = ends, nil, 0
	return nil
}

// CompactEnds is the end offsets of n text values of size bytes in all
// whose offsets travelled in a compact form (wololov1.TextColumn): every
// value width bytes long, or (width 0) each as long as its byte of
// lengths. It allocates nothing for a form that does not fit n values of
// size bytes, which it refuses, nor for one in both forms at once. Both
// readers of a ColumnBatch use it: ReadColumns, and sqlops' wire codec.
func CompactEnds(n int, width uint64, lengths []byte, size int) ([]uint32, error) {
	total := uint64(0)
	switch {
	case width != 0 && lengths != nil:
		return nil, errors.New("has its text's offsets in more than one form")
	case width > uint64(size):
		return nil, fmt.Errorf("has %d bytes of text, a value's width is %d", size, width)
	case width != 0:
		total = uint64(n) * width // n below 2^32, width at most size
	case len(lengths) != n:
		return nil, fmt.Errorf("has %d lengths, want %d", len(lengths), n)
	default:
		for _, l := range lengths {
			total += uint64(l)
		}
	}
	if total != uint64(size) {
		return nil, fmt.Errorf("has %d bytes of text, its lengths say %d", size, total)
	}
	ends := make([]uint32, n)
	end := uint32(0)
	for i := range ends {
		if width != 0 {
			end += uint32(width)
		} else {
			end += uint32(lengths[i])
		}
		ends[i] = end
	}
	return ends, nil
}

// checkDecimals checks a number column of n rows.
func checkDecimals(c *wololov1.DecimalColumn, n int, name string) error {
	if len(c.GetUnscaled()) != n {
		return fmt.Errorf("%w: column %s has %d rows, want %d", ErrBadBatch, name, len(c.GetUnscaled()), n)
	}
	if ns := len(c.GetScales()); ns != 0 && ns != n {
		return fmt.Errorf("%w: column %s has %d scales for %d rows", ErrBadBatch, name, ns, n)
	}
	if c.GetScale() > math.MaxInt32 || slices.ContainsFunc(c.GetScales(), func(s uint32) bool { return s > math.MaxInt32 }) {
		return fmt.Errorf("%w: column %s has a scale beyond an int32", ErrBadBatch, name)
	}
	wide := c.GetWideRows()
	if nb := len(wide); nb != 0 && nb != (n+7)/8 {
		return fmt.Errorf("%w: column %s has %d bytes of wide marks for %d rows", ErrBadBatch, name, nb, n)
	}
	marked := 0
	for i, b := range wide {
		if i == len(wide)-1 && n%8 != 0 {
			b &= 1<<(n%8) - 1 // the bits past the last row are not rows
		}
		marked += bits.OnesCount8(b)
	}
	if marked != len(c.GetWide()) {
		return fmt.Errorf("%w: column %s has %d wide values for %d wide rows", ErrBadBatch, name, len(c.GetWide()), marked)
	}
	return nil
}

// checkBools checks a boolean column of n rows.
func checkBools(b []byte, n int, name string) error {
	if len(b) != n {
		return fmt.Errorf("%w: column %s has %d rows, want %d", ErrBadBatch, name, len(b), n)
	}
	if slices.ContainsFunc(b, func(v byte) bool { return v > 1 }) {
		return fmt.Errorf("%w: column %s has a boolean that is not 0 or 1", ErrBadBatch, name)
	}
	return nil
}

// Rows is the number of rows.
func (c Columns) Rows() int { return int(c.c.GetRows()) }

// Width is the number of columns.
func (c Columns) Width() int { return len(c.c.GetColumns()) }

// Value returns column col's value of row row, and false when it is NULL,
// of a column in text form (Text). The bytes alias the batch.
func (c Columns) Value(col, row int) ([]byte, bool) {
	vc := c.c.Columns[col]
	if nulls := vc.GetNulls(); len(nulls) > 0 && nulls[row/8]&(1<<(row%8)) != 0 {
		return nil, false
	}
	return textAt(vc.Text, row), true
}

// Text reports whether column col is in text form.
func (c Columns) Text(col int) bool { return c.c.Columns[col].GetText() != nil }

// Column returns column col, checked.
func (c Columns) Column(col int) *wololov1.ValueColumn { return c.c.Columns[col] }
