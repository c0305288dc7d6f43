package protoscan

import (
	"testing"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/structpb"
)

func message(fields ...func([]byte) []byte) []byte {
	var b []byte
	for _, f := range fields {
		b = f(b)
	}
	return b
}

func bytesField(n protowire.Number, v string) func([]byte) []byte {
	return func(b []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(b, n, protowire.BytesType), []byte(v))
	}
}

func varintField(n protowire.Number, v uint64) func([]byte) []byte {
	return func(b []byte) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), v)
	}
}

// TestReader: the fields of the one form, in order, with their bytes in
// the message's; any other form stops the reader, not OK.
func TestReader(t *testing.T) {
	for _, c := range []struct {
		name   string
		msg    []byte
		repeat protowire.Number
		fields int  // read before it stops
		ok     bool // OK after
	}{
		{"empty", nil, 0, 0, true},
		{"in order", message(varintField(1, 7), bytesField(2, "ab"), varintField(5, 1<<40)), 0, 3, true},
		{"the repeated field again", message(bytesField(1, "a"), bytesField(1, "b"), varintField(2, 3)), 1, 3, true},
		{"another field again", message(varintField(1, 1), varintField(1, 2)), 2, 1, false},
		{"out of order", message(varintField(2, 1), varintField(1, 2)), 0, 1, false},
		{"a fixed64", protowire.AppendFixed64(protowire.AppendTag(nil, 1, protowire.Fixed64Type), 9), 0, 0, false},
		{"bytes cut short", message(bytesField(1, "abc"))[:3], 0, 0, false},
		{"a varint cut short", []byte{1 << 3, 0x80}, 0, 0, false},
		{"field number 0", []byte{0, 1}, 0, 0, false},
	} {
		r := New(c.msg, c.repeat)
		n := 0
		for f, more := r.Next(); more; f, more = r.Next() {
			n++
			if f.Type == protowire.BytesType && len(f.Bytes) > 0 {
				p, lo := uintptr(unsafe.Pointer(&f.Bytes[0])), uintptr(unsafe.Pointer(&c.msg[0]))
				if p < lo || p >= lo+uintptr(len(c.msg)) {
					t.Errorf("%s: field %d copied, not read in place", c.name, f.Num)
				}
			}
		}
		if n != c.fields || r.OK() != c.ok || r.End() != c.ok {
			t.Errorf("%s: %d fields read, OK %v, End %v; want %d, %v", c.name, n, r.OK(), r.End(), c.fields, c.ok)
		}
	}
}

func TestIsBytesIsVarint(t *testing.T) {
	b := Field{Num: 3, Type: protowire.BytesType}
	v := Field{Num: 3, Type: protowire.VarintType}
	if !b.IsBytes(3) || b.IsBytes(4) || b.IsVarint(3) || !v.IsVarint(3) || v.IsBytes(3) {
		t.Fatal("IsBytes and IsVarint do not tell the field")
	}
}

func TestFieldOf(t *testing.T) {
	if n := FieldOf(&structpb.Value{}, "string_value"); n != 3 {
		t.Fatalf("google.protobuf.Value.string_value is field %d, want 3", n)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a field the message does not have did not panic")
		}
	}()
	FieldOf(&structpb.Value{}, "no_such_field")
}
