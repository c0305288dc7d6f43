package gateway

import (
	"encoding/binary"
	"sync"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/protoscan"
)

// UploadCodec is the codec of the gateway's public gRPC server: gRPC's
// proto codec, except for an upload's data frames, the bulk of every
// byte a job sends. gRPC's codec copies a message out of the HTTP/2
// frames it arrived in into a pooled buffer it clears first, and
// proto.Unmarshal copies the data out of that into a new slice: for a
// gigabyte uploaded, two copies, a clear and a gigabyte of allocation
// for the collector. This codec copies the data once, from the frames
// into a buffer the gateway hands back (releaseData) once it has parsed
// it. It decodes only a message that is exactly one data field; anything
// else (the start and finish frames, any other message) goes to gRPC's
// codec as it would without it.
func UploadCodec() encoding.CodecV2 {
	return uploadCodec{encoding.GetCodecV2("proto")}
}

type uploadCodec struct{ encoding.CodecV2 }

// uploadDataField is the field number of UploadRequest.data.
var uploadDataField = protoscan.FieldOf(&wololov1.UploadRequest{}, "data")

func (c uploadCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if req, ok := v.(*wololov1.UploadRequest); ok {
		if b, ok := readData(data); ok {
			req.Frame = &wololov1.UploadRequest_Data{Data: b}
			return nil
		}
	}
	return c.CodecV2.Unmarshal(data, v)
}

// readData returns the bytes of an UploadRequest that is one data field
// and nothing else, in a buffer of dataBuffers; false for any other
// message.
func readData(data mem.BufferSlice) ([]byte, bool) {
	var head [2 * binary.MaxVarintLen64]byte // the tag and the length
	n := copyFrom(data, 0, head[:])
	num, typ, t := protowire.ConsumeTag(head[:n])
	if t < 0 || num != uploadDataField || typ != protowire.BytesType {
		return nil, false
	}
	size, k := protowire.ConsumeVarint(head[t:n])
	if k < 0 || uint64(data.Len()) != uint64(t+k)+size {
		return nil, false
	}
	b := getData(int(size))
	copyFrom(data, t+k, b)
	return b, true
}

// copyFrom copies data's bytes from offset on into dst, as many as fit,
// and returns how many it copied.
func copyFrom(data mem.BufferSlice, offset int, dst []byte) int {
	n := 0
	for _, buf := range data {
		b := buf.ReadOnlyData()
		if offset >= len(b) {
			offset -= len(b)
			continue
		}
		n += copy(dst[n:], b[offset:])
		offset = 0
		if n == len(dst) {
			break
		}
	}
	return n
}

// dataBuffers holds upload data buffers the gateway has parsed, to be
// filled again. A chunk is at most the client's chunk size (1 MiB), so
// the pool holds buffers of about one size.
var dataBuffers sync.Pool

// getData returns a buffer of n bytes, reused where one is free.
func getData(n int) []byte {
	if p, ok := dataBuffers.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]byte, n)
}

// releaseData hands a data frame's buffer back once nothing refers to it
// (the ingest copies what it keeps).
func releaseData(b []byte) {
	if cap(b) > 0 {
		dataBuffers.Put(&b)
	}
}
