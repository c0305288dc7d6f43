package client

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// TestUploadCodecIsProtobufs: every upload frame marshals to
// proto.Marshal's bytes, and a data frame's chunk is sent from its own
// buffer, not a copy.
func TestUploadCodecIsProtobufs(t *testing.T) {
	chunk := bytes.Repeat([]byte("match,1\n"), 1<<17) // 1 MiB
	for name, req := range map[string]*wololov1.UploadRequest{
		"data":       {Frame: &wololov1.UploadRequest_Data{Data: chunk}},
		"one byte":   {Frame: &wololov1.UploadRequest_Data{Data: []byte{'\n'}}},
		"empty data": {Frame: &wololov1.UploadRequest_Data{Data: []byte{}}},
		"start":      {Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: "j", File: wololov1.InputFile_INPUT_FILE_MATCHES}}},
		"finish":     {Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: 42}}},
		"no frame":   {},
	} {
		want, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := newUploadCodec().Marshal(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got.Materialize(), want) {
			t.Errorf("%s: marshalled to %d bytes unlike proto.Marshal's %d", name, got.Len(), len(want))
		}
		if d, ok := req.Frame.(*wololov1.UploadRequest_Data); ok && len(d.Data) > 0 {
			if last := got[len(got)-1].ReadOnlyData(); &last[0] != &d.Data[0] {
				t.Errorf("%s: the chunk was copied", name)
			}
		}
		got.Free()
	}
}
