package stage_test

import (
	"context"
	"encoding/binary"
	"io"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/jobid"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/transport"
)

// frameStream is the server side of one Exchange call, fed from frames.
type frameStream struct {
	grpc.ServerStream
	ctx    context.Context
	frames []*wololov1.ExchangeRequest
}

func (s *frameStream) Context() context.Context              { return s.ctx }
func (s *frameStream) Send(*wololov1.ExchangeResponse) error { return nil }
func (s *frameStream) Recv() (*wololov1.ExchangeRequest, error) {
	if len(s.frames) == 0 {
		return nil, io.EOF
	}
	f := s.frames[0]
	s.frames = s.frames[1:]
	return f, nil
}

// frames decodes the fuzzer's bytes as length-prefixed ExchangeRequests;
// a record that does not decode is skipped.
func frames(b []byte) []*wololov1.ExchangeRequest {
	var out []*wololov1.ExchangeRequest
	for len(b) >= 2 {
		n := int(binary.BigEndian.Uint16(b))
		b = b[2:]
		n = min(n, len(b))
		var r wololov1.ExchangeRequest
		if proto.Unmarshal(b[:n], &r) == nil {
			out = append(out, &r)
		}
		b = b[n:]
	}
	return out
}

func record(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(b))), b...)
}

// FuzzExchange feeds arbitrary frames, in any order and with any fields,
// to the StageService of shard-0 with its real runtime behind it: the
// process must not panic, and a job may only exist under a well-formed id.
func FuzzExchange(f *testing.F) {
	open := func(job, stream, sender string, inc uint64) *wololov1.ExchangeRequest {
		return &wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Open{Open: &wololov1.Open{JobId: job, Stream: stream, Sender: sender, Receiver: "shard-0", Incarnation: inc}}}
	}
	bat := func(seq uint64, eof bool, rows []byte) *wololov1.ExchangeRequest {
		return &wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Batch{Batch: &wololov1.Batch{Seq: seq, Eof: eof, Rows: rows}}}
	}
	rows := rowsOf("m1 1")
	seed := func(rs ...*wololov1.ExchangeRequest) []byte {
		var b []byte
		for _, r := range rs {
			b = append(b, record(r)...)
		}
		return b
	}
	f.Add(seed(open("j", sumRows, "shard-0", 1), bat(1, false, rows), bat(2, true, nil)))
	f.Add(seed(open("j\x00", sumRows, "shard-0", 1), bat(1, false, rows)))
	f.Add(seed(open("j", "c9-other", "shard-0", 1)))
	f.Add(seed(open("j", sumRows, "shard-0", 1<<63), bat(5, false, rows), bat(1, false, nil)))
	f.Add(seed(bat(1, false, rows), open("j", sumRows, "shard-1", 1)))
	f.Add(seed(open("j", sumRows, "shard-0", 1), open("k", sumRows, "shard-0", 1), bat(1, false, []byte{0xff, 0x01})))
	f.Fuzz(func(t *testing.T, b []byte) {
		store := transport.NewMemStore()
		rt, err := stage.New(stage.Config{
			Topology: deploy.Default(), Instance: shard0, Plans: plans,
			Committer: transport.NewCommitter(store, transport.NewOutbox(store), transport.NewInbox(), nil),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.IntroduceJob("j", []byte("sum")); err != nil { // the seeds' job; any other is refused
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- rt.Serve(ctx) }()
		srv := transport.NewServer("shard-0", 1, rt, nil)
		srv.SetPeers(func(in string) bool { return in == "shard-0" || in == "shard-1" })
		_ = srv.Exchange(&frameStream{ctx: context.Background(), frames: frames(b)})
		for _, p := range rt.Progress() {
			if !jobid.Valid(p.JobId) {
				t.Fatalf("a job exists under the malformed id %q", p.JobId)
			}
		}
		cancel()
		if err := <-served; err != nil {
			t.Fatalf("the runtime failed: %v", err)
		}
	})
}
