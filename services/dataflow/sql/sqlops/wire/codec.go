package wire

import (
	"encoding/binary"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"

	"github.com/wololo/wololo/services/base/protoscan"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// The wire codec: a channel's batch written straight from an exchange's
// columns to the bytes it travels as, and read straight from those bytes
// into a batch, without the RowBatch message in between (ToSelectedRows and
// proto.Marshal, proto.Unmarshal and FromRows), which cost as much again
// as the bytes' own reading and writing and allocated every column twice.
// The bytes are the same: Append writes exactly what proto.Marshal
// writes of ToSelectedRows's RowBatch, and Read reads what FromRows reads,
// both held to it by differential tests and a fuzz test. Read reads
// only the form Append writes (fields in order, each once, packed,
// nothing unknown, every column in its type's form);
// for anything else it reports false and the caller reads the batch the
// long way, which accepts every encoding protobuf does and refuses what
// FromRows refuses, with its errors. Both ways are kept because the
// in-process runner (sqlops.RunFeeds) hands RowBatches on as Go values, never
// as bytes.

// Field numbers of wololo.v1.RowBatch and the messages in it, read from
// batch.proto's descriptors: the one place they are written down.
var (
	fieldRowBatchColumns = protoscan.FieldOf(&wololov1.RowBatch{}, "columns")

	fieldBatchRows    = protoscan.FieldOf(&wololov1.ColumnBatch{}, "rows")
	fieldBatchColumns = protoscan.FieldOf(&wololov1.ColumnBatch{}, "columns")
	fieldBatchRoutes  = protoscan.FieldOf(&wololov1.ColumnBatch{}, "routes")

	fieldColumnText    = protoscan.FieldOf(&wololov1.ValueColumn{}, "text")
	fieldColumnNulls   = protoscan.FieldOf(&wololov1.ValueColumn{}, "nulls")
	fieldColumnNumbers = protoscan.FieldOf(&wololov1.ValueColumn{}, "numbers")
	fieldColumnBools   = protoscan.FieldOf(&wololov1.ValueColumn{}, "bools")

	fieldTextData    = protoscan.FieldOf(&wololov1.TextColumn{}, "data")
	fieldTextEnds    = protoscan.FieldOf(&wololov1.TextColumn{}, "ends")
	fieldTextLengths = protoscan.FieldOf(&wololov1.TextColumn{}, "lengths")
	fieldTextWidth   = protoscan.FieldOf(&wololov1.TextColumn{}, "width")

	fieldDecUnscaled = protoscan.FieldOf(&wololov1.DecimalColumn{}, "unscaled")
	fieldDecScales   = protoscan.FieldOf(&wololov1.DecimalColumn{}, "scales")
	fieldDecScale    = protoscan.FieldOf(&wololov1.DecimalColumn{}, "scale")
	fieldDecWideRows = protoscan.FieldOf(&wololov1.DecimalColumn{}, "wide_rows")
	fieldDecWide     = protoscan.FieldOf(&wololov1.DecimalColumn{}, "wide")
)

// Writer writes batches (Append), keeping its scratch between
// them.
type Writer struct {
	cols []wireColumn
}

// wireColumn is one column's part of a batch being written: what its
// ValueColumn holds, sized before anything is written.
type wireColumn struct {
	v     *exec.Vec
	nulls []byte // the Selection's NULL marks; nil when none is NULL
	size  int    // of the ValueColumn's fields

	// Text: what decides the form of its offsets, the size of the
	// packed ends when that is the form, the TextColumn's size.
	text     textShape
	endsSize int
	tcSize   int

	// Number: the packed unscaled values and scales, the one scale, the
	// wide values.
	unscaled, scales []byte
	scale            uint32
	wideRows         []byte
	wide             [][]byte
	dcSize           int
}

// sizeField is the size of a length-delimited field of n bytes.
func sizeField(n int) int { return 1 + protowire.SizeVarint(uint64(n)) + n }

// sizeBytes is sizeField of a proto3 bytes or packed field: nothing when
// it is empty.
func sizeBytes(n int) int {
	if n == 0 {
		return 0
	}
	return sizeField(n)
}

func appendHead(dst []byte, field protowire.Number, n int) []byte {
	return protowire.AppendVarint(protowire.AppendTag(dst, field, protowire.BytesType), uint64(n))
}

func appendBytes(dst []byte, field protowire.Number, b []byte) []byte {
	if len(b) == 0 {
		return dst
	}
	return append(appendHead(dst, field, len(b)), b...)
}

// Append appends the selected rows of b, with the routes each is for
// (nil: the channel's one route), as proto.Marshal writes ToSelectedRows(b, s,
// routes), and returns the extended slice.
func (w *Writer) Append(dst []byte, b *exec.Batch, s Selection, routes []uint64) []byte {
	cbSize := 0
	if s.n != 0 {
		cbSize += 1 + protowire.SizeVarint(uint64(s.n))
		if cap(w.cols) < len(b.Cols) {
			w.cols = make([]wireColumn, len(b.Cols))
		}
		w.cols = w.cols[:len(b.Cols)]
		for c, v := range b.Cols {
			w.cols[c].plan(v, s)
			cbSize += sizeField(w.cols[c].size)
		}
	}
	routesSize := 0
	for _, r := range routes {
		routesSize += protowire.SizeVarint(r)
	}
	cbSize += sizeBytes(routesSize)

	if dst == nil {
		// Allocated to fit, as batch.Encode's are: what the store and
		// the sender keep is no larger than the message.
		dst = make([]byte, 0, sizeField(cbSize))
	} else {
		dst = slices.Grow(dst, sizeField(cbSize))
	}
	dst = appendHead(dst, fieldRowBatchColumns, cbSize)
	if s.n != 0 {
		dst = protowire.AppendVarint(protowire.AppendTag(dst, fieldBatchRows, protowire.VarintType), uint64(s.n))
		for c := range b.Cols {
			dst = w.cols[c].append(dst, s)
		}
	}
	if routesSize > 0 {
		dst = appendHead(dst, fieldBatchRoutes, routesSize)
		for _, r := range routes {
			dst = protowire.AppendVarint(dst, r)
		}
	}
	return dst
}

// plan sizes v's selected values as valueColumn writes them.
func (c *wireColumn) plan(v *exec.Vec, s Selection) {
	c.v, c.nulls, c.size = v, c.nulls[:0], 0
	anyNull := false
	if v.Null != nil {
		for k := range s.n {
			if v.Null[s.at(k)] {
				if !anyNull {
					m := (s.n + 7) / 8
					c.nulls = slices.Grow(c.nulls[:0], m)[:m]
					clear(c.nulls)
					anyNull = true
				}
				c.nulls[k/8] |= 1 << (k % 8)
			}
		}
	}
	if !anyNull {
		c.nulls = nil
	}
	c.size += sizeBytes(len(c.nulls))
	switch v.Type {
	case plan.Text:
		c.planText(s)
		c.size += sizeField(c.tcSize)
	case plan.Number:
		c.planNumbers(s)
		c.size += sizeField(c.dcSize)
	case plan.Bool:
		c.size += sizeBytes(s.n)
	}
}

// planText sizes a text column as textColumn writes it.
func (c *wireColumn) planText(s Selection) {
	c.text, c.endsSize = textShapeOf(c.v, s), 0
	c.tcSize = sizeBytes(int(c.text.size))
	switch c.text.form() {
	case textWidth:
		c.tcSize += 1 + protowire.SizeVarint(uint64(c.text.longest))
	case textLengths:
		c.tcSize += sizeBytes(s.n)
	default:
		end := uint32(0)
		for k := range s.n {
			end += textLength(c.v, s, k)
			c.endsSize += protowire.SizeVarint(uint64(end))
		}
		c.tcSize += sizeBytes(c.endsSize)
	}
}

// planNumbers writes a number column's packed values as decimalColumn
// makes them, and sizes its DecimalColumn.
func (c *wireColumn) planNumbers(s Selection) {
	// Room for every value's varint, so that appending never grows.
	c.unscaled = slices.Grow(c.unscaled[:0], s.n*binary.MaxVarintLen64)
	c.scales, c.wideRows, c.wide = c.scales[:0], c.wideRows[:0], c.wide[:0]
	scale, mixed, first := int32(0), false, true
	null := func(k int) bool { return c.nulls != nil && c.nulls[k/8]&(1<<(k%8)) != 0 }
	nums := c.v.Nums
	for k := range s.n {
		if null(k) {
			c.unscaled = append(c.unscaled, 0)
			continue
		}
		d := nums[s.at(k)]
		u, ds, ok := d.Unscaled()
		if !ok {
			if len(c.wideRows) == 0 {
				m := (s.n + 7) / 8
				c.wideRows = slices.Grow(c.wideRows, m)[:m]
				clear(c.wideRows)
			}
			c.wideRows[k/8] |= 1 << (k % 8)
			c.wide = append(c.wide, d.Append(nil))
			c.unscaled = append(c.unscaled, 0)
			continue
		}
		c.unscaled = protowire.AppendVarint(c.unscaled, protowire.EncodeZigZag(u))
		if first {
			scale, first = ds, false
		} else if ds != scale {
			mixed = true
		}
	}
	c.scale = 0
	if !mixed {
		c.scale = uint32(scale)
	} else {
		wide := func(k int) bool { return len(c.wideRows) != 0 && c.wideRows[k/8]&(1<<(k%8)) != 0 }
		for k := range s.n {
			sc := uint32(0)
			if !null(k) && !wide(k) {
				sc = uint32(c.v.Nums[s.at(k)].Scale())
			}
			c.scales = protowire.AppendVarint(c.scales, uint64(sc))
		}
	}
	c.dcSize = sizeBytes(len(c.unscaled)) + sizeBytes(len(c.scales)) + sizeBytes(len(c.wideRows))
	if c.scale != 0 {
		c.dcSize += 1 + protowire.SizeVarint(uint64(c.scale))
	}
	for _, w := range c.wide {
		c.dcSize += sizeField(len(w))
	}
}

// append writes the column planned as a ValueColumn field of the batch.
func (c *wireColumn) append(dst []byte, s Selection) []byte {
	dst = appendHead(dst, fieldBatchColumns, c.size)
	v := c.v
	switch v.Type {
	case plan.Text:
		dst = appendHead(dst, fieldColumnText, c.tcSize)
		if size := c.text.size; size > 0 {
			dst = appendHead(dst, fieldTextData, int(size))
			if s.rows == nil {
				dst = append(dst, runText(v, s, size)...)
			} else {
				for _, r := range s.rows {
					dst = append(dst, v.Text(int(r))...)
				}
			}
		}
		switch c.text.form() {
		case textWidth:
			dst = protowire.AppendVarint(protowire.AppendTag(dst, fieldTextWidth, protowire.VarintType), uint64(c.text.longest))
		case textLengths:
			if s.n > 0 {
				dst = appendHead(dst, fieldTextLengths, s.n)
				for k := range s.n {
					dst = append(dst, byte(textLength(v, s, k)))
				}
			}
		default:
			dst = appendHead(dst, fieldTextEnds, c.endsSize)
			end := uint32(0)
			for k := range s.n {
				end += textLength(v, s, k)
				dst = protowire.AppendVarint(dst, uint64(end))
			}
		}
		dst = appendBytes(dst, fieldColumnNulls, c.nulls)
	case plan.Number:
		dst = appendBytes(dst, fieldColumnNulls, c.nulls)
		dst = appendHead(dst, fieldColumnNumbers, c.dcSize)
		dst = appendBytes(dst, fieldDecUnscaled, c.unscaled)
		dst = appendBytes(dst, fieldDecScales, c.scales)
		if c.scale != 0 {
			dst = protowire.AppendVarint(protowire.AppendTag(dst, fieldDecScale, protowire.VarintType), uint64(c.scale))
		}
		dst = appendBytes(dst, fieldDecWideRows, c.wideRows)
		for _, w := range c.wide {
			dst = append(appendHead(dst, fieldDecWide, len(w)), w...)
		}
	case plan.Bool:
		dst = appendBytes(dst, fieldColumnNulls, c.nulls)
		dst = appendHead(dst, fieldColumnBools, s.n)
		for k := range s.n {
			r := s.at(k)
			if v.Bools[r] && (v.Null == nil || !v.Null[r]) {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		}
	default:
		dst = appendBytes(dst, fieldColumnNulls, c.nulls)
	}
	return dst
}

// Read reads encoded, a RowBatch in the form Append writes, as a
// batch of the given columns and the routes of its rows (nil when it
// names none), as FromRows reads the RowBatch proto.Unmarshal makes of
// it; false when encoded is in any other form or FromRows would refuse
// it (the caller then reads it the long way). Nothing of the batch
// aliases encoded.
func Read(encoded []byte, cols []plan.Column) (*exec.Batch, []uint64, bool) {
	top := protoscan.New(encoded, 0)
	rb, ok := top.Next()
	if !ok || !rb.IsBytes(fieldRowBatchColumns) || !top.End() {
		return nil, nil, false
	}
	r := protoscan.New(rb.Bytes, fieldBatchColumns)
	var n uint64
	var columns [][]byte
	var routes []byte
	for f, more := r.Next(); more; f, more = r.Next() {
		switch {
		case f.IsVarint(fieldBatchRows):
			n = f.Value
		case f.IsBytes(fieldBatchColumns):
			columns = append(columns, f.Bytes)
		case f.IsBytes(fieldBatchRoutes):
			routes = f.Bytes
		default:
			return nil, nil, false
		}
	}
	// Every column holds at least a byte or a varint per row, or n times
	// its width in text: a batch that says it has more rows than bytes
	// lies, and nothing is allocated for them.
	if !r.OK() || n == 0 || n > uint64(len(rb.Bytes)) || len(columns) != len(cols) {
		return nil, nil, false
	}
	rows := int(n)
	out := &exec.Batch{N: rows, Cols: make([]*exec.Vec, len(cols))}
	for c, col := range cols {
		v, ok := readColumn(columns[c], col.Type, rows)
		if !ok {
			return nil, nil, false
		}
		out.Cols[c] = v
	}
	var masks []uint64
	if len(routes) > 0 {
		masks = make([]uint64, 0, rows)
		for len(routes) > 0 {
			m, k := protowire.ConsumeVarint(routes)
			if k < 0 {
				return nil, nil, false
			}
			masks = append(masks, m)
			routes = routes[k:]
		}
	}
	return out, masks, true
}

// readColumn reads a ValueColumn of n rows in the form of type t.
func readColumn(b []byte, t plan.Type, n int) (*exec.Vec, bool) {
	r := protoscan.New(b, 0)
	var text, nulls, numbers, bools []byte
	hasText, hasNumbers := false, false // present, if empty
	for f, more := r.Next(); more; f, more = r.Next() {
		switch {
		case f.IsBytes(fieldColumnText):
			text, hasText = f.Bytes, true
		case f.IsBytes(fieldColumnNulls):
			nulls = f.Bytes
		case f.IsBytes(fieldColumnNumbers):
			numbers, hasNumbers = f.Bytes, true
		case f.IsBytes(fieldColumnBools):
			bools = f.Bytes
		default:
			return nil, false
		}
	}
	if !r.OK() {
		return nil, false
	}
	if len(nulls) != 0 && len(nulls) != (n+7)/8 {
		return nil, false
	}
	v := &exec.Vec{Type: t, N: n, Null: nullMarks(nulls, n)}
	// Exactly the form of the column's type.
	switch {
	case t == plan.Text && hasText && !hasNumbers && len(bools) == 0:
		return v, readText(v, text, n)
	case t == plan.Number && hasNumbers && !hasText && len(bools) == 0:
		v.Type = plan.Number
		return v, readNumbers(v, numbers, n)
	case t == plan.Bool && len(bools) > 0 && !hasText && !hasNumbers:
		if len(bools) != n {
			return nil, false
		}
		v.Bools = make([]bool, n)
		for i, x := range bools {
			if x > 1 {
				return nil, false
			}
			v.Bools[i] = x == 1
		}
		return v, true
	}
	return nil, false
}

// readText reads a TextColumn of n rows into v: its bytes copied, its
// ends in whichever form they came.
func readText(v *exec.Vec, b []byte, n int) bool {
	r := protoscan.New(b, 0)
	var data, ends, lengths []byte
	var width uint64
	for f, more := r.Next(); more; f, more = r.Next() {
		switch {
		case f.IsBytes(fieldTextData):
			data = f.Bytes
		case f.IsBytes(fieldTextEnds):
			ends = f.Bytes
		case f.IsBytes(fieldTextLengths):
			lengths = f.Bytes
		case f.IsVarint(fieldTextWidth):
			width = f.Value
		default:
			return false
		}
	}
	if !r.OK() || uint64(len(data)) > math.MaxUint32 {
		return false
	}
	switch {
	case ends == nil:
		var err error
		if v.Ends, err = batch.CompactEnds(n, width, lengths, len(data)); err != nil {
			return false
		}
	case lengths != nil || width != 0:
		return false
	default:
		if v.Ends = packedEnds(ends, n, len(data)); v.Ends == nil {
			return false
		}
	}
	v.Data = append([]byte(nil), data...)
	return true
}

// packedEnds reads n end offsets packed as varints, in order, the last
// at size; nil when they are not. (FromRows takes ends short of the
// text, its tail unread; Append never writes them.)
func packedEnds(packed []byte, n, size int) []uint32 {
	ends := make([]uint32, n)
	end, i := uint64(0), 0
	for len(packed) > 0 {
		e, k := protowire.ConsumeVarint(packed)
		if k < 0 || i == n || e < end || e > math.MaxUint32 {
			return nil
		}
		ends[i], end, packed = uint32(e), e, packed[k:]
		i++
	}
	if i != n || end != uint64(size) {
		return nil
	}
	return ends
}

// readNumbers reads a DecimalColumn of n rows into v, as decimals does:
// a NULL's value is the zero Dec, a wide value is read from its text.
func readNumbers(v *exec.Vec, b []byte, n int) bool {
	r := protoscan.New(b, fieldDecWide)
	var unscaled, scales, wideRows []byte
	var wide [][]byte
	var scale uint64
	for f, more := r.Next(); more; f, more = r.Next() {
		switch {
		case f.IsBytes(fieldDecUnscaled):
			unscaled = f.Bytes
		case f.IsBytes(fieldDecScales):
			scales = f.Bytes
		case f.IsVarint(fieldDecScale):
			scale = f.Value
		case f.IsBytes(fieldDecWideRows):
			wideRows = f.Bytes
		case f.IsBytes(fieldDecWide):
			wide = append(wide, f.Bytes)
		default:
			return false
		}
	}
	if !r.OK() || scale > math.MaxInt32 || (len(wideRows) != 0 && len(wideRows) != (n+7)/8) {
		return false
	}
	v.Nums = make([]value.Dec, n)
	perRow := len(scales) > 0 // a scale per row, not one for all
	i, next := 0, 0           // the row, the next wide value
	for len(unscaled) > 0 {
		u, k := protowire.ConsumeVarint(unscaled)
		if k < 0 || i == n || perRow && len(scales) == 0 {
			return false
		}
		unscaled = unscaled[k:]
		s := scale
		if perRow {
			var k int
			if s, k = protowire.ConsumeVarint(scales); k < 0 || s > math.MaxInt32 {
				return false
			}
			scales = scales[k:]
		}
		null := v.Null != nil && v.Null[i]
		switch {
		case len(wideRows) != 0 && wideRows[i/8]&(1<<(i%8)) != 0:
			if next == len(wide) {
				return false
			}
			d, ok := value.ReadStored(wide[next])
			if !ok {
				return false
			}
			if !null {
				v.Nums[i] = d
			}
			next++
		case !null:
			v.Nums[i] = value.FromUnscaled(protowire.DecodeZigZag(u), int32(s))
		}
		i++
	}
	return i == n && len(scales) == 0 && next == len(wide)
}
