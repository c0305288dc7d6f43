package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

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

type stateWriter struct{ b []byte }

func (w *stateWriter) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *stateWriter) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *stateWriter) bytes(p []byte)   { w.uvarint(uint64(len(p))); w.b = append(w.b, p...) }

// value writes value i of v: 0 for NULL, else 1 and its text.
func (w *stateWriter) value(v *Vec, i int) {
	if v.IsNull(i) {
		w.uvarint(0)
		return
	}
	w.uvarint(1)
	mark := len(w.b)
	w.b = AppendText(w.b, v, i)
	text := append([]byte(nil), w.b[mark:]...)
	w.b = w.b[:mark]
	w.bytes(text)
}

// stateReader reads what a stateWriter wrote; the first error sticks.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *stateReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(errState)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *stateReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(errState)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items of at least one byte each, refusing one
// the rest cannot hold (a corrupt count allocates nothing large).
func (r *stateReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail(errState)
		return 0
	}
	return int(n)
}

func (r *stateReader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail(errState)
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

// value appends the value value() wrote to b.
func (r *stateReader) value(b *builder) {
	switch r.uvarint() {
	case 0:
		b.null()
	case 1:
		if err := (&VecBuilder{b}).Text(r.bytes()); err != nil {
			r.fail(fmt.Errorf("%w: %v", errState, err))
		}
	default:
		r.fail(errState)
	}
}

func (r *stateReader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail(fmt.Errorf("%w: %d bytes after the end", errState, len(r.b)))
	}
	return r.err
}

// AppendState appends the set's keys to dst, sorted: the same set, the
// same bytes, whatever the slots of the table it shares.
func (s *KeySet) AppendState(dst []byte) []byte {
	var keys []string
	for sl, id := range s.v.local {
		if id >= 0 {
			keys = append(keys, s.v.t.keys[sl])
		}
	}
	slices.Sort(keys)
	w := stateWriter{dst}
	w.uvarint(uint64(len(keys)))
	for _, k := range keys {
		w.bytes([]byte(k))
	}
	return w.b
}

// RestoreState reads what AppendState wrote into an empty set.
func (s *KeySet) RestoreState(state []byte) error {
	r := stateReader{b: state}
	for range r.count() {
		sl := s.v.t.slot(r.bytes())
		if s.v.get(sl) >= 0 {
			r.fail(fmt.Errorf("%w: a key twice", errState))
		}
		s.v.set(sl, s.n)
		s.n++
	}
	return r.done()
}

// AppendState appends the distinct rows seen (their keys) to dst.
func (d *Distinct) AppendState(dst []byte) []byte { return d.set.AppendState(dst) }

// RestoreState reads what AppendState wrote into an empty Distinct.
func (d *Distinct) RestoreState(state []byte) error { return d.set.RestoreState(state) }

// AppendState appends the groups and every aggregate's value per group
// to dst.
func (a *Aggregation) AppendState(dst []byte) []byte {
	w := stateWriter{dst}
	n := int(a.g.n)
	w.uvarint(uint64(n))
	for _, k := range a.g.keys {
		for i := range n {
			w.value(k.v, i)
		}
	}
	for _, ac := range a.accs {
		ac.grow(n)
		for g := range n {
			w.varint(ac.count[g])
			if !ac.has[g] {
				w.uvarint(0)
				continue
			}
			w.uvarint(1)
			w.bytes(ac.sum[g].Append(nil))
			if ac.bestN[g] >= 0 {
				w.value(ac.best, ac.bestN[g])
			} else {
				w.uvarint(0)
			}
		}
	}
	return w.b
}

// RestoreState reads what AppendState wrote into an empty Aggregation of
// the same keys and aggregates.
func (a *Aggregation) RestoreState(state []byte) error {
	r := stateReader{b: state}
	n := r.count()
	for _, k := range a.g.keys {
		for range n {
			r.value(k)
		}
	}
	if r.err != nil {
		return r.err
	}
	keys := make([]*Vec, len(a.g.keys))
	for c, k := range a.g.keys {
		keys[c] = k.v
	}
	for i := range n {
		a.g.key = rowKey(a.g.key[:0], keys, i)
		sl := a.g.v.t.slot(a.g.key)
		if a.g.v.get(sl) >= 0 {
			return fmt.Errorf("%w: a group twice", errState)
		}
		a.g.v.set(sl, int32(i))
	}
	a.g.n = int32(n)
	for _, ac := range a.accs {
		ac.grow(n)
		for g := range n {
			ac.count[g] = r.varint()
			if r.uvarint() == 0 {
				continue
			}
			ac.has[g] = true
			d, ok := value.ReadNumber(r.bytes())
			if !ok {
				r.fail(errState)
			}
			ac.sum[g] = d
			if ac.agg.Func != plan.Min && ac.agg.Func != plan.Max {
				if r.uvarint() != 0 {
					r.fail(errState)
				}
				continue
			}
			if ac.best == nil {
				ac.best = newBuilder(valueType(ac.agg.Arg.Type), 0).v
			}
			r.value(&builder{v: ac.best})
			ac.bestN[g] = ac.best.N - 1
		}
	}
	return r.done()
}
