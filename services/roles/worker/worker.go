// Package worker is the standalone form of one graph process:
// `wololo worker --instance shard-1` runs that stage instance, and
// `wololo gateway` runs the gateway, each on the port the topology gives it,
// finding its peers by the same rule. SIGTERM (the context) stops it
// gracefully.
//
// It parses flags into a node.Config and runs the node; nothing else.
package worker

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/memlimit"
	"github.com/wololo/wololo/services/base/cpuprofile"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/logflags"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/ops/admin"
	"github.com/wololo/wololo/services/ops/metrics"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/rpc"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/durable"
	"github.com/wololo/wololo/transport/segstore"
)

// The soft memory limit's default is three quarters of --memory-budget
// (sqlops.MemoryBudget): 384 MiB of the default 512. Measured on the
// hand-written graph of the four queries (retired since) at full scale,
// the biggest process, a shard, peaked near 470 MiB without a limit and
// near 430 MiB with one of 320 MiB, at no measurable cost in time,
// because most of what a limit frees is garbage the collector would
// otherwise leave for later.

// RunGateway is `wololo gateway`.
func RunGateway(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return run(ctx, "gateway", args, stderr)
}

// Run is `wololo worker`.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return run(ctx, "worker", args, stderr)
}

func run(ctx context.Context, cmd string, args []string, stderr io.Writer) error {
	usage := "usage: wololo worker --instance NAME [flags]\n\nRuns one instance of a task of the deployment (a shard, or the gateway) on the port the topology gives it.\n"
	if cmd == "gateway" {
		usage = "usage: wololo gateway [flags]\n\nRuns the gateway of a deployment: the public JobService, and the sink of the answers.\n"
	}
	fs := cli.NewFlagSet("wololo "+cmd, usage, stderr)
	instance := fs.String("instance", "", "instance to run, e.g. shard-1 (required)")
	if cmd == "gateway" {
		*instance = "gateway-0"
	}
	topoPath := fs.String("topology", "", "topology JSON file (default: $WOLOLO_TOPOLOGY if set, else the embedded one)")
	listen := fs.String("listen", "", "internal listen address, for the other processes (default: 0.0.0.0 on the topology's port)")
	public := ""
	if cmd == "gateway" {
		fs.StringVar(&public, "public", "", "public listen address, for clients (default: 0.0.0.0 on the topology's public port)")
	}
	serves := "/metrics"
	if cmd == "gateway" {
		serves = "/metrics and the web page of the whole deployment at /"
	}
	adminAddr := fs.String("admin", "", "admin HTTP listen address, internal like Status: "+serves+` (default: 127.0.0.1, loopback only, on the topology's admin port, 1000 above the gRPC one; 0.0.0.0:PORT for a scraper elsewhere; "none": no admin listener)`)
	tlsFlags := tlsflags.Register(fs, "")
	hosts := fs.String("hosts", "127.0.0.1", `peer host pattern; "{instance}" becomes the peer's instance name`)
	peers := fs.String("peers", "", "peers file (JSON: instance -> host:port), re-read when it changes; overrides --hosts")
	dataDir := fs.String("data", "", "data directory of the durable store; without it state is kept in memory and lost on exit")
	engine := fs.String("store", StoreSegments, "the durable store's engine: "+StoreSegments+" (append-only segment files) or "+StorePebble+" (the Pebble LSM, for comparison)")
	retention := fs.Duration("retention", 0, "gateway: drop jobs without client activity for this long (default 24h); an open standing job waiting for its next append has --standing-retention")
	standingRetention := fs.Duration("standing-retention", 0, "gateway: drop an open standing job, every append in, without client activity for this long (default 720h, 30 days); an append's upload left unfinished has --retention")
	logFlags := logflags.Register(fs, "info")
	uploadIdle := fs.Duration("upload-idle", 0, "gateway: end an upload that sends nothing for this long, freeing its file for a resume (default 2m)")
	clientMaxJobs := fs.Int("client-max-jobs", 0, "gateway: unfinished jobs one client holds at once (default 16)")
	clientMaxHeldJobs := fs.Int("client-max-held-jobs", 0, "gateway: jobs one client holds at once, finished ones included; at the limit its oldest finished job is dropped for a new one (default 64, a sixteenth of --max-jobs; at least --client-max-jobs)")
	maxHeaderBytes := fs.Int("max-header-bytes", 0, "gateway: bytes of one file's header row in a job (default 64 KiB, at most 1 MiB)")
	maxQueries := fs.Int("max-queries", 0, "gateway: SQL queries of one job (default 32)")
	maxHeld := fs.Int64("max-held-bytes", 0, "gateway: bytes of rows one operator of a job's SQL plan holds there until its inputs end, a query's answer; past it the job fails (default 256 MiB)")
	maxAnswerBytes := fs.Int64("max-answer-bytes", 0, "gateway: bytes of one job's answers together (its result files), which the gateway holds until the job is fetched and deleted; past it the job fails (default 256 MiB)")
	clientMaxAnswerBytes := fs.Int64("client-max-answer-bytes", 0, "gateway: bytes of the answers of one client's finished jobs held together; past it its oldest finished jobs are dropped for a new one's answers (default 1 GiB; at least --max-answer-bytes)")
	jobStateBytes := fs.Int64("job-max-state-bytes", 0, "bytes of values one job's SQL plan may hold in this process: its tables' keys, a join's rows, an aggregate's groups, rows waiting for the other side of a join; past it a join's rows and an aggregate's groups spill to --data/spill (with --data), and then, or without, the job fails (default 768 MiB)")
	spillBytes := fs.Int64("job-max-spill-bytes", 0, "bytes of spill files one job's SQL plan may write in this process (--data/spill) once its state is past --job-max-state-bytes; past it the job fails (default 16 GiB)")
	joinRows := fs.Int64("job-max-join-rows", 0, "rows one job's joins may make in this process, in all; past it the job fails (default 67108864)")
	stepBytes := fs.Int64("job-max-step-bytes", 0, "bytes of rows one batch given to a job's SQL plan may make this process send on (a join's rows), held until its commit; past it the job fails (default 128 MiB)")
	maxTables := fs.Int("max-tables", 0, "gateway: extra tables of one job, --table NAME=F (default 8)")
	maxQueryBytes := fs.Int("max-query-bytes", 0, "gateway: bytes of one job's SQL query texts together (default 64 KiB)")
	clientMaxCompiles := fs.Int("client-max-compiles", 0, "gateway: CreateJob calls of one client compiling queries at once; past it a call is refused at once (ResourceExhausted) (default 2)")
	maxCompiles := fs.Int("max-compiles", 0, "gateway: CreateJob calls of all clients compiling queries at once; past it a call waits for one to finish, as long as its deadline allows (default the cores the process may use, at least 4)")
	maxJobBytes := fs.Int64("max-job-bytes", 0, "gateway: declared bytes of one job's two files together (default 8 GiB)")
	clientMaxBytes := fs.Int64("client-max-bytes", 0, "gateway: declared bytes of one client's unfinished jobs together (default 16 GiB)")
	maxRecordBytes := fs.Int("max-record-bytes", 0, "gateway: a data record longer than this is skipped and counted as malformed (default 1 MiB, at most 2 MiB; the reference's --max-record-bytes must match)")
	maxMalformed := fs.Float64("max-malformed", schema.DefaultMaxMalformed, "gateway: share of a file's records that may be malformed, 0 to 1 (1: no limit), for a job whose client sets none; past it the job fails at the end of that file's upload (up to 10 malformed records are always tolerated unless it is 0)")
	retainInput := fs.Bool("retain-input", true, "gateway with --data: keep a copy of each job's uploaded input in DATA/input until the job is over (1.0x the input of every unfinished job), from which a job a process lost runs again without its client, and the batches a batch job sent the shards in the store (about 0.35x its input), from which a shard that lost its disk is rebuilt alone; false: such a job fails, and an attached client submits it again")
	maxJobs := fs.Int("max-jobs", 0, "jobs this process holds at once; more are refused (ResourceExhausted) until one is fetched (default 1024)")
	outboxLimit := fs.Int("outbox-limit", 0, "unacknowledged batches per output channel before input stops (default 32)")
	var rpcLimits rpc.Limits
	rpcLimits.RegisterFlags(fs)
	memBudget := fs.Int64("memory-budget", 0, "bytes of memory this process keeps within (default 512 MiB): its soft memory limit is three quarters of it (unless --memory-limit-mib sets another), and the state of the jobs it runs half of it less 64 MiB, shared among them (an even share each, or what the others leave when that is more); a job's joins and aggregates spill to --data/spill past its share (docs/operations.md)")
	memLimit := fs.Int("memory-limit-mib", -1, "soft memory limit in MiB: the garbage collector works harder near it; a live heap above it raises it to half over the live heap, up to fifteen sixteenths of --memory-budget while that leaves the live heap an eighth more, so that the collector does not run back to back (default: three quarters of --memory-budget; 0: none; the GOMEMLIMIT environment variable wins, fixed)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of this process to this file until it stops")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := cli.Required(fs, "instance"); err != nil {
		return err
	}
	limit := schema.MalformedLimit(*maxMalformed)
	if err := limit.Valid(); err != nil {
		return cli.Usagef(fs, "%v", err)
	}
	top, err := deploy.Select(*topoPath)
	if err != nil {
		return err
	}
	in, err := deploy.ParseInstance(*instance)
	if err != nil {
		return err
	}
	port := top.Port(in)
	if port == 0 {
		return fmt.Errorf("instance %s is not in the topology", *instance)
	}
	addr := *listen
	if addr == "" {
		addr = net.JoinHostPort("0.0.0.0", strconv.Itoa(port))
	}
	// Every line names the process, the store's included; the node adds
	// the same keys to its own (hclog keeps one of each).
	log := logFlags.Logger("wololo", stderr).With("stage", in.Stage, "instance", in.Name())
	creds, err := tlsFlags.Load(in.Name(), log)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	var pl net.Listener
	if cmd == "gateway" {
		if public == "" {
			public = net.JoinHostPort("0.0.0.0", strconv.Itoa(top.PublicPort()))
		}
		if pl, err = net.Listen("tcp", public); err != nil {
			l.Close()
			return fmt.Errorf("listen for clients on %s: %w", public, err)
		}
		defer pl.Close()
	}
	softLimit, ceiling, stateBytes := sqlops.MemoryBudget(*memBudget)
	if *memLimit < 0 {
		*memLimit = int(softLimit >> 20)
	}
	if *memLimit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		// Raised over a live heap larger than it (memlimit), so that
		// the collector never runs back to back.
		defer memlimit.Start(int64(*memLimit)<<20, max(ceiling, int64(*memLimit)<<20), memlimit.DefaultHeadroom, log)()
	}
	stopProfile, err := cpuprofile.Start(*cpuProfile)
	if err != nil {
		l.Close()
		return err
	}
	defer stopProfile()
	var resolver rpc.Resolver = deploy.HostResolver(top, *hosts)
	if *peers != "" {
		resolver = deploy.PeersResolver(*peers)
	}
	al, err := admin.Listen(*adminAddr, top.AdminPort(in))
	if err != nil {
		l.Close()
		return err
	}
	if al != nil {
		defer al.Close()
	}
	times := metrics.NewStoreTimes()
	var store transport.Store
	if *dataDir != "" {
		s, err := OpenStore(*engine, *dataDir, log.Named("store"), times.ObserveSync)
		if err != nil {
			l.Close()
			return err
		}
		defer s.Close()
		store = s
	}
	n, err := node.New(node.Config{
		Topology: top, Instance: in, Listener: l, Public: pl, Credentials: creds, Resolver: resolver, Store: store, Log: log, Retention: *retention, StandingRetention: *standingRetention,
		OutboxLimit: *outboxLimit, MaxJobs: *maxJobs, UploadIdle: *uploadIdle,
		ClientMaxJobs: *clientMaxJobs, ClientMaxHeldJobs: *clientMaxHeldJobs, MaxJobBytes: *maxJobBytes, ClientMaxBytes: *clientMaxBytes,
		MaxHeaderBytes: *maxHeaderBytes, MaxQueries: *maxQueries, MaxHeldBytes: *maxHeld, JobBudget: sqlops.Budget{StateBytes: *jobStateBytes, JoinRows: *joinRows, StepBytes: *stepBytes, SpillBytes: *spillBytes}, StateBytes: stateBytes, MaxTables: *maxTables, MaxQueryBytes: *maxQueryBytes, MaxRecordBytes: *maxRecordBytes, MaxMalformed: &limit,
		ClientMaxCompiles: *clientMaxCompiles, MaxCompiles: *maxCompiles, MaxAnswerBytes: *maxAnswerBytes, ClientMaxAnswerBytes: *clientMaxAnswerBytes,
		Admin: al, StoreTimes: times, RPCLimits: rpcLimits, DataDir: *dataDir, NoRetainedInput: !*retainInput,
	})
	if err != nil {
		l.Close()
		return err
	}
	if err := n.Serve(ctx); err != nil {
		return err // the node logged it
	}
	log.Info("stopped")
	return nil
}

// The durable store's engines.
const (
	StoreSegments = "segments"
	StorePebble   = "pebble"
)

// OpenStore opens the durable store of the given engine in dir. The
// segment store is the default: it writes every payload once, appended and
// synced, where Pebble writes it again through memtables and compactions
// (transport/segstore's doc has the figures); Pebble stays selectable to
// compare them. onSync, if set, is told how long each sync took.
func OpenStore(engine, dir string, log hclog.Logger, onSync func(time.Duration)) (transport.Store, error) {
	switch engine {
	case StoreSegments:
		return segstore.Open(dir, segstore.Options{Log: log, OnSync: onSync})
	case StorePebble:
		return durable.Open(dir, durable.Options{Log: log, OnSync: onSync})
	}
	return nil, fmt.Errorf("%w: --store %q: want %s or %s", cli.ErrUsage, engine, StoreSegments, StorePebble)
}
