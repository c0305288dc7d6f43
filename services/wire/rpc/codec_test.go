package rpc

import (
	"bytes"
	"testing"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// TestCodecReplacesGRPCs: the codec gRPC uses for "proto" is this
// package's, and what it marshals into a pooled buffer that held other
// bytes is proto.Marshal's bytes, which it unmarshals back, however the
// message was cut into buffers.
func TestCodecReplacesGRPCs(t *testing.T) {
	if _, ok := encoding.GetCodecV2("proto").(protoCodec); !ok {
		t.Fatalf("gRPC's proto codec is %T, want protoCodec", encoding.GetCodecV2("proto"))
	}
	c := protoCodec{}
	for _, size := range []int{10, 5000, 300 << 10, 5 << 20} {
		// Leave garbage in the tier the message will be marshalled into.
		junk := dirtyPool.Get(size + 64)
		for i := range *junk {
			(*junk)[i] = 0xAB
		}
		dirtyPool.Put(junk)

		data := bytes.Repeat([]byte{'x', 'y', 'z'}, size/3)
		msg := &wololov1.TextColumn{Data: data, Ends: []uint32{uint32(len(data))}}
		want, err := proto.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Materialize(), want) {
			t.Fatalf("size %d: marshalled bytes differ from proto.Marshal's", size)
		}
		got.Free()
		// Received as gRPC receives it: in frames of 16 KiB.
		var frames mem.BufferSlice
		for off := 0; off < len(want); off += 16 << 10 {
			frames = append(frames, mem.SliceBuffer(want[off:min(off+16<<10, len(want))]))
		}
		var back wololov1.TextColumn
		if err := c.Unmarshal(frames, &back); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&back, msg) {
			t.Fatalf("size %d: unmarshalled message differs", size)
		}
	}
	if _, err := c.Marshal("not a message"); err == nil {
		t.Fatal("marshalled a string")
	}
}

func TestPowerPoolTiers(t *testing.T) {
	p := newPowerPool(12, 14)
	for _, tc := range []struct{ size, cap int }{{1, 4096}, {4096, 4096}, {4097, 8192}, {16384, 16384}, {16385, 16385}} {
		b := p.Get(tc.size)
		if len(*b) != tc.size || cap(*b) != tc.cap {
			t.Errorf("Get(%d): len %d cap %d, want cap %d", tc.size, len(*b), cap(*b), tc.cap)
		}
		p.Put(b)
	}
	odd := make([]byte, 5000)
	p.Put(&odd) // not a tier's capacity: dropped, not handed out
	if b := p.Get(5000); cap(*b) != 8192 {
		t.Errorf("Get(5000) after Put of a 5000-byte buffer: cap %d, want 8192", cap(*b))
	}
}
