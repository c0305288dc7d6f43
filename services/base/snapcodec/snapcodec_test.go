package snapcodec

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	w := &Writer{}
	w.Uvarint(math.MaxUint64)
	w.Varint(math.MinInt64)
	w.Bytes([]byte("token"))
	w.Byte(7)
	w.Bool(true)
	w.Bool(false)
	w.Uvarint(2) // a count of two one-byte items
	w.Byte(1)
	w.Byte(2)
	r := &Reader{B: w.B}
	if u, v, b, c, t1, f := r.Uvarint(), r.Varint(), string(r.Bytes()), r.Byte(), r.Bool(), r.Bool(); u != math.MaxUint64 || v != math.MinInt64 || b != "token" || c != 7 || !t1 || f {
		t.Fatalf("read back %v %v %q %v %v %v", u, v, b, c, t1, f)
	}
	if n := r.Count(1); n != 2 || r.Byte() != 1 || r.Byte() != 2 {
		t.Fatalf("count %d", n)
	}
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
}

// TestVarintsOfEveryLength: every value around the one-byte varints
// (which Reader reads on a path of their own) and the longer ones reads
// back as written, and leaves the reader where the next value starts.
func TestVarintsOfEveryLength(t *testing.T) {
	var us []uint64
	var vs []int64
	for x := range 300 {
		us = append(us, uint64(x))
		vs = append(vs, int64(x-150))
	}
	us = append(us, 1<<14-1, 1<<14, 1<<35, math.MaxUint64)
	vs = append(vs, math.MinInt64, math.MaxInt64, -1<<20, 1<<20)
	w := &Writer{}
	for i := range us {
		w.Uvarint(us[i])
	}
	for i := range vs {
		w.Varint(vs[i])
	}
	r := &Reader{B: w.B}
	for _, u := range us {
		if got := r.Uvarint(); got != u {
			t.Fatalf("Uvarint %d read back as %d", u, got)
		}
	}
	for _, v := range vs {
		if got := r.Varint(); got != v {
			t.Fatalf("Varint %d read back as %d", v, got)
		}
	}
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
}

// A corrupt snapshot sets the first error, which sticks; reads after it
// return zero values; a count the rest cannot hold is refused.
func TestCorruptReadsStick(t *testing.T) {
	mine := errors.New("bad state")
	for name, c := range map[string]struct {
		b    []byte
		read func(r *Reader)
	}{
		"truncated varint": {[]byte{0x80}, func(r *Reader) { r.Uvarint() }},
		"truncated bytes":  {[]byte{5, 'a'}, func(r *Reader) { r.Bytes() }},
		"huge count":       {[]byte{0xff, 0xff, 0x03, 1, 2}, func(r *Reader) { r.Count(1) }},
		"count of wide":    {[]byte{2, 1, 2, 3}, func(r *Reader) { r.Count(2) }},
		"empty byte":       {nil, func(r *Reader) { r.Byte() }},
		"bool not 0 or 1":  {[]byte{2}, func(r *Reader) { r.Bool() }},
	} {
		r := &Reader{B: c.b, Corrupt: mine}
		c.read(r)
		if !errors.Is(r.Err, mine) {
			t.Errorf("%s: error %v, want %v", name, r.Err, mine)
		}
		if r.Uvarint() != 0 || r.Bytes() != nil || r.Byte() != 0 || !errors.Is(r.End(), mine) {
			t.Errorf("%s: reads after the error are not zero", name)
		}
	}
	r := &Reader{B: []byte{1, 2}}
	r.Byte()
	if err := r.End(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a byte left: %v, want ErrCorrupt", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte{3, 'a', 'b', 'c', 1, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := &Reader{B: b}
		for r.Err == nil && len(r.B) > 0 {
			switch r.Byte() % 5 {
			case 0:
				r.Uvarint()
			case 1:
				r.Varint()
			case 2:
				r.Bytes()
			case 3:
				if n := r.Count(3); n*3 > len(b) {
					t.Fatalf("count %d of 3-byte items from %d bytes", n, len(b))
				}
			case 4:
				r.Bool()
			}
		}
		r.End()
	})
}

// TestAppendBytesIsBytes writes states of every length of a length's
// varint in place and checks each is what Bytes writes of a copy.
func TestAppendBytesIsBytes(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, 16383, 16384, 1 << 21} {
		for _, prefix := range []int{0, 3} {
			state := make([]byte, n)
			for i := range state {
				state[i] = byte(i * 7)
			}
			want := Writer{B: make([]byte, prefix)}
			want.Bytes(state)
			want.Byte(9)
			got := Writer{B: make([]byte, prefix)}
			got.AppendState(func(dst []byte) []byte { return append(dst, state...) })
			got.Byte(9)
			if !bytes.Equal(got.B, want.B) {
				t.Fatalf("a state of %d bytes after %d: AppendState wrote %d bytes, Bytes %d, not the same", n, prefix, len(got.B), len(want.B))
			}
		}
	}
	w := Writer{B: []byte{1, 2}}
	boom := errors.New("boom")
	if err := w.AppendBytes(func(dst []byte) ([]byte, error) { return append(dst, 5, 6), boom }); err != boom || !bytes.Equal(w.B, []byte{1, 2}) {
		t.Fatalf("a failed append: error %v, B %v; want boom and B as it was", err, w.B)
	}
}
