// Package node assembles one Wololo process of the graph: a gRPC server with
// the StageService (the stage runtime), the health service, server
// reflection and Status, plus JobService on the gateway. The embedded demo
// starts one Node per instance in a single process; the standalone roles
// start exactly one.
//
// It wires parts together and owns their lifetimes; it holds no protocol or
// query logic of its own.
package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/gateway"
	"github.com/wololo/wololo/services/operators"
	"github.com/wololo/wololo/services/stage"
	"github.com/wololo/wololo/transport"
)

// ShutdownGrace is how long a stopping node lets in-flight calls finish.
const ShutdownGrace = 2 * time.Second

// Config is what a Node needs.
type Config struct {
	Topology    deploy.Topology
	Instance    deploy.Instance
	Listener    net.Listener       // where to serve; required
	Resolver    transport.Resolver // addresses of the other instances; required
	Store       transport.Store    // a MemStore if nil
	Log         hclog.Logger
	BatchRows   int
	OutboxLimit int
	Retention   time.Duration // gateway: see gateway.Config.Retention
}

// Node is one running process of the graph.
type Node struct {
	cfg     Config
	Role    string
	Gateway *gateway.Gateway // set on the gateway
	server  *grpc.Server
	pool    *transport.Pool
	cancel  context.CancelFunc
	started time.Time

	announced atomic.Bool
	errOnce   sync.Once
	err       error
	done      chan struct{}
}

// Start builds the node and serves in the background until Stop or a fatal
// error (see Wait).
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Listener == nil || cfg.Resolver == nil {
		return nil, errors.New("node: Listener and Resolver are required")
	}
	st, ok := cfg.Topology.Stage(cfg.Instance.Stage)
	if !ok {
		return nil, fmt.Errorf("node: topology has no stage %q", cfg.Instance.Stage)
	}
	spec, ok := operators.Specs()[st.Operator]
	if !ok {
		return nil, fmt.Errorf("node: stage %s: unknown operator %q", st.Name, st.Operator)
	}
	if cfg.Store == nil {
		cfg.Store = transport.NewMemStore()
	}
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
	self := cfg.Instance.Name()
	log := cfg.Log.With("stage", st.Name, "instance", self)
	incarnation, err := cfg.Store.NextIncarnation()
	if err != nil {
		return nil, fmt.Errorf("node %s: incarnation: %w", self, err)
	}
	loadStart := time.Now()
	img, err := cfg.Store.Load()
	if err != nil {
		return nil, fmt.Errorf("node %s: load store: %w", self, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	n := &Node{cfg: cfg, Role: st.Role, cancel: cancel, started: time.Now(), done: make(chan struct{})}
	n.pool = transport.NewPool(cfg.Resolver)
	outbox := transport.NewOutbox(cfg.Store)
	sender := transport.NewSender(self, incarnation, outbox, n.pool, log.Named("transport"))
	senderDone := make(chan struct{})
	go func() {
		defer close(senderDone)
		if err := sender.Serve(ctx); err != nil {
			n.fail(fmt.Errorf("%s incarnation %d was replaced: %w", self, incarnation, err))
		}
	}()
	committer := transport.NewCommitter(cfg.Store, outbox, transport.NewInbox(), sender)
	resume := committer.Restore(img)

	scfg := stage.Config{
		Topology: cfg.Topology, Instance: cfg.Instance, Spec: spec, Committer: committer, Links: sender,
		Log: log.Named("stage"), BatchRows: cfg.BatchRows, OutboxLimit: cfg.OutboxLimit,
	}
	if st.Role == "gateway" {
		n.Gateway, err = gateway.New(gateway.Config{
			Topology: cfg.Topology, Committer: committer,
			Log: log.Named("gateway"), BatchRows: cfg.BatchRows, OutboxLimit: cfg.OutboxLimit, Retention: cfg.Retention,
		})
		if err != nil {
			cancel()
			return nil, err
		}
		scfg.OnFinish = n.Gateway.Finished
	}
	runtime, err := stage.New(scfg)
	if err != nil {
		cancel()
		return nil, err
	}
	runtimeDone := make(chan struct{})
	go func() {
		defer close(runtimeDone)
		if err := runtime.Serve(ctx); err != nil {
			n.fail(err)
		}
	}()
	if err := runtime.Recover(img); err != nil {
		cancel()
		return nil, fmt.Errorf("node %s: recover: %w", self, err)
	}
	var gatewayDone chan struct{} // closed once the gateway's Serve returned
	if n.Gateway != nil {
		n.Gateway.SetDropper(func(ctx context.Context, job string) error {
			return dropEverywhere(ctx, cfg.Topology, cfg.Instance, runtime, n.pool, job)
		})
		if err := n.Gateway.Recover(img); err != nil {
			cancel()
			return nil, fmt.Errorf("node %s: recover jobs: %w", self, err)
		}
		gatewayDone = make(chan struct{})
		go func() {
			defer close(gatewayDone)
			_ = n.Gateway.Serve(ctx) // nil: it ends with ctx
		}()
	}
	if len(img.Jobs) > 0 {
		log.Info("recovered from store", "jobs", len(img.Jobs), "channels-to-resend", len(resume), "took", time.Since(loadStart).Round(time.Millisecond))
	}

	n.server = grpc.NewServer(transport.ServerOptions()...)
	stageServer := transport.NewServer(self, incarnation, runtime, log.Named("transport"))
	stageServer.OnAnnounce(sender.SeeReceiver)
	wololov1.RegisterStageServiceServer(n.server, stageServer)
	if n.Gateway != nil {
		wololov1.RegisterJobServiceServer(n.server, n.Gateway.Service())
	}
	wololov1.RegisterStatusServer(n.server, &statusServer{
		role: st.Role, instance: self, incarnation: incarnation, started: n.started,
		addr: cfg.Listener.Addr().String(), progress: runtime.Progress, store: cfg.Store, announced: &n.announced,
	})
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(n.server, hs)
	reflection.Register(n.server)

	go func() {
		err := n.server.Serve(cfg.Listener)
		n.fail(err)
	}()
	// Fence older incarnations of this instance at every receiver before
	// resending anything, then resend what the store holds.
	go func() {
		if announce(ctx, cfg.Topology, cfg.Instance, incarnation, n.pool, log, n.fail) {
			n.announced.Store(true)
		}
		sender.Resume(resume)
	}()
	go func() {
		<-ctx.Done()
		hs.Shutdown()
		// Channels are long-lived streams that peers keep open; give
		// in-flight calls a moment to finish, then close the rest. Nothing
		// is lost: unacknowledged batches are resent on reconnect.
		stopped := make(chan struct{})
		go func() {
			n.server.GracefulStop()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(ShutdownGrace):
			n.server.Stop()
			<-stopped
		}
		// Nothing may touch the store once the caller closes it.
		<-runtimeDone
		if gatewayDone != nil {
			<-gatewayDone
		}
		<-senderDone
		n.pool.Close()
		close(n.done)
	}()
	log.Info("serving", "address", cfg.Listener.Addr().String(), "role", st.Role, "incarnation", incarnation)
	return n, nil
}

// fail records the first fatal error and stops the node.
func (n *Node) fail(err error) {
	n.errOnce.Do(func() { n.err = err })
	n.cancel()
}

// Stop stops the node gracefully: in-flight RPCs finish, links stop.
func (n *Node) Stop() {
	n.fail(nil)
	<-n.done
}

// Wait blocks until the node has stopped and returns its fatal error, if any.
func (n *Node) Wait() error {
	<-n.done
	if errors.Is(n.err, grpc.ErrServerStopped) {
		return nil
	}
	return n.err
}

// Done is closed once the node has stopped, by Stop or on a fatal error.
func (n *Node) Done() <-chan struct{} { return n.done }

// Addr is the node's listening address.
func (n *Node) Addr() string { return n.cfg.Listener.Addr().String() }

type statusServer struct {
	wololov1.UnimplementedStatusServer
	role, instance, addr string
	incarnation          uint64
	started              time.Time
	progress             func() []*wololov1.JobProgress
	store                transport.Store
	announced            *atomic.Bool
}

func (s *statusServer) Get(context.Context, *wololov1.GetRequest) (*wololov1.GetResponse, error) {
	return &wololov1.GetResponse{
		Role: s.role, Instance: s.instance, Incarnation: s.incarnation,
		UptimeSeconds: time.Since(s.started).Seconds(), Address: s.addr, Jobs: s.progress(),
		Store: storeCounters(s.store), Announced: s.announced.Load(),
	}, nil
}

func storeCounters(st transport.Store) *wololov1.StoreCounters {
	stats := st.Stats()
	_, inMemory := st.(*transport.MemStore)
	return &wololov1.StoreCounters{Commits: stats.Commits, Bytes: stats.Bytes, Syncs: stats.Syncs, Durable: !inMemory}
}
