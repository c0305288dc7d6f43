package exec

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// The state of the incremental operators as bytes, and values as text:
// what the physical plan's operators write into their snapshots
// (services/dataflow/sql/sqlops). A value's text (AppendText) is the form
// the value rules read back as the same value: text as its bytes, a
// number in decimal with its scale, a boolean as true or false. In a
// snapshot a value is binary, not text (stateWriter.value): formatting
// and parsing every number of a million groups is most of the cost of a
// snapshot.

// AppendText appends the text of value i of v, which is not NULL.
func AppendText(dst []byte, v *Vec, i int) []byte {
	switch v.Type {
	case plan.Text:
		return append(dst, v.Text(i)...)
	case plan.Number:
		return v.Nums[i].Append(dst)
	case plan.Bool:
		if v.Bools[i] {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	}
	return dst
}

// VecBuilder builds a Vec of one type from values' text.
type VecBuilder struct {
	b        *builder
	duration bool // Read reads a duration (plan.ReadDuration)
}

// NewVecBuilder returns a builder of a Vec of type t.
func NewVecBuilder(t plan.Type, capacity int) *VecBuilder {
	return &VecBuilder{b: newBuilder(t, capacity)}
}

// NewVecBuilderIn is NewVecBuilder of the scanned column c (its Read
// reads by c's rule) building a number or boolean Vec in
// the memory of spent's values (a Vec of the same type, nil for none),
// which nothing may read any more: a batch built again and again (a
// Source's) allocates them once. A text Vec is built in memory of its own
// whatever spent is (a wire batch may alias it).
func NewVecBuilderIn(c plan.Column, capacity int, spent *Vec) *VecBuilder {
	return &VecBuilder{newBuilderIn(c.Type, capacity, spent), c.Read == plan.ReadDuration}
}

// Reserve makes room for n more bytes of text values, so that a text
// Vec whose size is known about does not grow value by value.
func (b *VecBuilder) Reserve(n int) { b.b.v.Data = slices.Grow(b.b.v.Data, n) }

// Read appends field f of a table as a scan reads it (ReadAs): text as
// it is; else NULL when f is empty or not a value of the builder's type,
// counted in st.
func (b *VecBuilder) Read(f []byte, st *ColumnStats) { b.b.read(f, b.duration, st) }

// Null appends a NULL.
func (b *VecBuilder) Null() { b.b.null() }

// Text appends the value whose text (AppendText's) is t; an error when t
// is not a value of the type.
func (b *VecBuilder) Text(t []byte) error {
	switch b.b.v.Type {
	case plan.Text:
		b.b.text(t)
	case plan.Number:
		d, ok := value.ReadStored(t)
		if !ok {
			return fmt.Errorf("%q is not a number", t)
		}
		b.b.num(d)
	case plan.Bool:
		switch string(t) {
		case "true", "false":
			b.b.boolean(string(t) == "true")
		default:
			return fmt.Errorf("%q is not a boolean", t)
		}
	default:
		return fmt.Errorf("a value of type %q", b.b.v.Type)
	}
	return nil
}

// Vec returns the Vec built.
func (b *VecBuilder) Vec() *Vec { return b.b.v }

// errState is a snapshot that cannot be read.
var errState = errors.New("operator state is corrupt")

// stateWriter is snapcodec's Writer with the values of vectors.
type stateWriter struct{ snapcodec.Writer }

// value writes value i of v: 0 for NULL, else 1 and the value: text as
// its bytes, a number as dec writes it, a boolean as a byte 0 or 1.
func (w *stateWriter) value(v *Vec, i int) {
	if v.IsNull(i) {
		w.Uvarint(0)
		return
	}
	w.Uvarint(1)
	switch v.Type {
	case plan.Text:
		w.Bytes(v.Text(i))
	case plan.Number:
		w.dec(v.Nums[i])
	case plan.Bool:
		w.Bool(v.Bools[i])
	}
}

// dec writes a number exactly, scale included: its scale times two (plus
// one for a wide number), then its unscaled value as a varint, or the
// decimal text of a wide number (one whose unscaled value does not fit
// an int64).
func (w *stateWriter) dec(d value.Dec) {
	u, scale, ok := d.Unscaled()
	if !ok {
		w.Uvarint(uint64(scale)<<1 | 1)
		w.Bytes(d.Append(nil))
		return
	}
	w.Uvarint(uint64(scale) << 1)
	w.Varint(u)
}

// stateReader reads what a stateWriter wrote; the first error sticks.
type stateReader struct{ snapcodec.Reader }

// newStateReader reads state, failing with errState.
func newStateReader(state []byte) *stateReader {
	return &stateReader{snapcodec.Reader{B: state, Corrupt: errState}}
}

// value appends the value value() wrote to b.
func (r *stateReader) value(b *builder) {
	switch r.Uvarint() {
	case 0:
		b.null()
	case 1:
		switch b.v.Type {
		case plan.Text:
			b.text(r.Bytes())
		case plan.Number:
			b.num(r.dec())
		case plan.Bool:
			b.boolean(r.Bool())
		default:
			r.Fail(nil)
		}
	default:
		r.Fail(nil)
	}
}

// dec reads what stateWriter.dec wrote. A wide number that fits an int64
// is not what dec writes, and is refused: a restored state writes the
// same bytes again.
func (r *stateReader) dec() value.Dec {
	h := r.Uvarint()
	if h>>1 > math.MaxInt32 {
		r.Fail(nil)
		return value.Dec{}
	}
	scale := int32(h >> 1)
	if h&1 == 0 {
		return value.FromUnscaled(r.Varint(), scale)
	}
	d, ok := value.ReadStored(r.Bytes())
	if _, _, fits := d.Unscaled(); !ok || fits || d.Scale() != scale {
		r.Fail(nil)
	}
	return d
}

// AppendState appends the set's keys to dst in the order they were
// added (their ids): the same keys added in the same order, the same
// bytes, whatever the slots of the table it shares (other operators'
// keys in it); RestoreState adds them again in that order.
func (s *KeySet) AppendState(dst []byte) []byte {
	w := stateWriter{snapcodec.Writer{B: slices.Grow(dst, s.StateSize())}}
	w.Uvarint(uint64(len(s.order)))
	for _, sl := range s.order {
		w.Bytes(s.t.key(sl))
	}
	return w.B
}

// StateSize is about the bytes AppendState appends, to make room for
// them at once: the state of many keys is not grown piece by piece.
func (s *KeySet) StateSize() int {
	return len(s.order) * (2 + s.t.meanKey())
}

// RestoreState reads what AppendState wrote into an empty set.
func (s *KeySet) RestoreState(state []byte) error {
	r := newStateReader(state)
	n := r.Count(1)
	s.t.reserve(n)
	s.order = slices.Grow(s.order, n)
	for range n {
		if !s.add(s.t.slot(r.Bytes())) {
			r.Fail(fmt.Errorf("%w: a key twice", errState))
		}
	}
	return r.End()
}

// StateSize is about the bytes AppendState appends.
func (d *Distinct) StateSize() int { return d.set.StateSize() }

// AppendState appends the distinct rows seen (their keys) to dst.
func (d *Distinct) AppendState(dst []byte) []byte { return d.set.AppendState(dst) }

// RestoreState reads what AppendState wrote into an empty Distinct.
func (d *Distinct) RestoreState(state []byte) error { return d.set.RestoreState(state) }

// AppendState appends the groups and every aggregate's value per group
// to dst.
func (a *Aggregation) AppendState(dst []byte) []byte {
	w := stateWriter{snapcodec.Writer{B: slices.Grow(dst, a.StateSize())}}
	n := int(a.g.n)
	w.Uvarint(uint64(n))
	for c := range a.g.keys {
		// A key held in the table is written as a key column is, made
		// a chunk at a time.
		for from := 0; from < n; from += chunkRows {
			to := min(from+chunkRows, n)
			v := a.g.keyRange(c, from, to)
			for i := range to - from {
				w.value(v, i)
			}
		}
	}
	for _, ac := range a.accs {
		ac.grow(n)
		for g := range n {
			w.Varint(ac.countOf(g))
			if !ac.hasOf(g) {
				w.Uvarint(0)
				continue
			}
			w.Uvarint(1)
			w.dec(ac.sumOf(g)) // zero without sums
			for _, s := range ac.sums[min(1, len(ac.sums)):] {
				w.dec(s.get(int32(g)))
			}
			ac.writeBest(&w, g)
		}
	}
	return w.B
}

// StateSize is about the bytes AppendState appends, to make room for
// them at once: the state of 1.5M groups is not grown piece by piece.
// A group's keys cost their bytes, and each aggregate of it its count, a
// flag, and a number (scale and unscaled value) or two at most, which
// are mostly small.
func (a *Aggregation) StateSize() int {
	n := int(a.g.n)
	size := n * 8 * len(a.accs)
	for _, k := range a.g.keys {
		size += len(k.v.Data) + n*4
	}
	if a.g.inTable {
		size += n * a.g.v.t.meanKey()
	}
	return size
}

// RestoreState reads what AppendState wrote into an empty Aggregation of
// the same keys and aggregates. Every slice of n groups is made at its
// size at once, from the count the state starts with: grown by doubling
// as values come, a restore of 1.5M groups cleared and copied each some
// twenty times.
func (a *Aggregation) RestoreState(state []byte) error {
	r := newStateReader(state)
	n := r.Count(1)
	for _, k := range a.g.keys {
		k.reserve(n)
		for range n {
			r.value(k)
		}
	}
	if r.Err != nil {
		return r.Err
	}
	keys := make([]*Vec, len(a.g.keys))
	for c, k := range a.g.keys {
		keys[c] = k.v
	}
	a.g.v.t.reserve(n)
	sls := a.g.v.t.Slots(keys, n, nil, nil)
	for i, sl := range sls {
		if a.g.v.get(sl) >= 0 {
			return fmt.Errorf("%w: a group twice", errState)
		}
		a.g.v.set(sl, int32(i))
	}
	if a.g.inTable { // the keys' text is the table's now
		a.g.keySlots = slices.Clone(sls[:n])
		a.g.keys[0] = newBuilder(plan.Text, 0)
	}
	a.g.n = int32(n)
	for _, ac := range a.accs {
		ac.grow(n)
		u := ac.u
		if u.best && ac.best == nil {
			ac.best = newBuilder(ac.agg.Arg.Type, n).v // a value per group at most
		}
		for g := range n {
			if c := r.Varint(); u.count {
				ac.count.set(g, c)
			} else if c != 0 {
				r.Fail(nil)
			}
			if r.Uvarint() == 0 {
				continue
			}
			if !u.has {
				r.Fail(nil)
				break
			}
			ac.has[g] = true
			d := r.dec()
			for i := range ac.sums {
				if i > 0 {
					d = r.dec()
				}
				ac.sums[i].set(int32(g), d)
			}
			ac.readBest(r, g)
		}
	}
	return r.End()
}

// reserve makes room for n more values (not for a text's bytes, which
// the count does not tell): of the values, and of their NULL flags once
// there are some.
func (b *builder) reserve(n int) {
	v := b.v
	switch v.Type {
	case plan.Text:
		v.Ends = slices.Grow(v.Ends, n)
	case plan.Number:
		v.Nums = slices.Grow(v.Nums, n)
	case plan.Bool:
		v.Bools = slices.Grow(v.Bools, n)
	}
	if v.Null != nil {
		v.Null = slices.Grow(v.Null, n)
	}
}

// writeBest writes group g's minimum or maximum as stateWriter.value
// does (a number as dec writes it), or 0 when the function keeps none.
func (a *acc) writeBest(w *stateWriter, g int) {
	switch {
	case a.nums.used():
		w.Uvarint(1)
		w.dec(a.nums.get(int32(g)))
	case a.bestN != nil && a.bestN[g] >= 0:
		w.value(a.best, int(a.bestN[g]))
	default:
		w.Uvarint(0)
	}
}

// readBest reads what writeBest wrote for group g, which has a value.
func (a *acc) readBest(r *stateReader, g int) {
	u := a.u
	switch {
	case u.nums:
		if r.Uvarint() != 1 {
			r.Fail(nil)
			return
		}
		a.nums.set(int32(g), r.dec())
	case u.best:
		if a.best == nil {
			a.best = newBuilder(a.agg.Arg.Type, 0).v
		}
		r.value(&builder{v: a.best})
		a.bestN[g] = int32(a.best.N - 1)
	default:
		if r.Uvarint() != 0 {
			r.Fail(nil)
		}
	}
}

// AppendState appends the table's keys to dst in slot order;
// RestoreState adds them again in that order into an empty table, so
// that every key has its slot again (an operator indexing its state by
// slot, services/dataflow/sql/incr's, keeps its indices).
func (t *KeyTable) AppendState(dst []byte) []byte {
	w := snapcodec.Writer{B: slices.Grow(dst, int(t.arena.end)+2*len(t.ends))}
	w.Uvarint(uint64(len(t.ends)))
	for s := range int32(len(t.ends)) {
		w.Bytes(t.key(s))
	}
	return w.B
}

// RestoreState reads what AppendState wrote into an empty table.
func (t *KeyTable) RestoreState(state []byte) error {
	r := newStateReader(state)
	n := r.Count(1)
	t.reserve(n)
	for s := range n {
		if t.slot(r.Bytes()) != int32(s) && r.Err == nil {
			r.Fail(fmt.Errorf("%w: a key twice", errState))
		}
	}
	return r.End()
}

// AppendRowsState appends the rows of b to dst, values in binary (as an
// Aggregation's state writes them): its row count, then column by
// column.
func AppendRowsState(dst []byte, b *Batch) []byte {
	w := stateWriter{snapcodec.Writer{B: dst}}
	w.Uvarint(uint64(b.N))
	for _, v := range b.Cols {
		for i := range b.N {
			w.value(v, i)
		}
	}
	return w.B
}

// RestoreRowsState reads what AppendRowsState wrote of rows of cols.
func RestoreRowsState(state []byte, cols []plan.Column) (*Batch, error) {
	r := newStateReader(state)
	n := r.Count(len(cols))
	b := &Batch{N: n}
	for _, c := range cols {
		bl := newBuilder(c.Type, n)
		for range n {
			if r.Err != nil {
				break
			}
			r.value(bl)
		}
		b.Cols = append(b.Cols, bl.v)
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	return b, nil
}
