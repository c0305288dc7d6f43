package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/inputlog"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/transport"
)

// Config is what a Gateway needs.
type Config struct {
	Topology deploy.Topology
	// Committer is the process's exactly-once step (shared with the sink's
	// stage runtime); its Store holds the jobs' records.
	Committer *transport.Committer
	Log       hclog.Logger
	// Inputs, when set, keeps a copy of every job's uploaded input until
	// the job is over, from which a job that a process lost is run again
	// (rebuild.go); nil keeps none, and such a job fails (state lost) for
	// its client to submit again.
	Inputs *inputlog.Dir
	// OutboxLimit is the unacknowledged batches per channel before an
	// upload waits; stage.DefaultOutboxLimit if 0.
	OutboxLimit int
	// Retention is how long a job may go without any client activity
	// before it is dropped everywhere; DefaultRetention if 0.
	Retention time.Duration
	// StandingRetention is how long an open standing job with every
	// append in (waiting for the next) may go without client activity
	// before it is dropped; DefaultStandingRetention if 0. A standing
	// job with an append not all uploaded (an abandoned upload), or
	// closed, or failed, has Retention as any job.
	StandingRetention time.Duration
	// MaxJobs is how many jobs the gateway holds at once (created and not
	// yet dropped); stage.DefaultMaxJobs if 0.
	MaxJobs int
	// UploadIdle ends an upload that sends no frame for this long, freeing
	// its file for a resume; DefaultUploadIdle if 0.
	UploadIdle time.Duration
	// Identify names the client of a JobService call (its certificate's
	// name); its error is the call's (Unauthenticated, PermissionDenied).
	// Nil: every caller is the one anonymous client "" (--insecure).
	Identify func(ctx context.Context) (string, error)
	// ClientMaxJobs, ClientMaxHeldJobs, MaxJobBytes and ClientMaxBytes are
	// the per-client quotas (see Limits); DefaultClientMaxJobs,
	// DefaultClientMaxHeldJobs, DefaultMaxJobBytes and DefaultClientMaxBytes
	// if 0. ClientMaxHeldJobs may not be below ClientMaxJobs.
	ClientMaxJobs     int
	ClientMaxHeldJobs int
	MaxJobBytes       int64
	ClientMaxBytes    int64
	// MaxHeaderBytes bounds each file's header row in a CreateJob (its
	// column names, each with a separator); DefaultMaxHeaderBytes if 0, at
	// most schema.MaxHeaderBytes.
	MaxHeaderBytes int
	// MaxRecordBytes bounds one data record: a longer one is skipped and
	// counted as malformed (schema.MaxRecordBytes if 0).
	MaxRecordBytes int
	// MaxMalformed is the share of a file's records that may be malformed
	// in a job whose client sets none (schema.MalformedLimit); nil:
	// schema.DefaultMaxMalformed.
	MaxMalformed *schema.MalformedLimit
	// Counters counts uploads, committed records and job outcomes
	// (/metrics); nil counts nothing.
	Counters Counters
	// MaxQueries bounds a job's SQL queries (CreateJobRequest.queries),
	// MaxQueryBytes their texts' bytes together; DefaultMaxQueries and
	// DefaultMaxQueryBytes if 0.
	MaxQueries int
	// MaxTables bounds a job's extra tables (CreateJobRequest.tables);
	// DefaultMaxTables when 0.
	MaxTables     int
	MaxQueryBytes int
	// ClientMaxCompiles bounds the CreateJob calls of one client that
	// compile queries at once (past it: ResourceExhausted at once),
	// MaxCompiles those of all clients (past it a call waits, as long as
	// its context allows: compiles.go); DefaultClientMaxCompiles and
	// DefaultMaxCompiles() if 0.
	ClientMaxCompiles int
	MaxCompiles       int
	// MaxAnswerBytes bounds a job's answers together (its result files):
	// a job past it fails instead of being held. ClientMaxAnswerBytes
	// bounds a client's held answers (its done jobs' together): past it
	// the client's oldest finished jobs are dropped (answers.go).
	// DefaultMaxAnswerBytes and DefaultClientMaxAnswerBytes if 0;
	// ClientMaxAnswerBytes may not be below MaxAnswerBytes.
	MaxAnswerBytes       int64
	ClientMaxAnswerBytes int64
	// MaxRebuilds is how many times one job is run again from its
	// retained input after processes lost its state (rebuild.go); a loss
	// past it fails the job, not marked as lost state. DefaultMaxRebuilds
	// if 0.
	MaxRebuilds int
	// Epochs is the epoch runtime standing jobs run on (epochs.go);
	// nil: DefaultEpochRuntime.
	Epochs *EpochRuntime
	// EpochCutter makes, for an upload of a standing job with
	// --epoch-every (cuts.go), what says when its next epoch is due;
	// nil: WallCutter, the wall clock. Tests give a cutter of their own.
	EpochCutter func(every time.Duration) Cutter
}

// DefaultMaxRebuilds is how many times the gateway runs one job again
// after a lost state: a wiped disk or two under a job is bad luck, more is
// a fault (or a forged report) that running it again will not get past.
const DefaultMaxRebuilds = 3

// DefaultClientMaxCompiles is how many CreateJob calls of one client
// compile queries at once: a client that submits jobs one after the other
// never waits, and one that floods the gateway takes two cores at most.
const DefaultClientMaxCompiles = 2

// DefaultMaxCompiles is how many CreateJob calls compile queries at once,
// of all clients: the cores the process may use (GOMAXPROCS), and at
// least twice DefaultClientMaxCompiles, so that one client's compiles
// always leave room for another's.
func DefaultMaxCompiles() int { return max(runtime.GOMAXPROCS(0), 2*DefaultClientMaxCompiles) }

// The per-client quotas' defaults. A client holds at most 64 jobs,
// finished ones included: a sixteenth of the jobs a process holds
// (stage.DefaultMaxJobs, 1024), so that no one client fills the gateway.
const (
	DefaultClientMaxJobs     = 16
	DefaultClientMaxHeldJobs = 64
	DefaultMaxJobBytes       = 8 << 30
	DefaultClientMaxBytes    = 16 << 30
)

// DefaultMaxHeaderBytes bounds a header row: 64 KiB, hundreds of times a
// real one (about 100 bytes), and a job's two then hold at most 128 KiB
// of the gateway's memory (see the package doc).
const DefaultMaxHeaderBytes = 64 << 10

// DefaultUploadIdle is how long an upload may send nothing.
const DefaultUploadIdle = 2 * time.Minute

// DefaultRetention is how long an abandoned job is kept.
const DefaultRetention = 24 * time.Hour

// DefaultStandingRetention is how long an open standing job is kept
// between appends without client activity: a user who appends once a
// day, or once a week, keeps the job; one forgotten for a month is
// dropped (its retained appends and quotas freed).
const DefaultStandingRetention = 30 * 24 * time.Hour

// WithDefaults returns the config with every unset tunable at its default.
func (c Config) WithDefaults() Config {
	if c.Log == nil {
		c.Log = hclog.NewNullLogger()
	}
	if c.OutboxLimit == 0 {
		c.OutboxLimit = stage.DefaultOutboxLimit
	}
	if c.StandingRetention == 0 {
		c.StandingRetention = DefaultStandingRetention
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.MaxJobs == 0 {
		c.MaxJobs = stage.DefaultMaxJobs
	}
	if c.UploadIdle == 0 {
		c.UploadIdle = DefaultUploadIdle
	}
	if c.ClientMaxJobs == 0 {
		c.ClientMaxJobs = DefaultClientMaxJobs
	}
	if c.ClientMaxHeldJobs == 0 {
		c.ClientMaxHeldJobs = DefaultClientMaxHeldJobs
	}
	if c.MaxHeaderBytes == 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.MaxJobBytes == 0 {
		c.MaxJobBytes = DefaultMaxJobBytes
	}
	if c.ClientMaxBytes == 0 {
		c.ClientMaxBytes = DefaultClientMaxBytes
	}
	if c.MaxMalformed == nil {
		l := schema.MalformedLimit(schema.DefaultMaxMalformed)
		c.MaxMalformed = &l
	}
	if c.Identify == nil {
		c.Identify = func(context.Context) (string, error) { return "", nil }
	}
	if c.Counters == nil {
		c.Counters = noCounters{}
	}
	if c.MaxTables == 0 {
		c.MaxTables = DefaultMaxTables
	}
	if c.MaxQueries == 0 {
		c.MaxQueries = DefaultMaxQueries
	}
	if c.MaxQueryBytes == 0 {
		c.MaxQueryBytes = DefaultMaxQueryBytes
	}
	if c.ClientMaxCompiles == 0 {
		c.ClientMaxCompiles = DefaultClientMaxCompiles
	}
	if c.MaxCompiles == 0 {
		c.MaxCompiles = DefaultMaxCompiles()
	}
	if c.MaxAnswerBytes == 0 {
		c.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if c.ClientMaxAnswerBytes == 0 {
		c.ClientMaxAnswerBytes = DefaultClientMaxAnswerBytes
	}
	if c.MaxRebuilds == 0 {
		c.MaxRebuilds = DefaultMaxRebuilds
	}
	if c.Epochs == nil {
		e := DefaultEpochRuntime
		c.Epochs = &e
	}
	if c.EpochCutter == nil {
		c.EpochCutter = WallCutter
	}
	return c
}

// Validate checks the config without changing it: the Committer is set,
// no tunable is negative, and the topology sends both input streams from
// the gateway.
func (c Config) Validate() error {
	if c.Committer == nil {
		return errors.New("gateway config: Committer is required")
	}
	if c.OutboxLimit < 0 || c.Retention < 0 || c.StandingRetention < 0 || c.MaxJobs < 0 || c.UploadIdle < 0 {
		return fmt.Errorf("gateway config: OutboxLimit %d, Retention %s, StandingRetention %s, MaxJobs %d and UploadIdle %s must not be negative", c.OutboxLimit, c.Retention, c.StandingRetention, c.MaxJobs, c.UploadIdle)
	}
	if c.MaxRecordBytes > schema.MaxRecordLimit {
		return fmt.Errorf("gateway config: MaxRecordBytes %d: at most %d (a row must fit a batch message)", c.MaxRecordBytes, schema.MaxRecordLimit)
	}
	if c.ClientMaxJobs < 0 || c.ClientMaxHeldJobs < 0 || c.MaxJobBytes < 0 || c.ClientMaxBytes < 0 || c.MaxRecordBytes < 0 || c.MaxHeaderBytes < 0 {
		return fmt.Errorf("gateway config: ClientMaxJobs %d, ClientMaxHeldJobs %d, MaxJobBytes %d, ClientMaxBytes %d, MaxRecordBytes %d and MaxHeaderBytes %d must not be negative", c.ClientMaxJobs, c.ClientMaxHeldJobs, c.MaxJobBytes, c.ClientMaxBytes, c.MaxRecordBytes, c.MaxHeaderBytes)
	}
	if c.MaxTables < 0 {
		return fmt.Errorf("gateway config: MaxTables %d must not be negative", c.MaxTables)
	}
	if c.ClientMaxCompiles < 0 || c.MaxCompiles < 0 || c.MaxRebuilds < 0 {
		return fmt.Errorf("gateway config: ClientMaxCompiles %d, MaxCompiles %d and MaxRebuilds %d must not be negative", c.ClientMaxCompiles, c.MaxCompiles, c.MaxRebuilds)
	}
	if c.MaxAnswerBytes < 0 || c.ClientMaxAnswerBytes < 0 {
		return fmt.Errorf("gateway config: MaxAnswerBytes %d and ClientMaxAnswerBytes %d must not be negative", c.MaxAnswerBytes, c.ClientMaxAnswerBytes)
	}
	if d := c.WithDefaults(); d.ClientMaxAnswerBytes < d.MaxAnswerBytes {
		return fmt.Errorf("gateway config: ClientMaxAnswerBytes %d (--client-max-answer-bytes) is below MaxAnswerBytes %d (--max-answer-bytes): a client holds the answers of the job it waits for", d.ClientMaxAnswerBytes, d.MaxAnswerBytes)
	}
	if c.MaxQueries < 0 || c.MaxQueryBytes < 0 {
		return fmt.Errorf("gateway config: MaxQueries %d and MaxQueryBytes %d must not be negative", c.MaxQueries, c.MaxQueryBytes)
	}
	if c.MaxMalformed != nil {
		if err := c.MaxMalformed.Valid(); err != nil {
			return fmt.Errorf("gateway config: %w", err)
		}
	}
	if c.MaxHeaderBytes > schema.MaxHeaderBytes {
		return fmt.Errorf("gateway config: MaxHeaderBytes %d: at most %d (no longer row is a header)", c.MaxHeaderBytes, schema.MaxHeaderBytes)
	}
	if d := c.WithDefaults(); d.ClientMaxHeldJobs < d.ClientMaxJobs {
		return fmt.Errorf("gateway config: ClientMaxHeldJobs %d (--client-max-held-jobs) is below ClientMaxJobs %d (--client-max-jobs): a client holds its unfinished jobs", d.ClientMaxHeldJobs, d.ClientMaxJobs)
	}
	return nil
}

// Dropper deletes a job's state at every process of the deployment, this one
// included unless onlyOthers; it retries until each has done so or ctx
// ends.
type Dropper func(ctx context.Context, job string, onlyOthers bool) error

// pendingDrop is a job to drop at the other processes (Dropper), and here
// too unless onlyOthers (a job the graph refused, whose failure the
// gateway keeps for its client: introduce.go).
type pendingDrop struct {
	id         string
	onlyOthers bool
}

// Gateway is the public endpoint: the job domain (jobs.go), the upload path
// (upload.go) and the JobService adapter (service.go). Its lifecycle is
// Serve, which runs the retention sweeper and the drops of deleted jobs.
type Gateway struct {
	cfg  Config
	self deploy.Instance
	drop Dropper
	jobs *jobs
	// compiles bounds the CreateJob calls compiling at once (compiles.go).
	compiles *compileSlots
	// introducer tells the other processes of a new job (introduce.go).
	introducer Introducer
	// epochs is the runtime of standing jobs' epochs (epochs.go).
	epochs EpochRuntime

	// stages says where the graph stands on a job (SetStages).
	stages StagesFunc
	// reporters are the instances that run every job (the topology's),
	// the only ones whose reports fail a job (FailJob).
	reporters map[string]bool
	// sender is the process's, for rebuilding a lost shard alone
	// (SetSender, alone.go), and alone what those rebuilds were.
	sender *transport.Sender
	alone  alone

	mu            sync.Mutex
	pending       []pendingDrop // jobs to drop everywhere, for Serve
	wake          chan struct{} // signals pending (capacity 1)
	introductions map[string]*introduction
}

// New returns a Gateway.
func New(cfg Config) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	shape, shapeErr := physical.ShapeOf(cfg.Topology)
	reporters := map[string]bool{}
	for _, in := range cfg.Topology.Instances() {
		reporters[in.Name()] = true
	}
	g := &Gateway{
		cfg: cfg, self: deploy.Instance{Stage: cfg.Topology.Gateway().Name}, epochs: *cfg.Epochs,
		reporters:  reporters,
		drop:       func(context.Context, string, bool) error { return nil },
		introducer: func(context.Context, string, []byte) error { return nil },
		jobs: &jobs{store: cfg.Committer.Store(), outbox: cfg.Committer.Outbox(), inputs: cfg.Inputs, log: cfg.Log, byID: map[string]*job{}, byName: map[ownedName]*job{}, limits: Limits{
			MaxJobs: cfg.MaxJobs, ClientMaxJobs: cfg.ClientMaxJobs, ClientMaxHeldJobs: cfg.ClientMaxHeldJobs,
			MaxJobBytes: cfg.MaxJobBytes, ClientMaxBytes: cfg.ClientMaxBytes, MaxHeaderBytes: cfg.MaxHeaderBytes,
			MaxMalformed: *cfg.MaxMalformed, MaxQueries: cfg.MaxQueries, MaxQueryBytes: cfg.MaxQueryBytes, MaxTables: cfg.MaxTables,
		}, shape: shape, shapeErr: shapeErr, makeStanding: cfg.Epochs.MakeStanding},
		compiles:      newCompileSlots(cfg.ClientMaxCompiles, cfg.MaxCompiles),
		wake:          make(chan struct{}, 1),
		introductions: map[string]*introduction{},
	}
	g.jobs.over, g.jobs.dropped = g.letGo, g.alone.forget
	cfg.Committer.Outbox().NotifyCaughtUp(g.shardCaughtUp)
	return g, nil
}

// Service is the gateway's JobService, to register on a gRPC server.
func (g *Gateway) Service() wololov1.JobServiceServer { return jobService{g: g} }

// SetDropper sets how a deleted job is dropped at the other processes.
// Call it before Serve.
func (g *Gateway) SetDropper(d Dropper) { g.drop = d }

// StagesFunc says where the graph stands on a job (by its internal id):
// per stage, the rows applied and the instances that do not answer.
type StagesFunc func(ctx context.Context, jobID string) []*wololov1.StageProgress

// SetStages sets where a job that runs gets its Job.stages from (the
// node's view of the deployment); without it they stay empty. Call it
// before serving.
func (g *Gateway) SetStages(f StagesFunc) { g.stages = f }

// jobStages is a job's stages while it is neither done nor failed.
func (g *Gateway) jobStages(ctx context.Context, jobID string, state wololov1.JobState) []*wololov1.StageProgress {
	if g.stages == nil || state == wololov1.JobState_JOB_STATE_DONE || state == wololov1.JobState_JOB_STATE_FAILED {
		return nil
	}
	return g.stages(ctx, jobID)
}

// Recover rebuilds the jobs the store holds and the deletions it
// remembers (deleted.go: their records are taken out of img, being no
// job's), and queues the drops of the jobs that were deleted (and of those
// whose description is unreadable), which Serve carries out. Call it
// once, before serving.
func (g *Gateway) Recover(img *transport.Image) error {
	unreadable, err := g.jobs.recover(img)
	if err != nil {
		return err
	}
	g.queueDrops(append(unreadable, img.Dropped...)...)
	g.jobs.dropStaleInputs()
	return nil
}

// Serve runs until ctx ends: it drops the jobs without client activity for
// longer than the retention, and tells every process to drop each deleted
// job, retrying until they have. It returns nil once those have stopped.
func (g *Gateway) Serve(ctx context.Context) error {
	g.resumeReplays()
	g.resumeAdded()
	every := min(g.cfg.Retention/10, g.cfg.StandingRetention/10, time.Minute)
	sweep := time.NewTicker(every)
	defer sweep.Stop()
	var drops sync.WaitGroup
	defer drops.Wait()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sweep.C:
			for _, d := range g.jobs.idle(time.Now(), g.cfg.Retention, g.cfg.StandingRetention) {
				id, flag := d.id, d.flag
				g.cfg.Log.Info("dropping abandoned job", "job", id, "flag", flag)
				if err := g.deleteJob(id, "dropped by the gateway: no client activity for its retention ("+flag+")"); err != nil {
					g.cfg.Log.Error("drop abandoned job", "job", id, "error", err)
				}
			}
		case <-g.wake:
			g.mu.Lock()
			ids := g.pending
			g.pending = nil
			g.mu.Unlock()
			for _, d := range ids {
				drops.Add(1)
				go func() {
					defer drops.Done()
					if err := g.drop(ctx, d.id, d.onlyOthers); err != nil && ctx.Err() == nil {
						g.cfg.Log.Error("could not drop the job everywhere", "job", d.id, "error", err)
					}
				}()
			}
		}
	}
}

func (g *Gateway) queueDrops(ids ...string) {
	for _, id := range ids {
		g.queueDrop(pendingDrop{id: id})
	}
}

// queueDrop has Serve drop a job everywhere (or at the others only).
func (g *Gateway) queueDrop(d pendingDrop) {
	g.mu.Lock()
	g.pending = append(g.pending, d)
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default: // Serve has been woken already
	}
}

// Finished is the sink runtime's OnFinish: the job's results are in.
func (g *Gateway) Finished(id string, records map[string][]byte) {
	j, err := g.jobs.get(id)
	if err != nil {
		g.cfg.Log.Warn("results for an unknown job", "job", id)
		return
	}
	if reason := records[schema.FailedResultsRecord]; reason != nil {
		// The job's plan gave no results: an answer larger than the
		// gateway holds (sqlops.MaxHeldBytes). It fails, and says why.
		if err := g.FailJob(transport.JobFailure{Job: id, Reporter: g.self.Name(), Reason: string(reason)}); err != nil {
			g.cfg.Log.Error("recording a job's failure", "job", id, "error", err)
		}
		return
	}
	// A standing job's last version may come in its final commit: it is
	// published before the job is done, so that no watcher sees the job
	// done without it (Records takes it again harmlessly).
	g.Records(id, records)
	names := j.resultFiles()
	if n := answerBytes(names, records); n > g.cfg.MaxAnswerBytes {
		// Not held: the job fails, and the store's copy of its answers
		// (the sink's final commit) is replaced by nothing in the commit
		// that records the failure.
		reason := fmt.Sprintf("the answers are too large: the job's %d result files are %d bytes together, more than a job's answers may be at the gateway (%d, --max-answer-bytes)", len(names), n, g.cfg.MaxAnswerBytes)
		cleared := make(map[string][]byte, len(names))
		for _, name := range names {
			cleared[schema.ResultRecord(name)] = []byte{}
		}
		if err := g.failJob(transport.JobFailure{Job: id, Reporter: g.self.Name(), Reason: reason}, cleared); err != nil {
			g.cfg.Log.Error("recording a job's failure", "job", id, "error", err)
		}
		return
	}
	// Rows counted here, once, with no lock held: GetJob only reads them.
	done, dropped := g.jobs.finish(j, answersOf(names, records), finishTime(stage.FinishedAt(records)), g.cfg.ClientMaxAnswerBytes)
	if done {
		g.cfg.Counters.JobEnded(OutcomeDone)
	}
	for _, old := range dropped {
		g.forgetIntroduction(old)
	}
	g.queueDrops(dropped...)
	g.dropFinishedInput(j) // the job is over: nothing will run it again
}

// FailJob marks a job failed (by its internal id, f.Job) because
// f.Reporter found that it cannot complete (an instance lost its state:
// transport.Sender): its client sees the reason, and whether it was lost
// state (Job.state_lost: an attached client submits it again), its
// uploads end, results that come later are ignored, and the failure is
// recorded in the store so that a restarted gateway still says so. A job
// that is done or failed already is left as it is; one the gateway does
// not hold (deleted, or lost with its store) is an error wrapping
// transport.ErrJobDropped, on which the reporter drops the job (nothing
// else would: no client fetches it, no retention runs out on it). The
// state elsewhere of a job that failed stays until the client deletes it
// or the retention drops it.
//
// Only an instance that runs the job may fail it: one of the topology's
// instances, which every job is introduced to (introduceEverywhere).
// Any other reporter, a certificate of an instance outside the topology
// or a master, is refused with an error wrapping transport.ErrNotPeer
// (PermissionDenied) before anything is looked up or changed. (The
// transport.Server has checked that the reporter is its caller.) The
// reason is cleaned (transport.CleanReason) before anything reads it.
func (g *Gateway) FailJob(f transport.JobFailure) error {
	f.Reason = transport.CleanReason(f.Reason)
	if !g.reporters[f.Reporter] {
		g.cfg.Log.Warn("refused a job failure from an instance that runs no job of this topology", "job", f.Job, "reporter", f.Reporter, "reason", f.Reason)
		return fmt.Errorf("%w: %q runs no job of this gateway's topology, and only an instance that runs a job may fail it", transport.ErrNotPeer, f.Reporter)
	}
	if f.Lost != "" && !g.reporters[f.Lost] {
		g.cfg.Log.Warn("refused a job failure naming as lost an instance that runs no job of this topology", "job", f.Job, "reporter", f.Reporter, "lost", f.Lost)
		return fmt.Errorf("%w: the lost instance %q runs no job of this gateway's topology", transport.ErrInvalid, f.Lost)
	}
	return g.failJob(f, nil)
}

// failJob is FailJob without the reporter's check (the gateway's own
// failures), whose commit also replaces the records in extra (a job's
// answers, which it does not hold).
func (g *Gateway) failJob(f transport.JobFailure, extra map[string][]byte) error {
	j, err := g.jobs.get(f.Job)
	if err != nil {
		// Deleted, dropped, or lost with this gateway's store: the
		// reporter holds state of a job that no client will ever fetch,
		// and drops it when told so (NOT_FOUND).
		g.cfg.Log.Warn("failure reported for a job the gateway does not hold; the reporter drops it", "job", f.Job, "reporter", f.Reporter, "reason", f.Reason)
		return fmt.Errorf("%w: the gateway holds no job %s (deleted, or lost with its store)", transport.ErrJobDropped, f.Job)
	}
	if f.StateLost {
		if g.rebuild(j, &f) {
			return nil
		}
	}
	at := time.UnixMilli(time.Now().UnixMilli()) // as the store keeps it
	if !j.fail(f.Reason, at, f.StateLost) {
		j.log.Info("failure reported for a job that is over; ignored", "reporter", f.Reporter, "reason", f.Reason)
		return nil
	}
	j.log.Error("job failed", "reporter", f.Reporter, "reason", f.Reason, "state-lost", f.StateLost)
	g.cfg.Counters.JobEnded(OutcomeFailed)
	records := map[string][]byte{recordFailed: []byte(f.Reason), recordFailedAt: failedRecord(at)}
	maps.Copy(records, extra)
	if f.StateLost {
		records[recordFailedLost] = []byte("1")
	}
	if err := g.cfg.Committer.Store().Commit(&transport.Commit{Job: f.Job, Records: records}); err != nil {
		return errorf(ErrStore, "record the failure of job %q: %v", f.Job, err)
	}
	g.jobs.dropInput(f.Job) // the job is over: nothing will run it again
	return nil
}

// deleteJob drops a job (by its internal id) here, durably, and queues its
// drop everywhere else; reason is what its watchers hear.
func (g *Gateway) deleteJob(id, reason string) error {
	g.forgetIntroduction(id)
	// What still runs on the job ends: an upload in flight stops, and a
	// watcher hears that the job failed, and why, instead of following
	// for ever a job that is no longer there. A done job is left done.
	// It is marked deleted, not only failed: its client hears that it
	// was deleted, and why, not that the gateway lost it (ErrDeleted).
	over := true
	if j, err := g.jobs.get(id); err == nil {
		over = !j.delete(reason)
		defer g.deleteAdded(j)
	}
	// The tombstone is durable before the client hears back; the other
	// processes follow, and a restarted gateway resumes telling them.
	if err := g.jobs.dropDeleted(id, reason); err != nil {
		return err
	}
	if !over {
		g.cfg.Counters.JobEnded(OutcomeDeleted)
	}
	g.cfg.Log.Info("job deleted", "job", id)
	g.queueDrops(id)
	return nil
}

// DeleteAnyJob drops any client's job by its internal id, as its client's
// DeleteJob would: the operator's way to stop a job that costs the
// deployment too much (Cluster.DeleteJob, `wololo client cancel
// --operator`). Its watchers hear that the operator deleted it. The error
// is a gRPC status: NotFound for a job the gateway does not hold.
func (g *Gateway) DeleteAnyJob(id string) error {
	j, err := g.jobs.get(id)
	if err != nil {
		return toStatus(err)
	}
	j.log.Warn("job deleted by the operator")
	return toStatus(g.deleteJob(id, "deleted by the operator"))
}

// createJob creates the owner's job (jobs.create) and queues the drop
// everywhere else of the finished jobs it dropped here to make room, the
// way deleteJob does. A job of queries is compiled within one of the
// owner's compile slots (compiles.go), which ctx bounds the wait for.
func (g *Gateway) createJob(ctx context.Context, owner string, req *wololov1.CreateJobRequest) (created, error) {
	release, err := g.compiles.acquire(ctx, owner) // the default queries, or the client's own: compiled
	if err != nil {
		return created{}, err
	}
	defer release()
	c, err := g.jobs.create(owner, req)
	if err == nil && !c.resumed {
		g.cfg.Counters.JobCreated()
	}
	for _, id := range c.dropped {
		g.forgetIntroduction(id)
	}
	g.queueDrops(c.dropped...)
	return c, err
}

// identify names a JobService call's client. Its error is a gRPC status
// already (Identify's), or becomes Unauthenticated.
func (g *Gateway) identify(ctx context.Context) (string, error) {
	if owner, ok := ctx.Value(replayOwner{}).(string); ok {
		return owner, nil // a replay of the owner's job (rebuild.go), not a call
	}
	owner, err := g.cfg.Identify(ctx)
	if err == nil {
		return owner, nil
	}
	if _, ok := status.FromError(err); ok {
		return "", err
	}
	return "", status.Error(codes.Unauthenticated, err.Error())
}
