package gateway

import (
	"bytes"
	"testing"

	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers gRPC's proto codec
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// split cuts b into buffers of the given sizes in turn, as HTTP/2 frames
// deliver a message.
func split(b []byte, sizes ...int) mem.BufferSlice {
	var s mem.BufferSlice
	for i := 0; len(b) > 0; i++ {
		n := min(len(b), max(sizes[i%len(sizes)], 1))
		s = append(s, mem.SliceBuffer(append([]byte{}, b[:n]...)))
		b = b[n:]
	}
	return s
}

// sameAsProtoCodec decodes b (cut as sizes) with UploadCodec and with
// gRPC's proto codec and fails unless both give the same message, or both
// an error.
func sameAsProtoCodec(t *testing.T, b []byte, sizes ...int) *wololov1.UploadRequest {
	t.Helper()
	var got, want wololov1.UploadRequest
	gerr := UploadCodec().Unmarshal(split(b, sizes...), &got)
	werr := encoding.GetCodecV2("proto").Unmarshal(split(b, sizes...), &want)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("UploadCodec error %v, proto codec error %v", gerr, werr)
	}
	if werr == nil && !proto.Equal(&got, &want) {
		t.Fatalf("UploadCodec read %v, proto codec %v", &got, &want)
	}
	return &got
}

// TestUploadCodecReadsWhatProtoReads: data frames of every size, cut into
// buffers of every size, read as gRPC's codec reads them; so do the other
// frames, and messages that are not one data field alone.
func TestUploadCodecReadsWhatProtoReads(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16 << 10, 1 << 20} {
		data := bytes.Repeat([]byte("0123456789,abc\n"), n/15+1)[:n]
		b, err := proto.Marshal(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: data}})
		if err != nil {
			t.Fatal(err)
		}
		for _, sizes := range [][]int{{len(b)}, {1}, {2, 3}, {16 << 10}, {5, 16 << 10}} {
			if n > 1000 && sizes[0] < 4 {
				continue // a buffer a byte: slow, and the small sizes cover it
			}
			got := sameAsProtoCodec(t, b, sizes...)
			if !bytes.Equal(got.GetData(), data) {
				t.Fatalf("%d bytes cut as %v: read %d bytes", n, sizes, len(got.GetData()))
			}
		}
	}
	start, _ := proto.Marshal(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: "j"}}})
	finish, _ := proto.Marshal(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: 42}}})
	data, _ := proto.Marshal(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: []byte("abc")}})
	for name, b := range map[string][]byte{
		"start":            start,
		"finish":           finish,
		"data then finish": append(append([]byte{}, data...), finish...),
		"data twice":       append(append([]byte{}, data...), data...),
		"data cut short":   data[:len(data)-1],
		"a length too big": {0x12, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"empty":            {},
	} {
		t.Run(name, func(t *testing.T) {
			sameAsProtoCodec(t, b, 2)
			sameAsProtoCodec(t, b, len(b)+1)
		})
	}
}

// FuzzUploadCodec: whatever the bytes and however they are cut, the
// gateway's codec reads what gRPC's proto codec reads.
func FuzzUploadCodec(f *testing.F) {
	data, _ := proto.Marshal(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: []byte("token,match\nA,B\n")}})
	f.Add(data, 3)
	f.Add([]byte{0x12, 0x80}, 1)
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		sameAsProtoCodec(t, b, cut%64+1, 7)
	})
}
