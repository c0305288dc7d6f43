package rpc

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// RefusalCounter counts what a server refuses, for /metrics
// (services/ops/metrics.Refusals is one). plane is the server's Plane.
type RefusalCounter interface {
	// RefusedCall counts a call refused with code (Unauthenticated,
	// PermissionDenied, ResourceExhausted for a cap, DeadlineExceeded for
	// a stream without a first message); method is a registered method,
	// or "unknown".
	RefusedCall(plane, code, method string)
	// RefusedConnection counts a connection closed for reason (one of
	// too-many-connections, handshake-evicted, handshake-failed).
	RefusedConnection(plane, reason string)
}

// How refusals are logged (logLimiter): per RefusalLogPeriod at most
// refusalLogLines lines in full, and one summary.
const (
	RefusalLogPeriod = 10 * time.Second
	refusalLogLines  = 10
	refusalLogKeys   = 256
)

// unknownMethod stands for a method the server does not serve, in the
// metrics and the log: a caller chooses the names it sends, and they must
// not grow either.
const unknownMethod = "unknown"

// refusals reports what a server refuses: counted, and logged through a
// logLimiter whose windows time.AfterFunc ends.
type refusals struct {
	plane   string
	log     hclog.Logger
	counter RefusalCounter
	now     func() time.Time
	after   func(time.Duration, func()) // time.AfterFunc
	mu      sync.Mutex
	lim     *logLimiter
}

func newRefusals(plane Plane, log hclog.Logger, counter RefusalCounter) *refusals {
	return &refusals{plane: plane.String(), log: log, counter: counter, now: time.Now,
		after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }, lim: newLogLimiter(RefusalLogPeriod, refusalLogLines, refusalLogKeys)}
}

// call reports a refused call.
func (r *refusals) call(method string, who caller, err error) {
	code := status.Code(err).String()
	if r.counter != nil {
		r.counter.RefusedCall(r.plane, code, method)
	}
	if r.note(code + " " + method + " from " + who.String()) {
		r.log.Warn("call refused", "method", method, "caller", who.String(), "error", err)
	}
}

// conn reports a refused connection. A failed handshake is only counted:
// port scanners and probers make them all day.
func (r *refusals) conn(reason string, who caller, err error) {
	if r.counter != nil {
		r.counter.RefusedConnection(r.plane, reason)
	}
	if reason == reasonHandshakeFailed {
		return
	}
	if r.note(reason + " from " + who.String()) {
		r.log.Warn("connection refused", "reason", reason, "caller", who.String(), "error", err)
	}
}

func (r *refusals) note(key string) bool {
	r.mu.Lock()
	full, opened := r.lim.note(key, r.now())
	r.mu.Unlock()
	if opened {
		r.after(RefusalLogPeriod, r.flush)
	}
	return full
}

func (r *refusals) flush() {
	r.mu.Lock()
	s, ok := r.lim.flush(r.now())
	r.mu.Unlock()
	if ok {
		r.log.Warn("refusals not logged one by one", "not-logged", s.unlogged, "refused", s.total, "period", s.period.Round(time.Millisecond), "most", s.most())
	}
}

// streamLimiter caps the calls a caller has open from one peer address
// (Limits.MaxStreamsPerAddr). It counts them in gRPC's tap, which runs
// when a stream's headers arrive, before any handler or message: a unary
// call whose request never comes is counted too, and a refused one costs
// no goroutine. A call gives its place back when its context ends, which
// gRPC does for every stream it let through.
type streamLimiter struct {
	max     int
	mu      sync.Mutex
	held    *keyedCounter[caller]
	methods func() map[string]bool // the registered methods
	refused *refusals
}

func (l *streamLimiter) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	who, exempt := peerOf(ctx)
	if exempt {
		return ctx, nil
	}
	l.mu.Lock()
	ok := l.held.acquire(who)
	l.mu.Unlock()
	if !ok {
		method := info.FullMethodName
		if !l.methods()[method] {
			method = unknownMethod
		}
		err := status.Errorf(codes.ResourceExhausted, "%s: %s has %d calls open already (--max-streams-per-addr)", method, who, l.max)
		l.refused.call(method, who, err)
		return nil, err
	}
	context.AfterFunc(ctx, func() {
		l.mu.Lock()
		l.held.release(who)
		l.mu.Unlock()
	})
	return ctx, nil
}

// firstFrame ends a stream whose first message has not come within
// timeout (Limits.FirstFrame), with DeadlineExceeded: the Upload that
// never sends its start frame, the Health/Watch that never sends its
// request. A unary call's request is read by gRPC before any interceptor;
// such calls are bounded by the stream cap instead.
func firstFrame(timeout time.Duration, refused *refusals) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		fs := &firstFrameStream{ServerStream: ss, timeout: timeout, method: info.FullMethod}
		err := handler(srv, fs)
		if fs.expired != nil {
			who, _ := peerOf(ss.Context())
			refused.call(info.FullMethod, who, fs.expired)
		}
		return err
	}
}

type firstFrameStream struct {
	grpc.ServerStream
	timeout time.Duration
	method  string
	started bool  // the first RecvMsg was called
	expired error // set when the first message did not come in time
}

// RecvMsg waits for the first message at most timeout. The receive it gave
// up on ends when the stream does, which is as soon as the handler
// returns; until then every RecvMsg fails.
func (s *firstFrameStream) RecvMsg(m any) error {
	if s.expired != nil {
		return s.expired
	}
	if s.started {
		return s.ServerStream.RecvMsg(m)
	}
	s.started = true
	got := make(chan error, 1)
	go func() { got <- s.ServerStream.RecvMsg(m) }()
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case err := <-got:
		return err
	case <-t.C:
		s.expired = status.Errorf(codes.DeadlineExceeded, "%s: no first message within %s (--first-frame-timeout); the stream is ended", s.method, s.timeout)
		return s.expired
	}
}
