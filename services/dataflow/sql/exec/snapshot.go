package exec

import (
	"errors"
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// The state of the incremental operators as bytes, and values as text:
// what the physical plan's operators write into their snapshots and onto
// the wire (services/dataflow/sql/sqlops). A value's text is the form the
// value rules read back as the same value: text as its bytes, a number
// in decimal with its scale, a boolean as true or false.

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
type VecBuilder struct{ b *builder }

// NewVecBuilder returns a builder of a Vec of type t (a duration is a
// number of seconds).
func NewVecBuilder(t plan.Type, capacity int) *VecBuilder {
	return &VecBuilder{newBuilder(valueType(t), capacity)}
}

// Null appends a NULL.
func (b *VecBuilder) Null() { b.b.null() }

// Text appends the value whose text (AppendText's) is t; an error when t
// is not a value of the type.
func (b *VecBuilder) Text(t []byte) error {
	switch b.b.v.Type {
	case plan.Text:
		b.b.text(t)
	case plan.Number:
		d, ok := value.ReadNumber(t)
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

// value writes value i of v: 0 for NULL, else 1 and its text.
func (w *stateWriter) value(v *Vec, i int) {
	if v.IsNull(i) {
		w.Uvarint(0)
		return
	}
	w.Uvarint(1)
	mark := len(w.B)
	w.B = AppendText(w.B, v, i)
	text := append([]byte(nil), w.B[mark:]...)
	w.B = w.B[:mark]
	w.Bytes(text)
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
		if err := (&VecBuilder{b}).Text(r.Bytes()); err != nil {
			r.Fail(fmt.Errorf("%w: %v", errState, err))
		}
	default:
		r.Fail(nil)
	}
}

// AppendState appends the set's keys to dst, sorted: the same set, the
// same bytes, whatever the slots of the table it shares.
func (s *KeySet) AppendState(dst []byte) []byte {
	var keys []string
	for sl, id := range s.v.local {
		if id >= 0 {
			keys = append(keys, string(s.v.t.key(int32(sl))))
		}
	}
	slices.Sort(keys)
	w := stateWriter{snapcodec.Writer{B: dst}}
	w.Uvarint(uint64(len(keys)))
	for _, k := range keys {
		w.Bytes([]byte(k))
	}
	return w.B
}

// RestoreState reads what AppendState wrote into an empty set.
func (s *KeySet) RestoreState(state []byte) error {
	r := newStateReader(state)
	for range r.Count(1) {
		sl := s.v.t.slot(r.Bytes())
		if s.v.get(sl) >= 0 {
			r.Fail(fmt.Errorf("%w: a key twice", errState))
		}
		s.v.set(sl, s.n)
		s.n++
	}
	return r.End()
}

// AppendState appends the distinct rows seen (their keys) to dst.
func (d *Distinct) AppendState(dst []byte) []byte { return d.set.AppendState(dst) }

// RestoreState reads what AppendState wrote into an empty Distinct.
func (d *Distinct) RestoreState(state []byte) error { return d.set.RestoreState(state) }

// AppendState appends the groups and every aggregate's value per group
// to dst.
func (a *Aggregation) AppendState(dst []byte) []byte {
	w := stateWriter{snapcodec.Writer{B: dst}}
	n := int(a.g.n)
	w.Uvarint(uint64(n))
	for _, k := range a.g.keys {
		for i := range n {
			w.value(k.v, i)
		}
	}
	var sum []byte // a sum's text, written again for every group
	for _, ac := range a.accs {
		ac.grow(n)
		for g := range n {
			w.Varint(ac.countOf(g))
			if !ac.hasOf(g) {
				w.Uvarint(0)
				continue
			}
			w.Uvarint(1)
			sum = ac.sumOf(g).Append(sum[:0])
			w.Bytes(sum)
			sum = ac.writeBest(&w, g, sum)
		}
	}
	return w.B
}

// RestoreState reads what AppendState wrote into an empty Aggregation of
// the same keys and aggregates.
func (a *Aggregation) RestoreState(state []byte) error {
	r := newStateReader(state)
	n := r.Count(1)
	for _, k := range a.g.keys {
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
	for i, sl := range a.g.v.t.Slots(keys, n, nil, nil) {
		if a.g.v.get(sl) >= 0 {
			return fmt.Errorf("%w: a group twice", errState)
		}
		a.g.v.set(sl, int32(i))
	}
	a.g.n = int32(n)
	for _, ac := range a.accs {
		ac.grow(n)
		u := ac.uses()
		for g := range n {
			if c := r.Varint(); u.count {
				ac.count[g] = c
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
			d, ok := value.ReadNumber(r.Bytes())
			if !ok {
				r.Fail(nil)
			}
			if u.sum {
				ac.sum[g] = d
			}
			ac.readBest(r, g)
		}
	}
	return r.End()
}

// writeBest writes group g's minimum or maximum as stateWriter.value
// does (a number as its text, made in scratch, which it returns), or 0
// when the function keeps none.
func (a *acc) writeBest(w *stateWriter, g int, scratch []byte) []byte {
	switch {
	case a.numS != nil:
		w.Uvarint(1)
		scratch = a.num(int32(g)).Append(scratch[:0])
		w.Bytes(scratch)
	case a.bestN != nil && a.bestN[g] >= 0:
		w.value(a.best, int(a.bestN[g]))
	default:
		w.Uvarint(0)
	}
	return scratch
}

// readBest reads what writeBest wrote for group g, which has a value.
func (a *acc) readBest(r *stateReader, g int) {
	u := a.uses()
	switch {
	case u.nums:
		if r.Uvarint() != 1 {
			r.Fail(nil)
			return
		}
		d, ok := value.ReadNumber(r.Bytes())
		if !ok {
			r.Fail(nil)
		}
		a.setNum(int32(g), d)
	case u.best:
		if a.best == nil {
			a.best = newBuilder(valueType(a.agg.Arg.Type), 0).v
		}
		r.value(&builder{v: a.best})
		a.bestN[g] = int32(a.best.N - 1)
	default:
		if r.Uvarint() != 0 {
			r.Fail(nil)
		}
	}
}
