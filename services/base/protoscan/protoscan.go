// Package protoscan reads a protobuf message field by field, in the one
// form proto.Marshal writes for this module's messages: fields in
// ascending number, only the one repeated field a caller names coming
// again, each a varint or length-delimited. A length-delimited field is
// handed out as a sub-slice of the message's bytes, not a copy: that is
// what it is for, where copying is the cost (a shard's exchange rows,
// sqlops' wire codec; the state log a restarted stage replays, stage).
//
// A Reader that meets any other form (fields out of order, a field
// repeated that may not be, another wire type, bytes cut short) stops and
// says so (OK false). Its callers then read the message the long way,
// with proto.Unmarshal, so nothing protobuf reads is refused; each
// caller's fuzz test holds the two ways equal where both read.
//
// It knows nothing of what the messages are; field numbers come from the
// messages' own descriptors (FieldOf), never written down again.
package protoscan

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Reader reads a message's fields in order (Next).
type Reader struct {
	b      []byte
	repeat protowire.Number // the field that may come again
	last   protowire.Number
	ok     bool
}

// Field is a field read: its number and wire type, and its bytes
// (length-delimited, a sub-slice of the message) or its value (varint).
type Field struct {
	Num   protowire.Number
	Type  protowire.Type
	Bytes []byte
	Value uint64
}

// New reads the message b, in which field repeat (0: none) may come more
// than once.
func New(b []byte, repeat protowire.Number) *Reader {
	return &Reader{b: b, repeat: repeat, ok: true}
}

// Next reads the next field; false at the end of the message, or (OK
// false) at a field out of order, of another wire type or cut short.
func (r *Reader) Next() (Field, bool) {
	if len(r.b) == 0 || !r.ok {
		return Field{}, false
	}
	r.ok = false
	num, typ, n := protowire.ConsumeTag(r.b)
	if n < 0 || num < 1 || num < r.last || (num == r.last && num != r.repeat) {
		return Field{}, false
	}
	f := Field{Num: num, Type: typ}
	var k int
	switch typ {
	case protowire.VarintType:
		f.Value, k = protowire.ConsumeVarint(r.b[n:])
	case protowire.BytesType:
		f.Bytes, k = protowire.ConsumeBytes(r.b[n:])
	default:
		return Field{}, false
	}
	if k < 0 {
		return Field{}, false
	}
	r.b, r.last, r.ok = r.b[n+k:], num, true
	return f, true
}

// OK reports whether every field so far read; false once Next stopped on
// one that did not.
func (r *Reader) OK() bool { return r.ok }

// End reports whether every field read and none is left: a message of
// the fields read so far and no others.
func (r *Reader) End() bool { return r.ok && len(r.b) == 0 }

// IsBytes reports whether f is field num, length-delimited.
func (f Field) IsBytes(num protowire.Number) bool {
	return f.Num == num && f.Type == protowire.BytesType
}

// IsVarint reports whether f is field num, a varint.
func (f Field) IsVarint(num protowire.Number) bool {
	return f.Num == num && f.Type == protowire.VarintType
}

// FieldOf is the number of m's field name, from m's descriptor; a name m
// does not have panics (callers call it as their package loads).
func FieldOf(m proto.Message, name protoreflect.Name) protowire.Number {
	f := m.ProtoReflect().Descriptor().Fields().ByName(name)
	if f == nil {
		panic(fmt.Sprintf("protoscan: %s has no field %s", m.ProtoReflect().Descriptor().FullName(), name))
	}
	return f.Number()
}
