package exec

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// Vec is one column of a batch, of one type: text as one arena and the
// end offset of each value (the layout of wololo.v1.TextColumn), numbers
// as exact decimals, booleans as bools; Null marks the NULL values (nil
// when there is none). A Vec is not modified once built; the memory of a
// Vec that nothing reads any more may be built into again
// (NewVecBuilderIn).
type Vec struct {
	Type  plan.Type
	N     int
	Null  []bool
	Data  []byte   // Text
	Ends  []uint32 // Text: value i is Data[Ends[i-1]:Ends[i]]
	Nums  []value.Dec
	Bools []bool
}

// IsNull reports whether value i is NULL.
func (v *Vec) IsNull(i int) bool { return v.Null != nil && v.Null[i] }

// Text returns text value i.
func (v *Vec) Text(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = v.Ends[i-1]
	}
	return v.Data[start:v.Ends[i]]
}

// Batch is a run of rows as columns of equal length.
type Batch struct {
	N    int
	Cols []*Vec
}

// String is the batch's values as text (AppendText's), a row a line, each
// value followed by a comma, a NULL as NULL: for tests and debugging.
func (b *Batch) String() string {
	var out []byte
	for i := range b.N {
		for _, v := range b.Cols {
			if v.IsNull(i) {
				out = append(out, "NULL"...)
			} else {
				out = AppendText(out, v, i)
			}
			out = append(out, ',')
		}
		out = append(out, '\n')
	}
	return string(out)
}

// builder appends values to a new Vec.
type builder struct{ v *Vec }

func newBuilder(t plan.Type, capacity int) *builder { return newBuilderIn(t, capacity, nil) }

// newBuilderIn is newBuilder building into the memory of spent's numbers
// or booleans (spent nil, or a Vec of type t that nothing reads any more)
// when it has room for capacity values; a text Vec's memory is never
// taken.
func newBuilderIn(t plan.Type, capacity int, spent *Vec) *builder {
	if spent == nil || spent.Type != t {
		spent = &Vec{}
	}
	v := &Vec{Type: t}
	switch t {
	case plan.Text:
		v.Ends = make([]uint32, 0, capacity)
	case plan.Number:
		v.Nums = room(spent.Nums, capacity)
	case plan.Bool:
		v.Bools = room(spent.Bools, capacity)
	}
	return &builder{v: v}
}

// room is spent emptied when it has room for capacity values, else a new
// slice of that capacity.
func room[T any](spent []T, capacity int) []T {
	if spent != nil && cap(spent) >= capacity {
		return spent[:0]
	}
	return make([]T, 0, capacity)
}

// null appends a NULL; the first makes Null, at the capacity of the
// values (newBuilder's), so that it does not grow value by value.
func (b *builder) null() {
	v := b.v
	if v.Null == nil {
		v.Null = make([]bool, v.N, max(v.N+1, cap(v.Ends), cap(v.Nums), cap(v.Bools), 8))
	}
	v.Null = appendOne(v.Null, true)
	switch v.Type {
	case plan.Text:
		v.Ends = appendOne(v.Ends, uint32(len(v.Data)))
	case plan.Number:
		v.Nums = appendOne(v.Nums, value.Dec{})
	case plan.Bool:
		v.Bools = appendOne(v.Bools, false)
	}
	v.N++
}

func (b *builder) notNull() {
	if b.v.Null != nil {
		b.v.Null = appendOne(b.v.Null, false)
	}
	b.v.N++
}

func (b *builder) text(t []byte) {
	// As appendDoubling, but each slice grown apart, so that the appends,
	// to the slices they extend, write only their lengths: a slice
	// written back whole writes its pointer, which costs a write barrier
	// whenever the collector runs (a scan reads every value of a table
	// here).
	v := b.v
	if len(v.Data)+len(t) > cap(v.Data) {
		v.Data = doubled(v.Data, len(t))
	}
	v.Data = append(v.Data, t...)
	v.Ends = appendOne(v.Ends, uint32(len(v.Data)))
	b.notNull()
}

// appendDoubling is append(dst, p...), but dst's capacity doubles when it
// must grow (doubled): append grows a large slice by a quarter, which
// copies an arena that grows value by value (a table's keys, an
// aggregate's groups' keys) many times over.
func appendDoubling[T any](dst []T, p ...T) []T {
	if len(dst)+len(p) > cap(dst) {
		dst = doubled(dst, len(p))
	}
	return append(dst, p...)
}

// appendOne is append(dst, x), dst's capacity doubled when it must grow
// (appendDoubling's, for a value at a time: an aggregate's groups' keys,
// each group's added as it is met, were copied many times over).
func appendOne[T any](dst []T, x T) []T {
	if len(dst) == cap(dst) {
		dst = doubled(dst, 1)
	}
	return append(dst, x)
}

// doubled is dst with room for n more values, its capacity at least
// doubled: slices.Grow(dst, cap) asks for twice the capacity, which
// append's rule for a large slice reaches by quarters, 1.25 at a time,
// and passes, 2.44 times it in all. That is the rule, not an accident:
// growing exactly twice cost the 26 analyst queries as one demo job 8 to
// 12% more CPU (80.6 against 88.1 s, 148 against 166 CPU-s, one pair on
// a quiet machine), their joins' and aggregates' builders growing and
// copying more often. What lives long and only grows keeps its own rule
// (a key table's arena and ends: appendKeys).
func doubled[T any](dst []T, n int) []T { return slices.Grow(dst, max(n, cap(dst))) }

func (b *builder) num(d value.Dec) {
	b.v.Nums = appendOne(b.v.Nums, d)
	b.notNull()
}

func (b *builder) boolean(x bool) {
	b.v.Bools = appendOne(b.v.Bools, x)
	b.notNull()
}

// from appends value i of src, of the builder's type.
func (b *builder) from(src *Vec, i int) {
	if src.IsNull(i) {
		b.null()
		return
	}
	switch src.Type {
	case plan.Text:
		b.text(src.Text(i))
	case plan.Number:
		b.num(src.Nums[i])
	case plan.Bool:
		b.boolean(src.Bools[i])
	}
}

// all appends every value of src, of the builder's type (rows').
func (b *builder) all(src *Vec) { b.rows(src, 0, src.N) }

// rows appends values from..to-1 of src, of the builder's type: each
// slice grown once for them, the texts in one copy with their offsets
// moved (where from, a value at a time, grows and copies per value); the
// slices grow as from grows them (the texts and offsets doubled, the
// rest by append), so that what a join holds is no larger.
func (b *builder) rows(src *Vec, from, to int) {
	v := b.v
	n := to - from
	if v.Null == nil && src.Null != nil && slices.Contains(src.Null[from:to], true) { // as from: Null at the first NULL
		v.Null = make([]bool, v.N, max(v.N+n, cap(v.Ends), cap(v.Nums), cap(v.Bools), 8))
	}
	if v.Null != nil {
		if src.Null != nil {
			v.Null = append(v.Null, src.Null[from:to]...)
		} else {
			k := len(v.Null)
			v.Null = slices.Grow(v.Null, n)[:k+n]
			clear(v.Null[k:])
		}
	}
	switch src.Type {
	case plan.Text:
		start := uint32(0)
		if from > 0 {
			start = src.Ends[from-1]
		}
		end := start
		if to > from {
			end = src.Ends[to-1]
		}
		base := uint32(len(v.Data)) - start
		v.Data = appendDoubling(v.Data, src.Data[start:end]...)
		if len(v.Ends)+n > cap(v.Ends) {
			v.Ends = doubled(v.Ends, n)
		}
		for _, e := range src.Ends[from:to] {
			v.Ends = append(v.Ends, base+e)
		}
	case plan.Number:
		v.Nums = append(v.Nums, src.Nums[from:to]...)
	case plan.Bool:
		v.Bools = append(v.Bools, src.Bools[from:to]...)
	}
	v.N += n
}

// gather returns the values of v at rows, a row of -1 a NULL, each
// column's memory allocated once at its size.
func gather(v *Vec, rows []int32) *Vec { return gatherFrom(v.Type, []*Vec{v}, 31, rows) }

// gatherFrom is gather of the values of type t held in chunks, row r
// value r&(1<<shift-1) of chunks[r>>shift] (rowChunks'; one chunk and a
// shift of 31: a Vec's rows).
func gatherFrom(t plan.Type, chunks []*Vec, shift uint, rows []int32) *Vec {
	if len(chunks) == 1 && isUnread(chunks[0]) { // NULLs, gathered or not
		return unread(t, len(rows))
	}
	mask := int32(uint32(1)<<shift - 1) // 31: every bit of a row (no int32 wraps)
	out := &Vec{Type: t, N: len(rows)}
	if anyNull(chunks) || slices.ContainsFunc(rows, func(r int32) bool { return r < 0 }) {
		out.Null = make([]bool, len(rows))
		for k, r := range rows {
			out.Null[k] = r < 0 || chunks[r>>shift].IsNull(int(r&mask))
		}
	}
	switch t {
	case plan.Text:
		out.Ends = make([]uint32, len(rows))
		end := uint32(0)
		for k, r := range rows {
			if r >= 0 {
				v, i := chunks[r>>shift], r&mask
				if i > 0 {
					end -= v.Ends[i-1]
				}
				end += v.Ends[i]
			}
			out.Ends[k] = end
		}
		// The text of each run of consecutive rows of a chunk in one copy.
		out.Data = make([]byte, end)
		for k := 0; k < len(rows); {
			j := k + 1
			if rows[k] < 0 {
				k = j
				continue
			}
			for j < len(rows) && rows[j] == rows[j-1]+1 && rows[j]&mask != 0 {
				j++
			}
			v, i := chunks[rows[k]>>shift], rows[k]&mask
			from, at := uint32(0), uint32(0)
			if i > 0 {
				from = v.Ends[i-1]
			}
			if k > 0 {
				at = out.Ends[k-1]
			}
			copy(out.Data[at:out.Ends[j-1]], v.Data[from:v.Ends[rows[j-1]&mask]])
			k = j
		}
	case plan.Number:
		out.Nums = make([]value.Dec, len(rows))
		for k, r := range rows {
			if r >= 0 {
				out.Nums[k] = chunks[r>>shift].Nums[r&mask]
			}
		}
	case plan.Bool:
		out.Bools = make([]bool, len(rows))
		for k, r := range rows {
			if r >= 0 {
				out.Bools[k] = chunks[r>>shift].Bools[r&mask]
			}
		}
	}
	return out
}

// slice returns rows from..to-1 of v (from < to), sharing its memory
// but for a text Vec's offsets, made relative to the first row's start.
func slice(v *Vec, from, to int) *Vec {
	out := &Vec{Type: v.Type, N: to - from}
	if v.Null != nil {
		out.Null = v.Null[from:to]
	}
	switch v.Type {
	case plan.Text:
		base := uint32(0)
		if from > 0 {
			base = v.Ends[from-1]
		}
		out.Ends = make([]uint32, to-from)
		for k, e := range v.Ends[from:to] {
			out.Ends[k] = e - base
		}
		out.Data = v.Data[base:v.Ends[to-1]]
	case plan.Number:
		out.Nums = v.Nums[from:to]
	case plan.Bool:
		out.Bools = v.Bools[from:to]
	}
	return out
}

// gatherBatch returns the rows of b at rows.
func gatherBatch(b *Batch, rows []int32) *Batch { return gatherReadCols(b, rows, nil, 0) }

// gatherReadCols is gatherBatch with the columns read does not mark (nil:
// every one read) made unread Vecs (unread.go), their rows not
// gathered, and room for extra more columns (a join's right ones).
func gatherReadCols(b *Batch, rows []int32, read []bool, extra int) *Batch {
	out := &Batch{N: len(rows), Cols: make([]*Vec, len(b.Cols), len(b.Cols)+extra)}
	for k, v := range b.Cols {
		if k < len(read) && !read[k] {
			out.Cols[k] = unread(v.Type, len(rows))
		} else {
			out.Cols[k] = gather(v, rows)
		}
	}
	return out
}

// concat joins batches of the same columns into one.
func concat(types []plan.Type, batches []*Batch) *Batch {
	n := 0
	for _, b := range batches {
		n += b.N
	}
	out := &Batch{N: n, Cols: make([]*Vec, len(types))}
	for c, t := range types {
		bl := newBuilder(t, n)
		for _, b := range batches {
			bl.all(b.Cols[c])
		}
		out.Cols[c] = bl.v
	}
	return out
}

// appendKey appends value i of v to a hash key: a NULL, or the type's one
// form of the value (a number without trailing zeros, so 2034 and 2034.0
// are one key), self-delimiting so that keys of several columns
// concatenate without ambiguity. Equal keys are equal values.
func appendKey(dst []byte, v *Vec, i int) []byte {
	if v.IsNull(i) {
		return append(dst, 0)
	}
	switch v.Type {
	case plan.Text:
		t := v.Text(i)
		dst = append(dst, 1)
		dst = binary.AppendUvarint(dst, uint64(len(t)))
		return append(dst, t...)
	case plan.Number:
		dst = append(dst, 2)
		mark := len(dst)
		dst = append(dst, 0) // the uvarint length: one byte when short, else re-encoded below
		dst = v.Nums[i].Normal().Append(dst)
		n := len(dst) - mark - 1
		if n < 128 {
			dst[mark] = byte(n)
			return dst
		}
		body := bytes.Clone(dst[mark+1:])
		dst = binary.AppendUvarint(dst[:mark], uint64(n))
		return append(dst, body...)
	case plan.Bool:
		if v.Bools[i] {
			return append(dst, 3, 1)
		}
		return append(dst, 3, 0)
	}
	return dst
}

// compareScales orders equal values i of a and j of b (compare finds
// them equal) as they are written: numbers by their scale, the smaller
// first (1007 before 1007.0, as their texts order). Other equal values
// are the same bytes already (text is compared by its bytes, a boolean
// has one form), and so are numbers of one value and one scale.
func compareScales(a *Vec, i int, b *Vec, j int) int {
	if a.Type != plan.Number || a.IsNull(i) {
		return 0
	}
	return cmp.Compare(a.Nums[i].Scale(), b.Nums[j].Scale())
}

// normalize writes v's numbers without trailing fractional zeros, in
// place: v must be a Vec nothing else reads yet (gather's).
func normalize(v *Vec) {
	if v.Type != plan.Number {
		return
	}
	for i := range v.N {
		v.Nums[i] = v.Nums[i].Normal()
	}
}

// compare orders value i of a against value j of b (same type): text by
// bytes, numbers by value, false before true; NULL after every value.
func compare(a *Vec, i int, b *Vec, j int) int {
	an, bn := a.IsNull(i), b.IsNull(j)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	switch a.Type {
	case plan.Text:
		return bytes.Compare(a.Text(i), b.Text(j))
	case plan.Number:
		return a.Nums[i].Cmp(b.Nums[j])
	case plan.Bool:
		switch {
		case a.Bools[i] == b.Bools[j]:
			return 0
		case b.Bools[j]:
			return -1
		}
		return 1
	}
	return 0
}
