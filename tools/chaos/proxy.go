package chaos

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/internal/lifetime"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
)

// shaper is a transparent gRPC proxy between the client and the gateway.
// Every method is forwarded frame by frame without being decoded (so RPCs
// added later pass through unchanged), except the upload: its data frames
// are cut into pieces of at most chunk bytes and paced to rate bytes per
// second. That stretches a small dataset's upload over enough time for the
// kills to land during it, and makes the gateway commit (and the graph
// move) many times per file instead of once per 1 MiB client chunk.
//
// A gateway that dies breaks the proxied call with the upstream's status,
// exactly as a direct call would break; the client resumes through the
// proxy as it would directly.
type shaper struct {
	lis      net.Listener
	server   *grpc.Server
	upstream *grpc.ClientConn
	chunk    int
	pace     pacer
	sent     atomic.Int64 // upload bytes forwarded
	frames   atomic.Int64 // upload data frames forwarded
}

const uploadMethod = "/wololo.v1.JobService/Upload"

// newShaper dials the gateway with tlsConfig (the client's credential: the
// gateway sees the shaper as that client) and listens in plain TCP on
// loopback, for the harness's own client only.
func newShaper(gateway string, tlsConfig *tls.Config, rate int64, chunk int) (*shaper, error) {
	conn, err := client.Dial(gateway, tlsConfig)
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		conn.Close()
		return nil, err
	}
	s := &shaper{lis: lis, upstream: conn, chunk: chunk, pace: pacer{rate: float64(rate)}}
	s.server = grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(s.handle))
	go s.server.Serve(lis)
	return s, nil
}

// Addr is where the client should connect.
func (s *shaper) Addr() string { return s.lis.Addr().String() }

func (s *shaper) Close() {
	s.server.Stop()
	s.upstream.Close()
}

func (s *shaper) handle(_ any, ss grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		return status.Error(codes.Internal, "proxy: no method")
	}
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	cs, err := s.upstream.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, method,
		grpc.ForceCodec(rawCodec{}), grpc.WaitForReady(true))
	if err != nil {
		return err
	}
	var (
		mu    sync.Mutex
		upErr error
	)
	go func() { // client → gateway
		if err := s.forwardUp(ctx, method, ss, cs); err != nil {
			mu.Lock()
			upErr = err
			mu.Unlock()
			cancel()
		}
	}()
	for { // gateway → client
		f := new(frame)
		if err := cs.RecvMsg(f); err != nil {
			mu.Lock()
			defer mu.Unlock()
			if upErr != nil {
				return upErr
			}
			if err == io.EOF {
				return nil
			}
			return err // the upstream's status, as the client would have seen it
		}
		if err := ss.SendMsg(f); err != nil {
			return err
		}
	}
}

// forwardUp copies the client's frames upstream, splitting and pacing
// upload data.
func (s *shaper) forwardUp(ctx context.Context, method string, ss grpc.ServerStream, cs grpc.ClientStream) error {
	for {
		f := new(frame)
		if err := ss.RecvMsg(f); err != nil {
			if err == io.EOF {
				return cs.CloseSend()
			}
			return err
		}
		if method != uploadMethod {
			if err := cs.SendMsg(f); err != nil {
				return nil // the receiving side reports the upstream's error
			}
			continue
		}
		var req wololov1.UploadRequest
		if err := proto.Unmarshal(f.b, &req); err != nil {
			return status.Errorf(codes.Internal, "proxy: decode upload frame: %v", err)
		}
		data := req.GetData()
		if data == nil {
			if err := cs.SendMsg(f); err != nil {
				return nil
			}
			continue
		}
		for len(data) > 0 {
			n := min(len(data), s.chunk)
			if err := s.pace.wait(ctx, n); err != nil {
				return err
			}
			b, err := proto.Marshal(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: data[:n]}})
			if err != nil {
				return status.Errorf(codes.Internal, "proxy: encode upload frame: %v", err)
			}
			if err := cs.SendMsg(&frame{b: b}); err != nil {
				return nil
			}
			s.sent.Add(int64(n))
			s.frames.Add(1)
			data = data[n:]
		}
	}
}

// pacer spaces sends so that they average rate bytes per second across
// every upload going through the proxy. A rate of 0 or less does not pace.
type pacer struct {
	rate float64
	mu   sync.Mutex
	next time.Time
}

func (p *pacer) wait(ctx context.Context, n int) error {
	if p.rate <= 0 {
		return nil
	}
	p.mu.Lock()
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	at := p.next
	p.next = p.next.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
	p.mu.Unlock()
	if d := time.Until(at); d > 0 {
		return lifetime.Sleep(ctx, d)
	}
	return nil
}

// frame is one gRPC message, undecoded.
type frame struct{ b []byte }

// rawCodec moves frames without decoding them. It calls itself "proto" so
// the content type on the wire stays application/grpc+proto.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("proxy codec: unexpected %T", v)
	}
	return f.b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("proxy codec: unexpected %T", v)
	}
	f.b = append([]byte(nil), data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }
