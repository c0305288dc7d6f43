// Package node assembles one gateway or shard process of a Wololo
// deployment: the internal gRPC server (services/wire/rpc: health,
// reflection, Status) with the StageService (the stage runtime), plus, on the gateway, a public server
// with JobService and health on a listener of its own. With credentials
// every claim a peer makes on a stream is bound to its certificate
// (transport.Server.RequireIdentity). New builds a node; Serve runs it (the
// server, the stage runtime, the sender's links, the gateway's sweeper)
// until its context ends or one of them fails, and stops them all before
// it returns. The embedded demo runs one Node per instance in a single
// process (Cluster); the standalone roles run exactly one.
//
// Recovery happens in Serve, not in New: the servers start first, in
// rpc's recovering mode (health NOT_SERVING with "wololo.recovering"
// SERVING, Status answering with recovering set, every other call
// Unavailable), then the node loads its store and replays its operators'
// state logs, and only then serves, announces itself and resends. So a
// process whose replay takes seconds answers its masters all along, and
// they leave it alone (up to their --recovery-grace) instead of counting
// it silent and killing it before it is done.
//
// A node writes to its store through a transport.FailStop: the first write
// that fails (a full disk, an I/O error), whoever makes it, ends Serve
// with that error, health goes NOT_SERVING as the server stops, and the
// command exits non-zero with a log line naming it; the masters restart
// it, and a restart onto a disk that is still full fails the same way
// (their crash-loop backoff spaces the attempts) until there is room.
//
// A link whose channel cannot complete (transport.Sender.OnFailed: a
// store wiped or replaced under a running job, a receiver that does not
// know the job or refuses it for a limit) reports the job failed to the
// gateway: directly on the gateway, over StageService.FailJob from any
// other node, retried until the gateway has it. The gateway introduces
// every job to every other node (StageService.IntroduceJob) before it
// sends a batch of it; a node takes streams only of jobs introduced to it
// (see services/roles/gateway).
//
// With Config.Admin a node also serves its admin HTTP listener
// (services/ops/admin): /metrics from services/ops/metrics, read at scrape time
// from the same state Status reports, with the store's commit (and, as
// the caller hooked it up, sync) latencies; and on the gateway the web
// page of the whole deployment (services/ops/dashboard), guarded with the
// process's credentials (the operator's token; see services/ops/admin). The
// gateway also serves the Cluster service on its public plane, for
// operators: a services/ops/clusterview Gatherer that asks every process's
// Status over the node's own connections.
//
// It wires parts together and owns their lifetimes; it holds no protocol or
// query logic of its own.
package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/lifetime"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/inputlog"
	"github.com/wololo/wololo/services/base/jobid"
	"github.com/wololo/wololo/services/cmdline/version"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/services/ops/admin"
	"github.com/wololo/wololo/services/ops/clusterview"
	"github.com/wololo/wololo/services/ops/dashboard"
	"github.com/wololo/wololo/services/ops/metrics"
	"github.com/wololo/wololo/services/roles/gateway"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
	"github.com/wololo/wololo/transport"
)

// Config is what a Node needs.
type Config struct {
	Topology    deploy.Topology
	Instance    deploy.Instance
	Listener    net.Listener     // the internal plane; required
	Public      net.Listener     // the gateway's public plane; required on the gateway
	Credentials *pki.Credentials // this instance's certificate; nil: --insecure
	Resolver    rpc.Resolver     // addresses of the other instances; required
	Store       transport.Store  // a MemStore if nil (WithDefaults)
	Log         hclog.Logger
	OutboxLimit int
	Retention   time.Duration // gateway: see gateway.Config.Retention
	// StandingRetention is the gateway's: see
	// gateway.Config.StandingRetention.
	StandingRetention time.Duration
	MaxJobs           int           // jobs held at once; see stage.Config.MaxJobs
	UploadIdle        time.Duration // gateway: see gateway.Config.UploadIdle
	// Quotas per client (gateway): see gateway.Config.
	ClientMaxJobs     int
	ClientMaxHeldJobs int
	MaxJobBytes       int64
	ClientMaxBytes    int64
	// MaxHeaderBytes and MaxRecordBytes (gateway): see gateway.Config.
	MaxHeaderBytes int
	MaxRecordBytes int
	// MaxMalformed (gateway): see gateway.Config.
	MaxMalformed *schema.MalformedLimit
	// MaxQueries and MaxQueryBytes (gateway): a job's SQL queries; see
	// gateway.Config.
	MaxQueries    int
	MaxQueryBytes int
	// MaxTables (gateway): a job's extra tables (--max-tables).
	MaxTables int
	// ClientMaxCompiles and MaxCompiles (gateway): the CreateJob calls
	// compiling queries at once, per client and in all; see
	// gateway.Config.
	ClientMaxCompiles int
	MaxCompiles       int
	// MaxAnswerBytes and ClientMaxAnswerBytes (gateway): the answers it
	// holds of one job and of one client's jobs; see gateway.Config.
	MaxAnswerBytes       int64
	ClientMaxAnswerBytes int64
	// MaxHeldBytes (gateway): what one operator of a job's plan holds
	// there until its inputs end, a query's answer (--max-held-bytes;
	// sqlops.DefaultMaxHeldBytes if 0).
	MaxHeldBytes int64
	// JobBudget is what one job may make this instance hold and make
	// (--job-max-state-bytes, --job-max-join-rows, --job-max-step-bytes,
	// --job-max-spill-bytes; zero fields: sqlops.DefaultBudget's); past
	// it the job fails here, but that with a DataDir its joins' state
	// past --job-max-state-bytes spills to DataDir/spill/JOB first.
	// Its HeldBytes is MaxHeldBytes's; its SpillDir the node's.
	JobBudget sqlops.Budget
	// StateBytes is the state the jobs this instance runs share (the
	// process's --memory-budget: sqlops.MemoryBudget; 0: none shared):
	// each job's joins and aggregates spill past its share, the pool
	// over the jobs running here (sqlops.StatePool), or past
	// JobBudget.StateBytes if that is less.
	StateBytes int64
	// RPCLimits are both gRPC servers' per-address caps and first-frame
	// deadline (rpc.Limits; zero fields take the defaults).
	RPCLimits rpc.Limits
	// Admin, if set, is the admin HTTP listener (services/ops/admin): /metrics,
	// and on the gateway the web page of the whole deployment.
	Admin net.Listener
	// StoreTimes are the store's latency histograms; the node observes
	// every commit in them and serves them on Admin (the caller hooks the
	// syncs up when it opens the store). Made if nil.
	StoreTimes *metrics.StoreTimes
	// DataDir, if set, is the store's directory, whose filesystem's free
	// space Admin serves (metrics.NewDiskCollector); the gateway keeps
	// the jobs' retained input in DataDir/input (gateway.Config.Inputs).
	DataDir string
	// NoRetainedInput (gateway, --retain-input=false) keeps no copy of
	// the jobs' input: a job a process loses fails for its client to
	// submit again, and the gateway's disk holds 1.0x less of each
	// unfinished job's input.
	NoRetainedInput bool
}

// WithDefaults returns the config with an in-memory store and a null
// logger where none is given (the stage and the gateway fill their own
// tunables).
func (c Config) WithDefaults() Config {
	if c.Store == nil {
		c.Store = transport.NewMemStore()
	}
	if c.Log == nil {
		c.Log = hclog.NewNullLogger()
	}
	return c
}

// Validate checks the config without changing it.
func (c Config) Validate() error {
	if c.Listener == nil {
		return errors.New("node config: Listener is required")
	}
	if c.Resolver == nil {
		return errors.New("node config: Resolver is required")
	}
	if c.OutboxLimit < 0 || c.Retention < 0 || c.StandingRetention < 0 || c.MaxJobs < 0 {
		return fmt.Errorf("node config: OutboxLimit %d, Retention %s, StandingRetention %s and MaxJobs %d must not be negative", c.OutboxLimit, c.Retention, c.StandingRetention, c.MaxJobs)
	}
	if err := c.RPCLimits.Validate(); err != nil {
		return fmt.Errorf("node config: %w", err)
	}
	st, ok := c.Topology.Stage(c.Instance.Stage)
	if !ok {
		return fmt.Errorf("node config: Instance: topology has no stage %q", c.Instance.Stage)
	}
	if (st.Role == "gateway") != (c.Public != nil) {
		return fmt.Errorf("node config: Public: the gateway, and only the gateway, has a public listener")
	}
	if c.Credentials != nil && c.Credentials.Self != (pki.Identity{Kind: pki.Instance, Name: c.Instance.Name()}) {
		return fmt.Errorf("node config: Credentials are %s's, not instance %s's", c.Credentials.Self, c.Instance.Name())
	}
	return nil
}

// Node is one gateway or shard process, built by New and run by Serve, which
// recovers it from its store first.
type Node struct {
	cfg         Config
	log         hclog.Logger
	Role        string
	Gateway     *gateway.Gateway // set on the gateway
	incarnation uint64
	server      *rpc.Server
	public      *rpc.Server // the gateway's
	pool        *rpc.Pool
	store       *transport.FailStop // cfg.Store: the process stops at its first failed write
	committer   *transport.Committer
	runtime     *stage.Runtime
	sender      *transport.Sender
	resume      []transport.ChannelID // channels with batches to resend
	recovering  atomic.Bool
	recovered   chan struct{} // closed once recovery is over and the node serves
	announced   atomic.Bool
	// How long recovery took to load the store and to rebuild the jobs.
	loadTime, replayTime atomic.Int64          // nanoseconds
	metrics              *metrics.Registry     // nil without Admin
	refusals             *metrics.Refusals     // what the gRPC servers refused
	cluster              *clusterview.Gatherer // the gateway's
}

// Recovered is closed once the node has recovered its store and serves
// every call (until then its servers refuse all but health and status:
// rpc.IsRecovering). It stays open if the node stops first.
func (n *Node) Recovered() <-chan struct{} { return n.recovered }

// Refusals counts what the node's gRPC servers refused (served on
// /metrics with Config.Admin).
func (n *Node) Refusals() *metrics.Refusals { return n.refusals }

// New builds the node: a new incarnation, the stage runtime, the sender,
// the gateway's job service, the gRPC servers (recovering: see
// services/wire/rpc). Nothing is read from the store, served or sent
// before Serve.
func New(cfg Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	st, _ := cfg.Topology.Stage(cfg.Instance.Stage)
	self := cfg.Instance.Name()
	log := cfg.Log.With("stage", st.Name, "instance", self)
	if cfg.StoreTimes == nil {
		cfg.StoreTimes = metrics.NewStoreTimes()
	}
	store := transport.NewFailStop(metrics.TimeCommits(cfg.Store, cfg.StoreTimes.Commit))
	// Floored by the clock, so that a start on an empty store (a wiped
	// disk) is still newer than the starts before it: its neighbours then
	// check what it holds (see transport, "Incarnations").
	incarnation, err := store.NextIncarnation(transport.ClockIncarnation(time.Now()))
	if err != nil {
		return nil, fmt.Errorf("node %s: incarnation: %w", self, err)
	}
	// The jobs' spill files are scratch (sqlops/spill): a start removes
	// what the last incarnation left, and a replay writes them again.
	var spillRoot string
	if cfg.DataDir != "" {
		spillRoot = filepath.Join(cfg.DataDir, "spill")
		if err := os.RemoveAll(spillRoot); err != nil {
			return nil, fmt.Errorf("node %s: spill files: %w", self, err)
		}
	}
	n := &Node{cfg: cfg, log: log, Role: st.Role, incarnation: incarnation, store: store, pool: rpc.NewPool(cfg.Resolver, cfg.Credentials)}
	n.recovering.Store(true)
	n.recovered = make(chan struct{})
	outbox := transport.NewOutbox(store)
	n.sender = transport.NewSender(self, incarnation, outbox, n.pool, log.Named("transport"))
	n.committer = transport.NewCommitter(store, outbox, transport.NewInbox(), n.sender)

	var pool *sqlops.StatePool
	if cfg.StateBytes > 0 {
		pool = sqlops.NewStatePool(cfg.StateBytes)
	}
	scfg := stage.Config{
		Topology: cfg.Topology, Instance: cfg.Instance, Committer: n.committer, Links: n.sender,
		Log: log.Named("stage"), OutboxLimit: cfg.OutboxLimit, MaxJobs: cfg.MaxJobs,
		// A job runs this task's part of its plan, its state past the
		// budget spilled to DataDir/spill/JOB.
		Plans: func(job string, plan []byte) (stage.JobSpec, error) {
			b := cfg.JobBudget
			b.HeldBytes = cfg.MaxHeldBytes
			b.Pool, b.PoolJob = pool, job
			if spillRoot != "" && jobid.Valid(job) {
				b.SpillDir = filepath.Join(spillRoot, job)
				b.Spilled = func(where string, held int64) {
					log.Info("the job spills state to disk", "job", job, "where", where, "state-bytes", held)
				}
			}
			spec, err := sqlops.DecodeSpec(plan, st.Name, b)
			if err == nil {
				pool.Join(job)
			}
			return spec, err
		},
		// A dropped job's spill files go with it (a finished or failed
		// job's tasks remove their own).
		Dropped: func(job string) {
			pool.Leave(job)
			if spillRoot != "" && jobid.Valid(job) {
				if err := os.RemoveAll(filepath.Join(spillRoot, job)); err != nil {
					log.Warn("could not remove a dropped job's spill files", "job", job, "error", err)
				}
			}
		},
	}
	var gatewayMetrics *metrics.Gateway
	if st.Role == "gateway" {
		gatewayMetrics = metrics.NewGateway(metrics.GatewayLabels{
			Files:    []string{schema.Matches.String(), schema.Players.String()},
			Uploads:  []string{gateway.UploadComplete, gateway.UploadPaused, gateway.UploadBroken},
			Outcomes: []string{gateway.OutcomeDone, gateway.OutcomeFailed, gateway.OutcomeDeleted},
		}, func() []*wololov1.ClusterJob { return n.Gateway.ClusterJobs() })
		// The copies of the jobs' inputs a rebuild replays live beside
		// the store, on the same disk: lost with it, when the client
		// submits the job again instead.
		var inputs *inputlog.Dir
		if cfg.DataDir != "" && !cfg.NoRetainedInput {
			if inputs, err = inputlog.Open(filepath.Join(cfg.DataDir, "input")); err != nil {
				return nil, err
			}
		}
		n.Gateway, err = gateway.New(gateway.Config{
			Topology: cfg.Topology, Committer: n.committer, Inputs: inputs,
			Log: log.Named("gateway"), OutboxLimit: cfg.OutboxLimit, Retention: cfg.Retention, StandingRetention: cfg.StandingRetention, MaxJobs: cfg.MaxJobs, UploadIdle: cfg.UploadIdle,
			ClientMaxJobs: cfg.ClientMaxJobs, ClientMaxHeldJobs: cfg.ClientMaxHeldJobs, MaxJobBytes: cfg.MaxJobBytes, ClientMaxBytes: cfg.ClientMaxBytes,
			MaxHeaderBytes: cfg.MaxHeaderBytes, MaxRecordBytes: cfg.MaxRecordBytes, MaxMalformed: cfg.MaxMalformed, Identify: identify(cfg.Credentials),
			MaxQueries: cfg.MaxQueries, MaxTables: cfg.MaxTables, MaxQueryBytes: cfg.MaxQueryBytes, Counters: gatewayMetrics,
			ClientMaxCompiles: cfg.ClientMaxCompiles, MaxCompiles: cfg.MaxCompiles,
			MaxAnswerBytes: cfg.MaxAnswerBytes, ClientMaxAnswerBytes: cfg.ClientMaxAnswerBytes,
		})
		if err != nil {
			return nil, err
		}
		scfg.OnFinish = n.Gateway.Finished
		// A standing job's versions come in every commit's records, not
		// only the final one's (the epoch runtime's OnRecords).
		n.Gateway.HookRecords(&scfg)
		scfg.Known = n.Gateway.Knows
		scfg.PlanOf = func(job string) []byte { plan, _ := n.Gateway.PlanOf(job); return plan }
	}
	// A job that an operator here failed (its budget spent) fails for
	// its client: the gateway hears it. A job that finished or failed
	// here holds no more state: its share of the pool goes back to the
	// others.
	scfg.OnFail = func(ctx context.Context, job, reason string) {
		pool.Leave(job)
		n.reportFailed(ctx, transport.JobFailure{Job: job, Reason: reason}, n.log.With("job", job))
	}
	finished := scfg.OnFinish
	scfg.OnFinish = func(job string, records map[string][]byte) {
		pool.Leave(job)
		if finished != nil {
			finished(job, records)
		}
	}
	if n.runtime, err = stage.New(scfg); err != nil {
		return nil, err
	}
	if n.Gateway != nil {
		n.Gateway.SetDropper(func(ctx context.Context, job string, onlyOthers bool) error {
			return dropEverywhere(ctx, cfg.Topology, cfg.Instance, n.runtime, n.pool, job, onlyOthers)
		})
		n.Gateway.SetIntroducer(func(ctx context.Context, job string, plan []byte) error {
			return introduceEverywhere(ctx, cfg.Topology, cfg.Instance, n.pool, job, plan)
		})
	}

	status := &statusServer{
		role: st.Role, instance: self, incarnation: incarnation, started: time.Now(),
		addr: cfg.Listener.Addr().String(), progress: n.runtime.Progress, store: cfg.Store, announced: &n.announced, recovering: &n.recovering,
		loadTime: &n.loadTime, replayTime: &n.replayTime,
	}
	n.refusals = metrics.NewRefusals()
	collectors := append(cfg.StoreTimes.Collectors(), n.refusals.Collectors()...)
	internalRPC := metrics.NewRPCServerMetrics(rpc.Internal.String())
	collectors = append(collectors, internalRPC)
	n.server, err = rpc.New(rpc.Options{Credentials: cfg.Credentials, Log: log.Named("rpc"), Recovering: true, Status: status, Limits: cfg.RPCLimits, Refusals: n.refusals, Metrics: internalRPC})
	if err != nil {
		return nil, err
	}
	stageServer := transport.NewServer(self, incarnation, n.runtime, log.Named("transport"))
	status.fenced = stageServer.Fenced
	stageServer.OnAnnounce(n.sender.SeeReceiver)
	// Only the gateway's word on a job is final: it holds every job in
	// its table before it introduces it anywhere, so a gateway that does
	// not know a job lost it. A peer shard may not have been told of a
	// job yet (its introduction still on its way: the gateway introduces
	// to every instance at once), and its "never told" on a channel this
	// process sent nothing on says nothing of lost state: seen in
	// TestSQLJobRestartsRecoverExactly, a job failed as lost when a
	// restarted shard announced itself to the other before the
	// gateway's introduction reached it.
	gatewayInstance := deploy.Instance{Stage: cfg.Topology.Gateway().Name}.Name()
	n.sender.CheckAlso(func(receiver string) []transport.ChannelID {
		if receiver != gatewayInstance {
			return nil
		}
		return n.runtime.ChannelsTo(receiver)
	})
	n.sender.OnFailed(n.reportChannelFailed)
	n.sender.RetrySoon(rpc.IsRecovering)
	if n.Gateway != nil {
		n.Gateway.SetSender(n.sender)
		stageServer.VouchFor(n.Gateway.Vouches)
		stageServer.OnFailJob(n.Gateway.FailJob)
		stageServer.OnHeldJobs(n.Gateway.HeldJobs)
	}
	peers := map[string]bool{}
	for _, in := range neighbours(cfg.Topology, cfg.Instance) {
		peers[in.Name()] = true
	}
	stageServer.SetPeers(func(instance string) bool { return peers[instance] })
	if cfg.Credentials != nil {
		stageServer.RequireIdentity(deploy.Instance{Stage: cfg.Topology.Gateway().Name}.Name(), rpc.PeerInstance)
	}
	wololov1.RegisterStageServiceServer(n.server.GRPC(), stageServer)
	if n.Gateway != nil {
		publicRPC := metrics.NewRPCServerMetrics(rpc.Public.String())
		collectors = append(collectors, publicRPC, gatewayMetrics)
		n.public, err = rpc.New(rpc.Options{Plane: rpc.Public, Credentials: cfg.Credentials, Log: log.Named("public"), Recovering: true, Codec: gateway.UploadCodec(), Limits: cfg.RPCLimits, Refusals: n.refusals, Metrics: publicRPC})
		if err != nil {
			return nil, err
		}
		wololov1.RegisterJobServiceServer(n.public.GRPC(), n.Gateway.Service())
		n.cluster = clusterview.NewGatherer(cfg.Topology, clusterview.StatusOver(n.pool.Conn), n.Gateway.ClusterJobs)
		n.Gateway.SetStages(func(ctx context.Context, jobID string) []*wololov1.StageProgress {
			return clusterview.JobStages(cfg.Topology, n.cluster.Get(ctx), jobID)
		})
		wololov1.RegisterClusterServer(n.public.GRPC(), clusterview.Service(n.cluster, n.Gateway.DeleteAnyJob))
	}
	if cfg.Admin != nil {
		n.metrics = metrics.New(st.Name, self, st.Role, version.Current())
		collectors = append(collectors, metrics.NewNodeCollector(metrics.NodeSource{
			Status:  func() *wololov1.GetResponse { r, _ := status.Get(context.Background(), nil); return r },
			Streams: n.runtime.MetricStreams,
		}))
		if cfg.DataDir != "" {
			collectors = append(collectors, metrics.NewDiskCollector(cfg.DataDir))
		}
		err := n.metrics.Register(collectors...)
		if err != nil {
			return nil, fmt.Errorf("node %s: metrics: %w", self, err)
		}
	}
	return n, nil
}

// adminHandler is what the admin listener serves.
func (n *Node) adminHandler() http.Handler {
	h := admin.Handlers{Metrics: n.metrics.Handler(), PublicMetrics: n.metrics.PublicHandler()}
	if n.cluster != nil {
		h.Dashboard = dashboard.Handler(n.cluster.Get)
	}
	return admin.Handler(h, admin.GuardFor(n.cfg.Credentials, n.cfg.Admin, n.cfg.Instance.Name()))
}

// Cluster is the gateway's view of the whole deployment (nil elsewhere).
func (n *Node) Cluster() *clusterview.Gatherer { return n.cluster }

// recover rebuilds the node from its store: the inbox watermarks and the
// outbox (the Committer's), the stage's jobs with their operators replayed
// from their state logs, the gateway's jobs. It runs in Serve, while the
// servers answer that the process is recovering.
func (n *Node) recover(ctx context.Context) error {
	start := time.Now()
	img, err := n.store.Load()
	if err != nil {
		return fmt.Errorf("load store: %w", err)
	}
	loaded := time.Since(start)
	n.loadTime.Store(int64(loaded))
	defer func() { n.replayTime.Store(int64(time.Since(start) - loaded)) }()
	// The gateway's jobs first: its runtime admits the jobs they are. The
	// runtime then reaps what the store holds of jobs it does not admit
	// and takes them out of img, so the Committer restores none of it.
	if n.Gateway != nil {
		if err := n.Gateway.Recover(img); err != nil {
			return fmt.Errorf("recover jobs: %w", err)
		}
	}
	if err := n.forgetDeleted(ctx, img); err != nil {
		return err
	}
	if err := n.runtime.Recover(img); err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	n.resume = n.committer.Restore(img)
	if len(img.Jobs) > 0 {
		n.log.Info("recovered from store", "jobs", len(img.Jobs), "channels-to-resend", len(n.resume),
			"load", loaded.Round(time.Millisecond), "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// Serve serves until ctx ends (nil) or the node cannot go on (that error:
// the store cannot be read back, a write to it failed (transport.FailStop),
// a newer incarnation of it runs, the server broke). It serves at once,
// recovering (health NOT_SERVING, rpc.RecoveringService SERVING, only
// health and Status answered), then recovers the node from its store, and
// only then serves StageService and JobService, announces its incarnation
// and resends what its outbox holds. When it returns nothing touches the
// store any more, so the caller may close it; a Node serves once.
func (n *Node) Serve(ctx context.Context) error {
	defer n.pool.Close()
	var life lifetime.Lifetime
	// The first failed write (a full disk, an I/O error) ends the process,
	// whoever made it: the stage, the gateway's upload, a trim. Whatever
	// else fails because of it (the stage's commit) says so the same way.
	storeFailed := func() error {
		return fmt.Errorf("store write failed; stopping to restart from what the store holds: %w", n.store.Err())
	}
	run := func(what string, serve func(context.Context) error) {
		life.Go(func(ctx context.Context) {
			if err := serve(ctx); err != nil {
				if n.store.Err() != nil {
					life.Fail(storeFailed())
					return
				}
				life.Fail(fmt.Errorf("%s: %w", what, err))
			}
		})
	}
	self := n.cfg.Instance.Name()
	life.Go(func(ctx context.Context) {
		select {
		case <-ctx.Done():
		case <-n.store.Failed():
			life.Fail(storeFailed())
		}
	})
	run("grpc server", func(ctx context.Context) error { return n.server.Serve(ctx, n.cfg.Listener) })
	if n.cfg.Admin != nil {
		run("admin listener", func(ctx context.Context) error { return admin.Serve(ctx, n.cfg.Admin, n.adminHandler()) })
	}
	if n.public != nil {
		run("public grpc server", func(ctx context.Context) error { return n.public.Serve(ctx, n.cfg.Public) })
	}
	// The stage runtime serves from the start: recovery starts the actors
	// of the jobs it rebuilds under it.
	run("stage", n.runtime.Serve)
	n.log.Info("recovering", "address", n.Addr(), "role", n.Role, "incarnation", n.incarnation)
	life.Go(func(ctx context.Context) {
		if err := n.recover(ctx); err != nil {
			if ctx.Err() == nil {
				life.Fail(err)
			}
			return
		}
		if ctx.Err() != nil {
			return
		}
		run("sender", func(ctx context.Context) error {
			if err := n.sender.Serve(ctx); err != nil {
				return fmt.Errorf("%s incarnation %d was replaced: %w", self, n.incarnation, err)
			}
			return nil
		})
		if n.Gateway != nil {
			run("gateway", n.Gateway.Serve)
		}
		for job, reason := range n.runtime.Failed() {
			life.Go(func(ctx context.Context) {
				n.reportFailed(ctx, transport.JobFailure{Job: job, Reason: reason}, n.log.With("job", job))
			})
		}
		for job, err := range n.runtime.Unrestorable() {
			life.Go(func(ctx context.Context) {
				n.reportFailed(ctx, transport.JobFailure{Job: job, Reason: err.Error(), StateLost: true, Lost: self}, n.log.With("job", job))
			})
		}
		// Fence older incarnations of this instance at every receiver
		// before resending anything, then resend what the store holds.
		life.Go(func(ctx context.Context) {
			if announce(ctx, n.cfg.Topology, n.cfg.Instance, n.incarnation, n.pool, n.log, life.Fail) {
				n.announced.Store(true)
			}
			n.sender.Resume(n.resume)
			if n.Gateway != nil {
				// A shard the gateway was sending its channels again
				// (a rebuild alone, which memory alone held) is found
				// behind and rebuilt again, not waited for.
				n.sender.Check(n.committer.Outbox().RetainedChannels())
			}
		})
		n.recovering.Store(false)
		n.server.Recovered()
		if n.public != nil {
			n.public.Recovered()
			n.log.Info("serving clients", "address", n.cfg.Public.Addr().String(), "tls", n.cfg.Credentials != nil)
		}
		close(n.recovered)
		n.log.Info("serving", "address", n.Addr(), "role", n.Role, "incarnation", n.incarnation, "tls", n.cfg.Credentials != nil)
	})
	err := life.Serve(ctx)
	if err != nil {
		n.log.Error("stopped on a fatal error", "error", err)
	}
	return err
}

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
	recovering           *atomic.Bool
	loadTime, replayTime *atomic.Int64
	// fenced lists the senders the process's StageService refuses as
	// older incarnations (transport.Server.Fenced); nil: none.
	fenced func() []transport.Fenced
}

func (s *statusServer) Get(context.Context, *wololov1.GetRequest) (*wololov1.GetResponse, error) {
	r := &wololov1.GetResponse{
		Role: s.role, Instance: s.instance, Incarnation: s.incarnation, Pid: int64(os.Getpid()),
		UptimeSeconds: time.Since(s.started).Seconds(), Address: s.addr,
		Store: storeCounters(s.store), Announced: s.announced.Load(), Recovering: s.recovering.Load(),
	}
	if s.fenced != nil {
		for _, f := range s.fenced() {
			r.Fenced = append(r.Fenced, &wololov1.FencedInstance{Instance: f.Instance, RefusedIncarnation: f.Refused, NewestIncarnation: f.Newest,
				Refusals: f.Refusals, Seconds: time.Since(f.Since).Seconds()})
		}
	}
	if !r.Recovering { // the runtime's jobs are being rebuilt until then
		r.Jobs = s.progress()
		r.RecoveryLoadSeconds = time.Duration(s.loadTime.Load()).Seconds()
		r.RecoveryReplaySeconds = time.Duration(s.replayTime.Load()).Seconds()
	}
	return r, nil
}

func storeCounters(st transport.Store) *wololov1.StoreCounters {
	stats := st.Stats()
	_, inMemory := st.(*transport.MemStore)
	return &wololov1.StoreCounters{Commits: stats.Commits, Bytes: stats.Bytes, Syncs: stats.Syncs, Durable: !inMemory}
}

// identify is the gateway's Identify: a JobService caller is the client its
// certificate names (the public plane's policy admits only clients). Nil
// without credentials: every caller is the anonymous client.
func identify(creds *pki.Credentials) func(context.Context) (string, error) {
	if creds == nil {
		return nil
	}
	return func(ctx context.Context) (string, error) {
		id, ok := pki.Peer(ctx)
		if !ok || id.Kind != pki.Client {
			return "", status.Error(codes.Unauthenticated, "JobService calls need a client certificate of the deployment's CA")
		}
		return id.Name, nil
	}
}
