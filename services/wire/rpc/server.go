// Package rpc is how Wololo speaks gRPC: the servers every long-running
// process serves on (the graph's nodes and the masters) and the client
// connections every process and command dials, so that what all of them
// share is set in one place. On the server side: TLS and who may call what,
// keepalive and message limits, the interceptors (a panicking handler
// becomes codes.Internal and a log line, not a dead process), the health
// service, server reflection and the Status service. On the client side
// (dial.go): NewClient and DialOptions (TLS or plain, keepalive, a short
// reconnect backoff, a host name looked up again on every reconnect), the
// TLS credentials both sides use (one system call per write: coalesce.go),
// and Pool, one connection per instance and address, which the channel
// protocol's Sender dials through (transport.Conns).
//
// It may import services/base, services/wire (pki, for identities) and
// proto, and nothing of what travels over it: not transport, whose Sender
// and Server it serves through their small interfaces (Pool is a
// transport.Conns, PeerInstance a transport.Identify), not the roles whose
// services it hosts.
//
// A server serves one of two planes:
//
//   - Internal: StageService, ElectionService, Status, reflection and
//     health, between the deployment's own processes. Mutual TLS: every
//     call but health needs a certificate of the deployment's CA;
//     instances may call StageService, masters ElectionService, and either
//     of them and an operator Status and reflection. A client's
//     certificate gets PermissionDenied for everything but health.
//   - Public: the gateway's JobService and health, for clients, and its
//     Cluster service (the whole deployment's view), for operators. TLS; a
//     JobService call without a client certificate is Unauthenticated,
//     with another kind's PermissionDenied, and a Cluster call with
//     anything but an operator's certificate likewise. Health needs none.
//
// A certificate the CA revokes (pki.Revocations) gets PermissionDenied,
// "certificate revoked", on every call but health, and its calls in
// progress are ended with the same status once the server reads the list
// again (openCalls; every pki.ReloadEvery, and whenever a call or
// handshake reads it): a Watch stream or an upload does not wait for its
// next call to learn it. The public plane lets a revoked client's
// handshake through to be told so (pki.Credentials.PublicServerTLS).
//
// The policy (authorize) is a pure function of the plane, the method and the
// caller's verified identity; what a caller may claim inside a call (which
// instance it speaks as, which term, whose job) is the services' own check.
// Without credentials (--insecure) a server is plain TCP and lets every
// call through: for debugging only, and the processes say so in their logs.
//
// It knows nothing of what the services it hosts do; callers register
// their own (StageService, JobService, ElectionService) on Server.GRPC.
//
// # Recovering
//
// A process that must rebuild itself from its store before it can serve
// (a graph node: load the store, replay its operators' state logs) starts
// its server with Options.Recovering and calls Recovered when it is done.
// In between it serves at once, so that it answers rather than refusing
// connections:
//
//   - health: the process (service "") is NOT_SERVING, and the service
//     RecoveringService ("wololo.recovering") is SERVING;
//   - Status, Cluster and reflection answer as usual;
//   - every other call (StageService, JobService) fails with Unavailable
//     and a message saying the process is recovering, which the callers
//     already retry with backoff.
//
// Recovered makes "" SERVING and RecoveringService NOT_SERVING; a stopping
// server reports both NOT_SERVING. Why a health service name rather than,
// say, a flag in Status: the standard health protocol has no room for a
// reason, but it does have service names, and a second name keeps the
// probe a health check (no authorization beyond the connection, nothing
// for a paused process to do, any gRPC health client can ask it:
// `grpcurl -d '{"service":"wololo.recovering"}' ... grpc.health.v1.Health/Check`),
// while "" stays the plain answer to "may I use this process?" that
// container health checks and readiness waits expect. The masters ask ""
// first and RecoveringService only when "" is not SERVING.
//
// # Floods
//
// Health needs no certificate, so anyone who can reach a port can open
// connections and streams; Limits bounds what one peer address may hold,
// so that a flood costs the process a bounded amount of memory and log,
// and its masters' health checks and Status calls still get through:
//
//   - Connections (limitedListener, limitedCreds, connTable): at most
//     MaxConnsPerAddr per caller, a caller being a peer address and the
//     certificate's identity (none, or a client's). One past it is closed
//     once its handshake shows who it is. The handshake itself must end
//     within FirstFrame (gRPC's connection timeout), and at most
//     MaxConnsPerAddr connections of one address may be in it: a new one
//     past that closes the oldest (see connTable for why not the newest).
//   - Calls (streamLimiter, in gRPC's tap): at most MaxStreamsPerAddr open
//     at once per caller; more are ResourceExhausted.
//   - A stream's first message must come within FirstFrame
//     (DeadlineExceeded): an Upload that never sends its start frame, a
//     Health/Watch that never sends its request.
//
// Instances, masters and the operator are exempt: once their certificate
// is verified, their connections and calls are not counted at all. That is
// how the masters keep being answered: their probes ride one long-lived
// connection per process, and a flood of anonymous or client calls cannot
// take their places, because they have none to take. A master's new
// connection during a flood from its own address (one host: 127.0.0.1)
// handshakes in milliseconds; handshakes that never end do not shut it
// out, it is closed only if MaxConnsPerAddr more connections arrive from
// that address while it handshakes, and then dialled again. Clients are
// counted per client and address, so one client's flood does not refuse
// another behind the same address, nor anonymous callers a client.
// Without credentials (--insecure) nothing tells the processes apart from
// anyone else: there are no caps, only the first-frame deadline.
//
// Every refusal (these, and authorize's) is counted for /metrics
// (RefusalCounter: by plane, code and method) and logged through a
// logLimiter: per RefusalLogPeriod, the first refusal of each kind (code,
// method and caller) in full, up to ten, then one summary line with the
// counts of the rest, so that 50,000 refused calls cost the log a dozen
// lines instead of 12 MiB.
//
// # Metrics
//
// Every call that reaches the interceptors is also counted, by method and
// the code it ended with, by the first interceptor of the chain
// (Options.Metrics: go-grpc-middleware's grpc_server_*), so that it sees
// what the others decide; they keep their order (recovery, authorization,
// the first-frame deadline, the recovering gate). A call refused in the
// tap (MaxStreamsPerAddr) never reaches them: RefusalCounter has it.
package rpc

import (
	"context"
	"fmt"
	"net"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/internal/errinfo"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/wire/pki"
)

// MaxMessageBytes is the largest message a server takes: gRPC's default,
// stated here so that every process has the same.
const MaxMessageBytes = 4 << 20

// MaxConcurrentStreams bounds the streams one connection may hold open at
// once (a sender holds one per channel and job).
const MaxConcurrentStreams = 4096

// MaxConnectionIdle closes a connection without any call for this long; a
// client reconnects on its next call.
const MaxConnectionIdle = 5 * time.Minute

// DefaultGrace is how long a stopping server lets in-flight calls finish
// before it closes the rest.
const DefaultGrace = 2 * time.Second

// Plane is which callers a server is for.
type Plane int

// The planes; see the package doc.
const (
	Internal Plane = iota
	Public
)

func (p Plane) String() string {
	if p == Public {
		return "public"
	}
	return "internal"
}

// Options is what a Server needs.
type Options struct {
	// Plane is Internal unless set.
	Plane Plane
	// Credentials are the process's certificate and CA; nil serves plain
	// TCP and authorizes every call (--insecure).
	Credentials *pki.Credentials
	// Status is the process's Status service; required on the internal
	// plane, not served on the public one.
	Status wololov1.StatusServer
	// Log receives a line for every panic recovered in a handler.
	Log hclog.Logger
	// Grace is DefaultGrace if zero.
	Grace time.Duration
	// Recovering starts the server recovering (see the package doc) until
	// Recovered is called.
	Recovering bool
	// Codec, if set, is the server's gRPC codec for every call in place of
	// gRPC's proto codec (the gateway's UploadCodec).
	Codec encoding.CodecV2
	// Limits are the per-address caps and the first-frame deadline (see
	// "Floods"); zero fields take the defaults.
	Limits Limits
	// Refusals, if set, counts what the server refuses (/metrics).
	Refusals RefusalCounter
	// Metrics, if set, are the server's gRPC metrics
	// (services/ops/metrics.NewRPCServerMetrics), observed by the first
	// interceptor of the chain: every call that reaches the interceptors
	// is counted with the code it ended with, those that authorization or
	// recovery refused and the panics recovered included.
	Metrics *grpcprom.ServerMetrics
}

// Server is one process's gRPC server.
type Server struct {
	grpc    *grpc.Server
	health  *health.Server
	grace   time.Duration
	ready   atomic.Bool // Recovered, or never recovering
	opts    Options
	refused *refusals
	conns   *connLimiter                    // nil without credentials
	methods atomic.Pointer[map[string]bool] // the registered methods, set by Serve
	open    *openCalls                      // the calls a revocation ends
}

// New builds the server with health, reflection and Status registered;
// register the process's own services on GRPC before Serve. Health is
// SERVING, unless o.Recovering.
func New(o Options) (*Server, error) {
	if o.Status == nil && o.Plane == Internal {
		return nil, fmt.Errorf("rpc: Options.Status is required on the internal plane")
	}
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if err := o.Limits.Validate(); err != nil {
		return nil, err
	}
	o.Limits = o.Limits.WithDefaults()
	s := &Server{health: health.NewServer(), grace: o.Grace, opts: o, refused: newRefusals(o.Plane, o.Log, o.Refusals), open: &openCalls{creds: o.Credentials, calls: map[*openCall]struct{}{}}}
	s.methods.Store(&map[string]bool{})
	opts := append(ServerOptions(),
		grpc.MaxRecvMsgSize(MaxMessageBytes),
		grpc.MaxConcurrentStreams(MaxConcurrentStreams),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			Time: KeepaliveTime, Timeout: KeepaliveTimeout, MaxConnectionIdle: MaxConnectionIdle,
		}),
		grpc.ConnectionTimeout(o.Limits.FirstFrame),
		grpc.ChainUnaryInterceptor(append(monitorUnary(o.Metrics), recoverUnary(o.Log), s.authorizeUnary, s.gateUnary)...),
		grpc.ChainStreamInterceptor(append(monitorStream(o.Metrics), recoverStream(o.Log), s.authorizeStream, firstFrame(o.Limits.FirstFrame, s.refused), s.gateStream)...),
	)
	if o.Codec != nil {
		opts = append(opts, grpc.ForceServerCodecV2(o.Codec))
	}
	if o.Credentials != nil {
		// Without credentials (--insecure) no peer can be told from
		// another, the deployment's own processes included: no caps.
		s.conns = &connLimiter{table: newConnTable[*trackedConn](o.Limits.MaxConnsPerAddr), max: o.Limits.MaxConnsPerAddr, report: s.refused.conn}
		streams := &streamLimiter{
			max: o.Limits.MaxStreamsPerAddr, held: newKeyedCounter[caller](o.Limits.MaxStreamsPerAddr),
			methods: func() map[string]bool { return *s.methods.Load() }, refused: s.refused,
		}
		serverTLS := o.Credentials.ServerTLS()
		if o.Plane == Public {
			serverTLS = o.Credentials.PublicServerTLS()
		}
		opts = append(opts,
			grpc.Creds(limitedCreds{TLSCredentials(serverTLS), s.conns}),
			grpc.InTapHandle(streams.tap),
		)
	}
	s.grpc = grpc.NewServer(opts...)
	if o.Recovering {
		s.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
		s.health.SetServingStatus(RecoveringService, healthpb.HealthCheckResponse_SERVING)
	} else {
		s.Recovered()
	}
	healthpb.RegisterHealthServer(s.grpc, s.health)
	if o.Plane == Internal {
		wololov1.RegisterStatusServer(s.grpc, o.Status)
		reflection.Register(s.grpc)
	}
	return s, nil
}

// GRPC is the server to register services on.
func (s *Server) GRPC() *grpc.Server { return s.grpc }

// Recovered ends recovery: every service is served, health says SERVING.
// It does nothing once the server is stopping (health stays NOT_SERVING).
func (s *Server) Recovered() {
	s.ready.Store(true)
	s.health.SetServingStatus(RecoveringService, healthpb.HealthCheckResponse_NOT_SERVING)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
}

// errRecovering is what a call that needs the process gets while it
// recovers; callers retry on Unavailable, and can tell this refusal from
// a process that is down by its ErrorInfo (IsRecovering).
func errRecovering(method string) error {
	return errinfo.New(codes.Unavailable, method+": this process is recovering its state from its store; retry shortly", errorDomain, reasonRecovering)
}

// The ErrorInfo of errRecovering.
const (
	reasonRecovering = "RECOVERING"
	errorDomain      = "wololo.rpc"
)

// IsRecovering reports whether err is a server's refusal of a call while
// it recovers its state: the process is up and will serve within its
// recovery's time, so a caller may ask again soon rather than back off as
// from a process that is down (transport.Sender.RetrySoon).
func IsRecovering(err error) bool {
	return errinfo.Is(err, codes.Unavailable, errorDomain, reasonRecovering)
}

// servedWhileRecovering: health, Status and reflection answer at once.
func servedWhileRecovering(method string) bool {
	service := serviceOf(method)
	return service == serviceHealth || service == serviceStatus || service == serviceCluster || strings.HasPrefix(service, serviceReflection)
}

func (s *Server) gateUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !s.ready.Load() && !servedWhileRecovering(info.FullMethod) {
		return nil, errRecovering(info.FullMethod)
	}
	return handler(ctx, req)
}

func (s *Server) gateStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !s.ready.Load() && !servedWhileRecovering(info.FullMethod) {
		return errRecovering(info.FullMethod)
	}
	return handler(srv, ss)
}

// Serve serves l until ctx ends, then reports NOT_SERVING, lets in-flight
// calls finish for the grace period and closes the rest. It returns nil
// after a stop by ctx, or the error that ended serving.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	methods := map[string]bool{}
	for name, info := range s.grpc.GetServiceInfo() {
		for _, m := range info.Methods {
			methods["/"+name+"/"+m.Name] = true
		}
	}
	s.methods.Store(&methods)
	if s.conns != nil {
		l = limitedListener{l, s.conns}
	}
	if s.opts.Credentials != nil {
		stop := s.opts.Credentials.OnRevocation(func() {
			if ended := s.open.endRevoked(); len(ended) > 0 {
				s.opts.Log.Warn("open calls of revoked certificates ended", "plane", s.opts.Plane.String(), "calls", len(ended), "callers", ended)
			}
		})
		defer stop()
		reloads, stopReloads := context.WithCancel(ctx)
		defer stopReloads()
		go s.reloadRevocations(reloads)
	}
	served := make(chan error, 1)
	go func() { served <- s.grpc.Serve(l) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	s.health.Shutdown()
	stopped := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(s.grace):
		// Long-lived streams that peers keep open: nothing is lost by
		// closing them, unacknowledged batches are resent on reconnect.
		s.grpc.Stop()
		<-stopped
	}
	<-served
	return nil
}

// reloadRevocations reads the revocation list again every
// pki.ReloadEvery until ctx ends, so that a revocation ends the open calls
// of the certificate (openCalls.endRevoked) although no call or handshake
// reads the list.
func (s *Server) reloadRevocations(ctx context.Context) {
	t := time.NewTicker(pki.ReloadEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.opts.Credentials.ReloadRevocations()
		}
	}
}

// monitorUnary is the metrics' interceptor, first in the chain, so that
// it sees the code every other one ends a call with; none without metrics.
func monitorUnary(m *grpcprom.ServerMetrics) []grpc.UnaryServerInterceptor {
	if m == nil {
		return nil
	}
	return []grpc.UnaryServerInterceptor{m.UnaryServerInterceptor()}
}

func monitorStream(m *grpcprom.ServerMetrics) []grpc.StreamServerInterceptor {
	if m == nil {
		return nil
	}
	return []grpc.StreamServerInterceptor{m.StreamServerInterceptor()}
}

func recovered(log hclog.Logger, method string, p any) error {
	log.Error("handler panicked; the call fails, the process goes on", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	return status.Errorf(codes.Internal, "%s: internal error", method)
}

func recoverUnary(log hclog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				resp, err = nil, recovered(log, info.FullMethod, p)
			}
		}()
		return handler(ctx, req)
	}
}

func recoverStream(log hclog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = recovered(log, info.FullMethod, p)
			}
		}()
		return handler(srv, ss)
	}
}
