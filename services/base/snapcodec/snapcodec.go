// Package snapcodec is the one encoding of the operators' snapshots (the
// SQL engine's state and its physical operators'): unsigned and signed varints, length-prefixed bytes, bytes
// and flags, appended to a buffer; and a Reader whose first error sticks
// (every read after it returns zero values) and whose counts are bounded
// by the bytes left, so that a corrupt snapshot is refused without
// allocating anything large and never panics.
//
// It knows nothing of what a snapshot holds: each operator package
// writes and reads its own state with these pieces, versions it and
// tests its own round trip and fuzzing. It imports nothing of this
// module.
package snapcodec

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrCorrupt is what a Reader fails with when it has no error of its own
// (Reader.Corrupt).
var ErrCorrupt = errors.New("corrupt snapshot")

// Writer appends a snapshot's pieces to B.
type Writer struct{ B []byte }

// Uvarint appends v as an unsigned varint.
func (w *Writer) Uvarint(v uint64) { w.B = binary.AppendUvarint(w.B, v) }

// Varint appends v as a signed varint.
func (w *Writer) Varint(v int64) { w.B = binary.AppendVarint(w.B, v) }

// Bytes appends p's length, then p.
func (w *Writer) Bytes(p []byte) { w.Uvarint(uint64(len(p))); w.B = append(w.B, p...) }

// AppendBytes appends what f appends as Bytes would write it (its
// length, then it), in place: f appends to B after room for the length,
// which is then written in front of it, so that a state of hundreds of
// megabytes (a standing job's key tables) is neither built in a buffer
// of its own nor copied from one. On an error B is as it was.
func (w *Writer) AppendBytes(f func(dst []byte) ([]byte, error)) error {
	const room = binary.MaxVarintLen64
	start := len(w.B)
	b, err := f(append(w.B, make([]byte, room)...))
	if err != nil {
		return err // w.B is as it was: its length is start
	}
	n := len(b) - start - room
	var head [room]byte
	h := binary.AppendUvarint(head[:0], uint64(n))
	copy(b[start:], h)
	copy(b[start+len(h):], b[start+room:])
	w.B = b[:start+len(h)+n]
	return nil
}

// AppendState is AppendBytes of an append that cannot fail.
func (w *Writer) AppendState(f func(dst []byte) []byte) {
	_ = w.AppendBytes(func(dst []byte) ([]byte, error) { return f(dst), nil })
}

// Byte appends v.
func (w *Writer) Byte(v byte) { w.B = append(w.B, v) }

// Bool appends v as one byte, 1 or 0.
func (w *Writer) Bool(v bool) {
	if v {
		w.Byte(1)
	} else {
		w.Byte(0)
	}
}

// Reader reads what a Writer wrote from B.
type Reader struct {
	B []byte
	// Err is the first error; once set, every read returns zero values.
	Err error
	// Corrupt is the error a malformed read sets (ErrCorrupt if nil).
	Corrupt error
}

// Fail sets err as the Reader's error unless it has one (nil: Corrupt),
// and drops what is left.
func (r *Reader) Fail(err error) {
	if err == nil {
		err = r.corrupt()
	}
	if r.Err == nil {
		r.Err = err
	}
	r.B = nil
}

func (r *Reader) corrupt() error {
	if r.Corrupt != nil {
		return r.Corrupt
	}
	return ErrCorrupt
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	if len(r.B) > 0 && r.B[0] < 0x80 { // one byte: most of a state's
		v := uint64(r.B[0])
		r.B = r.B[1:]
		return v
	}
	v, n := binary.Uvarint(r.B)
	if n <= 0 {
		r.Fail(nil)
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Varint reads a signed varint.
func (r *Reader) Varint() int64 {
	if len(r.B) > 0 && r.B[0] < 0x80 { // one byte, zigzag: -64..63
		u := r.B[0]
		r.B = r.B[1:]
		return int64(u>>1) ^ -int64(u&1)
	}
	v, n := binary.Varint(r.B)
	if n <= 0 {
		r.Fail(nil)
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Count reads a count of items each at least min bytes long (min below 1
// counts as 1), refusing one the rest of the snapshot cannot hold.
func (r *Reader) Count(min int) int {
	n := r.Uvarint()
	if n > uint64(len(r.B)/max(min, 1)) {
		r.Fail(nil)
		return 0
	}
	return int(n)
}

// Bytes reads what Writer.Bytes wrote: a slice of B, not a copy.
func (r *Reader) Bytes() []byte {
	n := r.Uvarint()
	if n > uint64(len(r.B)) {
		r.Fail(nil)
		return nil
	}
	p := r.B[:n]
	r.B = r.B[n:]
	return p
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if len(r.B) == 0 {
		r.Fail(nil)
		return 0
	}
	v := r.B[0]
	r.B = r.B[1:]
	return v
}

// Bool reads what Writer.Bool wrote: a byte 0 or 1 (a uvarint 0 or 1 is
// the same byte); any other is corrupt.
func (r *Reader) Bool() bool {
	switch r.Byte() {
	case 0:
		return false
	case 1:
		return true
	}
	r.Fail(nil)
	return false
}

// End returns the Reader's error, or a corrupt error when bytes are left
// unread.
func (r *Reader) End() error {
	if r.Err == nil && len(r.B) != 0 {
		r.Fail(fmt.Errorf("%w: %d bytes after the end", r.corrupt(), len(r.B)))
	}
	return r.Err
}
