package master

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/election"
	"github.com/wololo/wololo/election/driver"
	"github.com/wololo/wololo/internal/lifetime"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/version"
	"github.com/wololo/wololo/services/ops/admin"
	"github.com/wololo/wololo/services/ops/metrics"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
)

// Config is what a master process needs.
type Config struct {
	// Self is this master's election id: N of instance master-N.
	Self     int
	Topology deploy.Topology
	Listener net.Listener
	// Resolver finds another master's address by instance name.
	Resolver func(instance string) (string, error)
	Runtime  Runtime
	// RuntimeName is "local" or "docker", for Status.
	RuntimeName string
	// DataDir holds the term file; empty keeps the term in memory.
	DataDir string
	// Tick is the election tick (DefaultTick if 0).
	Tick time.Duration
	// Policy is the restart policy (DefaultPolicy if its Timeout is 0).
	Policy Policy
	// Credentials are this master's certificate (master-N); nil: --insecure.
	Credentials *pki.Credentials
	Log         hclog.Logger
	// Admin, if set, is the admin HTTP listener: /metrics (services/ops/admin
	// guards it with Credentials).
	Admin net.Listener
	// RPCLimits are the gRPC server's per-address caps and first-frame
	// deadline (rpc.Limits; zero fields take the defaults).
	RPCLimits rpc.Limits
}

// DefaultTick is the masters' election tick. With election.DefaultConfig
// it makes heartbeats every 140 ms, a lease of 560 ms, a leader lost after
// 700 ms of silence and a restarted master listening 840 ms: a master that
// was just restarted (the one that listens) is what bounded the failovers
// of 100 ms ticks (1.2 s of listening) when the leader died soon after.
const DefaultTick = 70 * time.Millisecond

// Master is one running master: the election, the supervision loop and
// the gRPC server (ElectionService, Status, health).
type Master struct {
	cfg      Config
	self     election.ID
	instance string
	elector  *driver.Elector
	ids      []election.ID // every master, this one included
	loop     *Loop
	peers    *rpc.Pool // connections to the other masters
	started  time.Time
	metrics  *masterMetrics

	mu    sync.Mutex
	procs map[string]Process // the runtime's last word on each instance
}

// Validate checks the config without changing it.
func (c Config) Validate() error {
	if c.Self < 1 || c.Self > c.Topology.Masters {
		return fmt.Errorf("master config: Self: master id %d: the topology has masters 1..%d", c.Self, c.Topology.Masters)
	}
	if c.Listener == nil || c.Resolver == nil || c.Runtime == nil {
		return fmt.Errorf("master config: Listener, Resolver and Runtime are required")
	}
	if c.Tick < 0 {
		return fmt.Errorf("master config: Tick %s must not be negative", c.Tick)
	}
	if err := c.RPCLimits.Validate(); err != nil {
		return fmt.Errorf("master config: %w", err)
	}
	self := deploy.Instance{Stage: deploy.MasterStage, Index: c.Self}.Name()
	if c.Credentials != nil && c.Credentials.Self != (pki.Identity{Kind: pki.Master, Name: self}) {
		return fmt.Errorf("master config: Credentials are %s's, not master %s's", c.Credentials.Self, self)
	}
	return nil
}

// WithDefaults returns the config with a null logger where none is given
// (the election and the supervision loop fill their own tunables).
func (c Config) WithDefaults() Config {
	if c.Log == nil {
		c.Log = hclog.NewNullLogger()
	}
	return c
}

// New checks the configuration and reads the persisted term.
func New(cfg Config) (*Master, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	if cfg.Tick == 0 {
		cfg.Tick = DefaultTick
	}
	m := &Master{
		cfg: cfg, self: election.ID(cfg.Self), started: time.Now(), procs: map[string]Process{},
		instance: deploy.Instance{Stage: deploy.MasterStage, Index: cfg.Self}.Name(),
	}
	var ids []election.ID
	var watched []string
	for _, in := range cfg.Topology.MasterInstances() {
		ids = append(ids, election.ID(in.Index))
		if in.Index != cfg.Self {
			watched = append(watched, in.Name())
		}
	}
	for _, in := range cfg.Topology.Instances() {
		watched = append(watched, in.Name())
	}
	m.peers = rpc.NewPool(cfg.Resolver, cfg.Credentials)
	m.ids = ids
	var terms driver.TermStore = driver.NewMemTermStore(0)
	if cfg.DataDir != "" {
		terms = termFile(filepath.Join(cfg.DataDir, TermFile))
	}
	var err error
	m.elector, err = driver.New(driver.Config{
		Election: election.DefaultConfig(m.self, ids), Tick: cfg.Tick, Terms: terms,
		Send: m.send, Log: cfg.Log,
	})
	if err != nil {
		return nil, fmt.Errorf("master %d: %w", cfg.Self, err)
	}
	m.metrics = newMasterMetrics(m)
	m.loop = NewLoop(LoopConfig{
		Runtime: cfg.Runtime, Instances: watched, Policy: cfg.Policy, Acting: m.elector.Acting, Credentials: cfg.Credentials,
		Describe: m.describe, Observe: m.observe, Log: cfg.Log, OnRestart: m.metrics.restarted, OnRound: m.metrics.round,
	})
	return m, nil
}

// Serve serves and supervises until ctx ends (nil) or the master cannot go
// on (the term cannot be persisted, the server fails).
func (m *Master) Serve(ctx context.Context) error {
	defer m.peers.Close()
	refusals := metrics.NewRefusals()
	rpcMetrics := metrics.NewRPCServerMetrics(rpc.Internal.String())
	srv, err := rpc.New(rpc.Options{Credentials: m.cfg.Credentials, Status: &statusServer{m: m}, Log: m.cfg.Log.Named("rpc"), Limits: m.cfg.RPCLimits, Refusals: refusals, Metrics: rpcMetrics})
	if err != nil {
		return err
	}
	wololov1.RegisterElectionServiceServer(srv.GRPC(), &electionServer{m: m})
	var life lifetime.Lifetime
	run := func(serve func(context.Context) error) {
		life.Go(func(ctx context.Context) {
			if err := serve(ctx); err != nil {
				life.Fail(fmt.Errorf("master %d: %w", m.cfg.Self, err))
			}
		})
	}
	run(func(ctx context.Context) error { return srv.Serve(ctx, m.cfg.Listener) })
	if m.cfg.Admin != nil {
		reg := metrics.New(deploy.MasterStage, m.instance, deploy.MasterStage, version.Current())
		collectors := append(refusals.Collectors(), m.metrics, rpcMetrics)
		if m.cfg.DataDir != "" {
			collectors = append(collectors, metrics.NewDiskCollector(m.cfg.DataDir))
		}
		if err := reg.Register(collectors...); err != nil {
			return fmt.Errorf("master %d: metrics: %w", m.cfg.Self, err)
		}
		run(func(ctx context.Context) error {
			h := admin.Handlers{Metrics: reg.Handler(), PublicMetrics: reg.PublicHandler()}
			return admin.Serve(ctx, m.cfg.Admin, admin.Handler(h, admin.GuardFor(m.cfg.Credentials, m.cfg.Admin, m.instance)))
		})
	}
	run(m.elector.Serve)
	life.Go(m.loop.Run)
	m.cfg.Log.Info("serving", "address", m.cfg.Listener.Addr().String(), "runtime", m.cfg.RuntimeName, "supervised", len(m.loop.cfg.Instances))
	return life.Serve(ctx)
}

// observe confirms to the election every master the runtime saw exited,
// and keeps the list for Status.
func (m *Master) observe(procs []Process) {
	latest := make(map[string]Process, len(procs))
	for _, p := range procs {
		latest[p.Instance] = p
	}
	m.mu.Lock()
	m.procs = latest
	m.mu.Unlock()
	for _, p := range procs {
		if p.Running {
			continue
		}
		in, err := deploy.ParseInstance(p.Instance)
		if err != nil || in.Stage != deploy.MasterStage || in.Index == m.cfg.Self || in.Index < 1 || in.Index > m.cfg.Topology.Masters {
			continue
		}
		m.elector.ConfirmDead(election.ID(in.Index))
	}
}

// describe goes on every restart log line.
func (m *Master) describe() []any {
	s := m.elector.State()
	return []any{"leader", m.cfg.Self, "term", s.Term}
}

// Status is what Status/Get reports for this master.
func (m *Master) Status() *wololov1.MasterStatus {
	s := m.elector.State()
	out := &wololov1.MasterStatus{
		Id: int32(m.self), ElectionRole: s.Role.String(), Term: uint64(s.Term), Leader: int32(s.Leader),
		Acting: s.Acting, Runtime: m.cfg.RuntimeName, RestartsDone: m.loop.Restarts(),
	}
	for _, id := range m.ids {
		out.Peers = append(out.Peers, int32(id))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, st := range m.loop.States() {
		p, known := m.procs[st.Instance]
		sp := &wololov1.SupervisedProcess{Instance: st.Instance, Restarts: int32(p.Restarts), CrashLoop: st.CrashLoop}
		if !st.LastSeen.IsZero() {
			sp.LastSeen = timestamppb.New(st.LastSeen)
		}
		switch {
		case !known:
			sp.State = "unknown"
		case !p.Running:
			sp.State, sp.Exit = "exited", p.Exit
		case st.Recovering:
			sp.State = "recovering"
		case st.Alive:
			sp.State = "alive"
		default:
			sp.State = "silent"
		}
		if p.Running {
			sp.Pid = p.Ref
		}
		out.Processes = append(out.Processes, sp)
	}
	sort.Slice(out.Processes, func(i, j int) bool { return out.Processes[i].Instance < out.Processes[j].Instance })
	return out
}

// electionServer is the ElectionService: messages from the other masters.
type electionServer struct {
	wololov1.UnimplementedElectionServiceServer
	m *Master
}

func (s *electionServer) Deliver(ctx context.Context, req *wololov1.DeliverRequest) (*wololov1.DeliverResponse, error) {
	if err := s.m.checkSender(ctx, req.GetFrom()); err != nil {
		return nil, err
	}
	msg, err := s.m.fromProto(req)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, status.Convert(err).Message())
	}
	s.m.elector.Receive(msg)
	return &wololov1.DeliverResponse{}, nil
}

// checkSender refuses a message whose From is not the master its
// certificate names (with credentials; --insecure takes it as claimed).
func (m *Master) checkSender(ctx context.Context, from int32) error {
	if m.cfg.Credentials == nil {
		return nil
	}
	id, ok := pki.Peer(ctx)
	if !ok {
		return status.Error(codes.Unauthenticated, "election messages need a master's certificate")
	}
	claimed := deploy.Instance{Stage: deploy.MasterStage, Index: int(from)}.Name()
	if id.Kind != pki.Master || id.Name != claimed {
		return status.Errorf(codes.PermissionDenied, "%s may not speak as %s", id, claimed)
	}
	return nil
}

// MaxTermStep is how far above a master's own term a message's term may be.
// Terms grow by one or two per election; a master that was down while the
// others held this many elections catches up through several messages.
const MaxTermStep = 1 << 16

// fromProto checks a message before the node sees it: a known kind, a
// sender among the other masters, this master as the addressee, and a term
// within MaxTermStep of its own.
func (m *Master) fromProto(req *wololov1.DeliverRequest) (election.Message, error) {
	k, err := kindFromProto(req.GetKind())
	if err != nil {
		return election.Message{}, err
	}
	from := int(req.GetFrom())
	if from < 1 || from > m.cfg.Topology.Masters || from == m.cfg.Self {
		return election.Message{}, fmt.Errorf("sender %d is not another master (masters are 1..%d, this is %d)", from, m.cfg.Topology.Masters, m.cfg.Self)
	}
	if int(req.GetTo()) != m.cfg.Self {
		return election.Message{}, fmt.Errorf("message for master %d delivered to master %d", req.GetTo(), m.cfg.Self)
	}
	if own := uint64(m.elector.State().Term); req.GetTerm() > own+MaxTermStep {
		// Never stepped on, never persisted: a term that high would leave
		// no term for any master to lead in.
		return election.Message{}, fmt.Errorf("term %d is more than %d above this master's term %d", req.GetTerm(), MaxTermStep, own)
	}
	return election.Message{Kind: k, From: election.ID(from), To: m.self, Term: election.Term(req.GetTerm()), Seq: req.GetSeq()}, nil
}

// statusServer is Status/Get for a master.
type statusServer struct {
	wololov1.UnimplementedStatusServer
	m *Master
}

func (s *statusServer) Get(context.Context, *wololov1.GetRequest) (*wololov1.GetResponse, error) {
	return &wololov1.GetResponse{
		Role: "master", Instance: s.m.instance, Incarnation: uint64(s.m.started.UnixNano()), Pid: int64(os.Getpid()),
		UptimeSeconds: time.Since(s.m.started).Seconds(), Address: s.m.cfg.Listener.Addr().String(),
		Master: s.m.Status(),
	}, nil
}
