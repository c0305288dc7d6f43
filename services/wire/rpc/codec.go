package rpc

import (
	"fmt"
	"math/bits"
	"sync"

	"google.golang.org/grpc/encoding"
	// gRPC's codec registers first, so that init below replaces it.
	_ "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// protoCodec is gRPC's protobuf codec with one change: the buffers it
// marshals into and gathers a received message in are taken from a pool
// that does not zero them (dirtyPool). gRPC's default pool clears every
// buffer it hands out, whole: a batch of 300 KiB marshalled into its
// 1 MiB tier cleared 1 MiB, which was 3% of the gateway's CPU at full
// scale. Zeroing is not needed here: Marshal writes every byte of the
// message before it is sent, and a received message is copied into the
// buffer before proto.Unmarshal reads it (which copies what it keeps).
//
// Registered under gRPC's own name for it ("proto"), it replaces gRPC's
// default codec in every process that links this package: the bytes on
// the wire are the same. The same pool is every connection's and every
// server's (DialOptions, ServerOptions), for the frames gRPC reads a
// message's bytes into (each read whole from the socket before use).
type protoCodec struct{}

func init() { encoding.RegisterCodecV2(protoCodec{}) }

func (protoCodec) Name() string { return "proto" }

func (protoCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("proto: cannot marshal %T, not a proto.Message", v)
	}
	size := proto.Size(m)
	// UseCachedSize reuses the sizes proto.Size just computed.
	opts := proto.MarshalOptions{UseCachedSize: true}
	if mem.IsBelowBufferPoolingThreshold(size) {
		b, err := opts.Marshal(m)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	buf := dirtyPool.Get(size)
	if _, err := opts.MarshalAppend((*buf)[:0], m); err != nil {
		dirtyPool.Put(buf)
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(buf, dirtyPool)}, nil
}

func (protoCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("proto: cannot unmarshal into %T, not a proto.Message", v)
	}
	buf := data.MaterializeToBuffer(dirtyPool)
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}

// dirtyPool is a mem.BufferPool of buffers whose capacity is a power of
// two from 4 KiB to 4 MiB (MaxMessageBytes), handed out as they were put
// back: not zeroed. A larger buffer is allocated and dropped.
var dirtyPool = newPowerPool(12, 22)

type powerPool struct {
	min, max int // log2 of the smallest and the largest tier
	tiers    []sync.Pool
}

func newPowerPool(min, max int) *powerPool {
	return &powerPool{min: min, max: max, tiers: make([]sync.Pool, max-min+1)}
}

// tier is the log2 of the smallest power of two of at least size bytes.
func tier(size int) int {
	if size <= 1 {
		return 0
	}
	return bits.Len(uint(size - 1))
}

func (p *powerPool) Get(size int) *[]byte {
	t := max(tier(size), p.min)
	if t > p.max {
		b := make([]byte, size)
		return &b
	}
	if b, ok := p.tiers[t-p.min].Get().(*[]byte); ok {
		*b = (*b)[:size]
		return b
	}
	b := make([]byte, size, 1<<t)
	return &b
}

// Put takes back a buffer Get returned: one of a tier's capacity exactly
// (a buffer of any other capacity is left to the collector).
func (p *powerPool) Put(b *[]byte) {
	c := cap(*b)
	t := tier(c)
	if c != 1<<t || t < p.min || t > p.max {
		return
	}
	p.tiers[t-p.min].Put(b)
}
