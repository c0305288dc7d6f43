package stage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/lifetime"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// DefaultOutboxLimit is how many unacknowledged batches a channel may hold
// before the job's actor stops applying input.
const DefaultOutboxLimit = 32

// MaxGroup is how many queued deliveries one commit may apply together
// (group commit: one sync for several batches).
const MaxGroup = 8

// SnapshotMinBytes is the state-log size below which a stateful operator
// is never snapshotted; above it, a snapshot is taken once the log since the
// last one is twice the last snapshot's size, so that snapshots cost at most
// about as much as the log itself and replay stays proportional to the
// state, not to the job's input. A variable so that tests can lower it.
var SnapshotMinBytes = 32 << 20

// Records the runtime keeps per job in the store, next to the operator's
// (and the Committer's transport.EndedRecord of each ended input).
const (
	// recordFinished marks a job finished at this stage; it holds when
	// (FinishedAt), in the final commit itself, so that a restarted
	// process reports the same finish time as the live one did.
	recordFinished   = "stage/finished"
	recordIntroduced = "stage/introduced"
	// recordPlan holds the plan a job was introduced with (IntroduceJob),
	// when it has one: a restarted instance rebuilds the job's operator
	// from it.
	recordPlan = "stage/plan"
	// recordFailed marks a job failed at this stage, holding why: its
	// operator met an error that fails the job (ErrFailsJob, a budget
	// spent). The job's state log was dropped in the same commit; a
	// restarted process does not replay it, reports the failure again
	// (Failed), and acknowledges its batches without applying them.
	recordFailed = "stage/failed"
)

// DefaultSweepEvery is how often a runtime reaps the state of jobs it was
// never introduced to.
const DefaultSweepEvery = time.Minute

// finishedRecord is recordFinished's value: the time in Unix milliseconds,
// in decimal.
func finishedRecord(at time.Time) []byte { return strconv.AppendInt(nil, at.UnixMilli(), 10) }

// FinishedAt is when a job finished at a stage, read from the records of
// its final commit (OnFinish's, or the job's records in a store image), to
// the millisecond; false when the records do not say (no final commit yet,
// or a store written before the time was recorded, whose record holds 1).
func FinishedAt(records map[string][]byte) (time.Time, bool) {
	ms, err := strconv.ParseInt(string(records[recordFinished]), 10, 64)
	if err != nil || ms <= 1 {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// ErrNoPlan is why a job without a plan runs nothing: one of the
// hand-written graph, which an older version ran (issue 39). Its
// introduction is refused, and its state in a store does not restore
// (Unrestorable): the job takes the lost-state path, run again by the
// gateway from its retained input, or submitted again by its client.
var ErrNoPlan = errors.New("the job has no plan: a job of the hand-written graph, which this version no longer runs")

// Config is what a Runtime needs.
type Config struct {
	Topology deploy.Topology
	Instance deploy.Instance
	// Committer is the process's exactly-once step: it numbers, commits,
	// publishes and acknowledges (its Store, Outbox and Inbox are the
	// process's).
	Committer *transport.Committer
	// Links, if set, is told when a job is dropped so that it stops the
	// job's outbound links (the process's Sender).
	Links interface{ DropJob(job string) }
	Log   hclog.Logger
	// OutboxLimit is the unacknowledged batches per output channel before
	// the job's actor waits; DefaultOutboxLimit if 0.
	OutboxLimit int
	// OnFinish, if set, is called after a job's final commit with the
	// records its operator wrote.
	OnFinish func(job string, records map[string][]byte)
	// OnRecords, if set, is called after every other commit of a job
	// that wrote records, with that commit's records: a standing job's
	// versions, written epoch by epoch before its final commit
	// (docs/standing.md). It runs on the job's actor: it must not block.
	OnRecords func(job string, records map[string][]byte)
	// OnFail, if set, is called after the commit that failed a job here
	// (its operator met an ErrFailsJob), with why, on a goroutine of its
	// own whose context ends with Serve: the process tells the gateway,
	// which fails the job for its client.
	OnFail func(ctx context.Context, job, reason string)
	// MaxJobs is how many jobs the instance holds at once; an introduction
	// of one more is refused (transport.ErrTooManyJobs) until one is
	// dropped. DefaultMaxJobs if 0.
	MaxJobs int
	// Known, if set, also admits the jobs it reports (the gateway's: the
	// jobs its job table holds, which it never introduces to itself). A
	// job neither introduced nor known has its streams refused
	// (transport.ErrUnknownJob) and whatever is held of it reaped.
	Known func(job string) bool
	// SweepEvery is how often the runtime reaps the state of jobs it does
	// not admit; DefaultSweepEvery if 0.
	SweepEvery time.Duration
	// Plans makes what job runs here of its plan (a job of SQL
	// queries: IntroduceJobRequest.plan). A job without a plan (one of
	// the hand-written graph an older version ran) runs nothing here: its
	// introduction is refused, and its state in a store is unrestorable
	// (the lost-state path: the gateway runs it again from its retained
	// input, or its client submits it again).
	Plans func(job string, plan []byte) (JobSpec, error)
	// Dropped, if set, is told of each job dropped here, once its actor
	// has stopped (the node removes the job's spill files).
	Dropped func(job string)
	// PlanOf, if set, is the plan of a job Known admits (the gateway's own
	// jobs, which it never introduces to itself); nil: none.
	PlanOf func(job string) []byte
}

// JobSpec is what one job runs at this instance: the streams it reads
// and writes, and its operator (Config.Plans of the job's plan).
type JobSpec struct {
	Wiring    Wiring
	New       func() Operator
	Stateless bool
	// MetricStreams is what the job's streams are called in metrics
	// (MetricStreams), by stream: a plan's channels are named after its
	// queries and keys, what its client wrote, which no series may show
	// (a stream it does not name shows nothing of its name either).
	MetricStreams map[string]string
}

// DefaultMaxJobs is how many jobs an instance holds at once by default.
const DefaultMaxJobs = 1024

// WithDefaults returns the config with every unset tunable at its default.
func (c Config) WithDefaults() Config {
	if c.Log == nil {
		c.Log = hclog.NewNullLogger()
	}
	if c.OutboxLimit == 0 {
		c.OutboxLimit = DefaultOutboxLimit
	}
	if c.MaxJobs == 0 {
		c.MaxJobs = DefaultMaxJobs
	}
	if c.SweepEvery == 0 {
		c.SweepEvery = DefaultSweepEvery
	}
	return c
}

// Validate checks the config without changing it.
func (c Config) Validate() error {
	if c.Committer == nil {
		return errors.New("stage config: Committer is required")
	}
	if c.Plans == nil {
		return errors.New("stage config: Plans is required")
	}
	if c.OutboxLimit < 0 || c.MaxJobs < 0 || c.SweepEvery < 0 {
		return fmt.Errorf("stage config: OutboxLimit %d, MaxJobs %d and SweepEvery %s must not be negative", c.OutboxLimit, c.MaxJobs, c.SweepEvery)
	}
	stage, ok := c.Topology.Stage(c.Instance.Stage)
	if !ok {
		return fmt.Errorf("stage config: topology has no stage %q", c.Instance.Stage)
	}
	if c.Instance.Index < 0 || c.Instance.Index >= stage.Replicas {
		return fmt.Errorf("stage config: instance %s beyond %d replicas", c.Instance.Name(), stage.Replicas)
	}
	return nil
}

// Runtime runs one stage instance: it is the transport.Handler of its
// process's StageService. Its lifecycle is Serve: jobs' actors run from
// New (a recovered job) or their first delivery until Serve returns.
type Runtime struct {
	cfg  Config
	self string

	// life runs the jobs' actors; a store failure ends it (Fail): the
	// process's memory is then ahead of its store, and it must stop.
	life lifetime.Lifetime

	// introducing serialises introductions, so that the limit check and
	// the commit that records a job are one step.
	introducing sync.Mutex

	mu      sync.Mutex
	jobs    map[string]*job
	dropped map[string]bool
	// introduced are the jobs the gateway has introduced (IntroduceJob),
	// durably: the only ones, with Config.Known's, whose streams are taken.
	introduced map[string]bool
	// plans are the plans of the introduced jobs that have one.
	plans map[string][]byte
	// unrestorable are the jobs Recover could not rebuild (their state log
	// does not replay), with why; refused like dropped jobs until the
	// gateway, told by the process, fails and drops them.
	unrestorable map[string]error
	// failed are the jobs Recover found failed here before (recordFailed),
	// with why: the process reports them to the gateway again.
	failed map[string]string
	// metricStreams are MetricStreams' answers for planned jobs this
	// runtime holds no job of (they only send from here so far: the
	// gateway's uploads), made from the plan once.
	metricStreams map[string]map[string]string
}

// New returns a Runtime.
func New(cfg Config) (*Runtime, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	return &Runtime{cfg: cfg, self: cfg.Instance.Name(), jobs: map[string]*job{}, dropped: map[string]bool{}, introduced: map[string]bool{}, plans: map[string][]byte{}, unrestorable: map[string]error{}, failed: map[string]string{}, metricStreams: map[string]map[string]string{}}, nil
}

// Serve runs until ctx ends (nil) or a commit fails (that error), and
// reaps the state of jobs it does not admit every SweepEvery (Sweep).
// Either way every job's actor has stopped when it returns, so the store
// may be closed.
func (r *Runtime) Serve(ctx context.Context) error {
	r.life.Go(func(ctx context.Context) {
		t := time.NewTicker(r.cfg.SweepEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := r.Sweep(); err != nil {
					r.life.Fail(err)
					return
				}
			}
		}
	})
	return r.life.Serve(ctx)
}

func (r *Runtime) outbox() *transport.Outbox { return r.cfg.Committer.Outbox() }
func (r *Runtime) inbox() *transport.Inbox   { return r.cfg.Committer.Inbox() }

type input struct {
	stream string
	// k is the input's index in the job's Wiring.Inputs, sender the
	// sending instance's index: what the Driver counts ends by.
	k, sender int
	eof       bool
	// What the live path applied from the channel since this start (not
	// replays), for Status and metrics; under job.mu.
	batches, rows, bytes int64
}

type delivery struct {
	ch    transport.ChannelID
	batch *wololov1.Batch
	done  func(error)
	rows  int // in the batch, once applied (for the counters)
}

type job struct {
	id    string
	log   hclog.Logger
	queue chan delivery
	spec  JobSpec
	drive *Driver // the operator's (actor only)
	out   *Outputs
	// flow are the output channels the actor waits for room on: those to
	// other stages (flowControlled).
	flow   []transport.ChannelID
	rowsIn atomic.Int64
	// droppedBatches is drive's count of dropped batches, for Dropped.
	droppedBatches atomic.Int64
	cancel         context.CancelFunc // ends the actor
	stopped        chan struct{}
	dropped        atomic.Bool

	// logBytes is the state log's size since the last snapshot, and
	// snapBytes that snapshot's size (actor only).
	logBytes, snapBytes int

	// failure is why the job failed here (its operator met an
	// ErrFailsJob), "" while it has not; failureKept: the store records
	// it (actor only).
	failure     string
	failureKept bool

	mu       sync.Mutex // guards inputs and finished for Status
	inputs   map[transport.ChannelID]*input
	finished bool // the operator has finished (drive's, for Status)
}

// Open implements transport.Handler. A channel of a job it does not admit
// (never introduced) is refused before anything is created for the job,
// and one the job does not read here (its plan's, or the topology's
// streams into this stage) before the job takes anything from it.
func (r *Runtime) Open(ch transport.ChannelID) (uint64, error) {
	if ch.Receiver != r.self {
		return 0, fmt.Errorf("%w: %s is not %s", transport.ErrUnknownChannel, r.self, ch.Receiver)
	}
	if _, err := r.job(ch.Job, &ch); err != nil {
		return 0, err
	}
	return r.inbox().Watermark(ch), nil
}

// takes reports whether a job's inputs hold the channel.
func (j *job) takes(ch transport.ChannelID) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	_, ok := j.inputs[ch]
	return ok
}

// Deliver implements transport.Handler.
func (r *Runtime) Deliver(ctx context.Context, ch transport.ChannelID, b *wololov1.Batch, done func(error)) error {
	j, err := r.job(ch.Job, &ch)
	if err != nil {
		return err
	}
	select {
	case j.queue <- delivery{ch: ch, batch: b, done: done}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-j.stopped:
		if j.dropped.Load() {
			return fmt.Errorf("%w: %s", transport.ErrJobDropped, ch.Job)
		}
		return status.Error(codes.Unavailable, "stage is stopping")
	}
}

// IntroduceJob implements transport.Handler: the gateway tells this
// instance of a new job before it sends any batch of it. The introduction
// is durable before it returns, counts against MaxJobs from then on, and
// is what lets the job's streams in (Open). A job with a plan runs what
// Config.Plans makes of it, and a plan it cannot make is refused before
// anything is recorded. Introducing a job again does nothing; a dropped
// job stays dropped.
func (r *Runtime) IntroduceJob(id string, plan []byte) error {
	if len(plan) == 0 {
		return fmt.Errorf("%w: job %s: %w", transport.ErrBadPlan, id, ErrNoPlan)
	}
	if _, err := r.cfg.Plans(id, plan); err != nil {
		return fmt.Errorf("%w: job %s: %v", transport.ErrBadPlan, id, err)
	}
	r.introducing.Lock()
	defer r.introducing.Unlock()
	r.mu.Lock()
	switch {
	case r.dropped[id]:
		r.mu.Unlock()
		return fmt.Errorf("%w: %s", transport.ErrJobDropped, id)
	case r.introduced[id]:
		r.mu.Unlock()
		return nil
	case len(r.introduced) >= r.cfg.MaxJobs:
		n := len(r.introduced)
		r.mu.Unlock()
		return fmt.Errorf("%w: %s holds %d jobs already, its limit (--max-jobs)", transport.ErrTooManyJobs, r.self, n)
	}
	r.mu.Unlock()
	// Only introductions add to introduced, one at a time: the check above
	// still holds. A DropJob meanwhile wins: it tombstones the job after
	// this commit or before it, and either way the job is refused.
	records := map[string][]byte{recordIntroduced: {1}, recordPlan: plan}
	if err := r.cfg.Committer.Store().Commit(&transport.Commit{Job: id, Records: records}); err != nil {
		return fmt.Errorf("introduce job %s: %w", id, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dropped[id] {
		return fmt.Errorf("%w: %s", transport.ErrJobDropped, id)
	}
	r.introduced[id] = true
	r.plans[id] = plan
	r.cfg.Log.Info("job introduced", "job", id)
	return nil
}

// admittedLocked reports whether the runtime takes the job's streams: the
// gateway introduced it, or Known knows it.
func (r *Runtime) admittedLocked(id string) bool {
	return r.introduced[id] || (r.cfg.Known != nil && r.cfg.Known(id))
}

// Sweep reaps what the runtime holds of jobs it does not admit (never
// introduced, or no longer known to the gateway): their actors, watermarks
// and outbox, as DropJob does. Serve calls it every SweepEvery; Recover
// does the same for what the store holds.
func (r *Runtime) Sweep() error {
	held := map[string]bool{}
	for _, id := range append(r.outbox().Jobs(), r.inbox().Jobs()...) {
		held[id] = true
	}
	r.mu.Lock()
	for id := range r.jobs {
		held[id] = true
	}
	var reap []string
	for id := range held {
		if !r.dropped[id] && !r.admittedLocked(id) {
			reap = append(reap, id)
		}
	}
	r.mu.Unlock()
	sort.Strings(reap)
	for _, id := range reap {
		r.cfg.Log.Warn("reaping a job never introduced", "job", id)
		if err := r.DropJob(id); err != nil {
			return fmt.Errorf("reap job %s: %w", id, err)
		}
	}
	return nil
}

// DropJob implements transport.Handler: it stops the job's actor, forgets
// its channels and deletes its state, leaving a tombstone so that a late
// stream of the job is refused rather than starting it anew.
func (r *Runtime) DropJob(id string) error {
	r.mu.Lock()
	j := r.jobs[id]
	delete(r.jobs, id)
	delete(r.introduced, id)
	delete(r.plans, id)
	delete(r.unrestorable, id)
	delete(r.failed, id)
	delete(r.metricStreams, id)
	already := r.dropped[id]
	r.dropped[id] = true
	r.mu.Unlock()
	if j != nil {
		j.dropped.Store(true)
		j.cancel()
		<-j.stopped
	}
	if r.cfg.Dropped != nil {
		r.cfg.Dropped(id)
	}
	if r.cfg.Links != nil {
		r.cfg.Links.DropJob(id)
	}
	r.outbox().DropJob(id)
	r.inbox().DropJob(id)
	if err := r.cfg.Committer.Store().DropJob(id); err != nil {
		return fmt.Errorf("drop job %s: %w", id, err)
	}
	if !already {
		r.cfg.Log.Info("job dropped", "job", id)
	}
	return nil
}

// ChannelsTo lists the output channels to receiver of every job the
// gateway introduced here, making the job first where no stream has made
// it yet, as its first stream would:
// the channels a new incarnation of receiver is asked about
// (transport.Sender.CheckAlso), so that a job the receiver no longer
// holds is found even when nothing was ever sent to it.
func (r *Runtime) ChannelsTo(receiver string) []transport.ChannelID {
	r.mu.Lock()
	ids := slices.Sorted(maps.Keys(r.introduced))
	r.mu.Unlock()
	var out []transport.ChannelID
	for _, id := range ids {
		j, err := r.job(id, nil)
		if err != nil {
			continue // dropped, stopping, over the limit or unreadable: no channel to ask about
		}
		for _, ch := range j.out.Channels() {
			if ch.Receiver == receiver {
				out = append(out, ch)
			}
		}
	}
	return out
}

// errStopping refuses a job that would start after Serve returned.
var errStopping = status.Error(codes.Unavailable, "stage is stopping")

// job returns the job's state, creating it (and its actor) on first use.
// With ch, the job must read that channel here, or it is refused
// (ErrUnknownChannel) and nothing is created for it.
func (r *Runtime) job(id string, ch *transport.ChannelID) (*job, error) {
	unknown := func() error {
		return fmt.Errorf("%w: %s does not take %s from %s", transport.ErrUnknownChannel, r.self, ch.Stream, ch.Sender)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if j, ok := r.jobs[id]; ok {
		if ch != nil && !j.takes(*ch) {
			return nil, unknown()
		}
		return j, nil
	}
	if r.dropped[id] {
		return nil, fmt.Errorf("%w: %s", transport.ErrJobDropped, id)
	}
	if !r.admittedLocked(id) {
		// Whatever the channel: a job of a plan this process was told of
		// and then lost with its store has channels no job of the
		// built-in graph has, and its sender must learn the job is not
		// here (and whether it had acknowledged any of it), not that the
		// channel is unknown, which it would retry for ever.
		return nil, fmt.Errorf("%w: %s was never told of job %s by the gateway", transport.ErrUnknownJob, r.self, id)
	}
	if len(r.jobs) >= r.cfg.MaxJobs {
		return nil, fmt.Errorf("%w: %s holds %d jobs already, its limit (--max-jobs)", transport.ErrTooManyJobs, r.self, len(r.jobs))
	}
	j, err := r.newJob(id)
	if err != nil {
		return nil, err
	}
	if ch != nil && !j.takes(*ch) {
		return nil, unknown()
	}
	if !r.startLocked(j) {
		return nil, errStopping
	}
	j.log.Info("job started", "inputs", len(j.inputs))
	return j, nil
}

// newJob builds a job's state without starting it.
func (r *Runtime) newJob(id string) (*job, error) {
	spec, err := r.specLocked(id)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	j := &job{
		id:      id,
		log:     r.cfg.Log.With("job", id),
		queue:   make(chan delivery, 2*MaxGroup),
		spec:    spec,
		out:     NewOutputs(r.cfg.Instance, id, spec.Wiring.Outputs),
		inputs:  map[transport.ChannelID]*input{},
		stopped: make(chan struct{}),
	}
	senders := make([]int, len(spec.Wiring.Inputs))
	for k, e := range spec.Wiring.Inputs {
		senders[k] = e.Replicas
		for i := range e.Replicas {
			from := deploy.Instance{Stage: e.Stage, Index: i}
			ch := transport.ChannelID{Job: id, Stream: e.Stream, Sender: from.Name(), Receiver: r.self}
			j.inputs[ch] = &input{stream: e.Stream, k: k, sender: i}
		}
	}
	j.drive = NewDriver(spec.New(), senders)
	j.out.interrupted = j.dropped.Load
	j.flow = flowControlled(j.out.Channels(), r.cfg.Instance.Stage)
	return j, nil
}

// flowControlled are the channels of outs a job's actor waits for room on
// before it applies anything: those to another stage. A channel from a
// stage to itself (a plan's shuffle from shard to shard) is left out:
// two instances that each wait for the other to take a batch, when
// neither takes anything while it waits, would wait for ever. Its outbox
// is bounded by what the job sends on it, not by OutboxLimit.
func flowControlled(outs []transport.ChannelID, stage string) []transport.ChannelID {
	var flow []transport.ChannelID
	for _, ch := range outs {
		if to, err := deploy.ParseInstance(ch.Receiver); err != nil || to.Stage != stage {
			flow = append(flow, ch)
		}
	}
	return flow
}

// planLocked is job id's plan: the one it was introduced with, or
// Config.PlanOf's; nil for none (a job of the hand-written graph an
// older version ran).
func (r *Runtime) planLocked(id string) []byte {
	plan := r.plans[id]
	if plan == nil && r.cfg.PlanOf != nil && !r.introduced[id] {
		plan = r.cfg.PlanOf(id)
	}
	return plan
}

// specLocked is what job id runs here: what Config.Plans makes of its
// plan (planLocked). A job without one is of the hand-written graph,
// which an older version ran and this one does not.
func (r *Runtime) specLocked(id string) (JobSpec, error) {
	plan := r.planLocked(id)
	if len(plan) == 0 {
		return JobSpec{}, fmt.Errorf("%w: %w", transport.ErrBadPlan, ErrNoPlan)
	}
	spec, err := r.cfg.Plans(id, plan)
	if err != nil {
		return JobSpec{}, fmt.Errorf("%w: %v", transport.ErrBadPlan, err)
	}
	return spec, nil
}

// startLocked starts a job's actor; false once Serve has returned.
func (r *Runtime) startLocked(j *job) bool {
	cancel, ok := r.life.Go(func(ctx context.Context) { r.actor(ctx, j) })
	if !ok {
		close(j.stopped)
		return false
	}
	j.cancel = cancel
	r.jobs[j.id] = j
	return true
}

// Recover rebuilds every job the store holds: which jobs were introduced,
// which inputs have ended, whether the job finished here, and (for a
// stateful operator) the operator itself by replaying its state log. The
// watermarks and the outbox are restored by the Committer
// (transport.Committer.Restore), which owns them for the whole process.
//
// First it reaps every job of the image it does not admit (never
// introduced, not Known): it drops it from the store and takes it out of
// img, so call it before Committer.Restore, which then restores nothing of
// it. Such state is left by streams taken before introductions existed.
func (r *Runtime) Recover(img *transport.Image) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range img.Dropped {
		r.dropped[id] = true
	}
	for id, ji := range img.Jobs {
		if ji.Records[recordIntroduced] != nil {
			r.introduced[id] = true
			if p := ji.Records[recordPlan]; len(p) > 0 {
				r.plans[id] = p
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(img.Jobs)) {
		if r.admittedLocked(id) {
			continue
		}
		if err := r.cfg.Committer.Store().DropJob(id); err != nil {
			return fmt.Errorf("reap job %s: %w", id, err)
		}
		r.outbox().DropJob(id)
		r.inbox().DropJob(id)
		delete(img.Jobs, id)
		img.Dropped = append(img.Dropped, id)
		r.dropped[id] = true
		r.cfg.Log.Warn("reaped a job never introduced", "job", id)
	}
	slices.Sort(img.Dropped)
	for id, ji := range img.Jobs {
		if _, ok := r.jobs[id]; ok {
			continue
		}
		j, err := r.newJob(id)
		if err != nil {
			// Its plan does not run here (a build that cannot read it):
			// the job cannot complete; the others can.
			err = fmt.Errorf("%s cannot restore job %s: %w", r.self, id, err)
			r.cfg.Log.Error("job cannot be restored; the job fails", "job", id, "error", err)
			r.dropped[id] = true
			r.unrestorable[id] = err
			continue
		}
		j.out.MarkEnded(ji.Records)
		seen := ji.Records[recordFinished] != nil
		for ch := range j.inputs {
			if ji.Watermarks[ch] > 0 {
				seen = true
			}
		}
		if !seen {
			continue // a job of the gateway that has sent this stage nothing yet
		}
		start := time.Now()
		var restore time.Duration // of the snapshot the state log starts with, if any
		entries := 0              // of the state log replayed
		if reason := ji.Records[recordFailed]; reason != nil {
			// Failed here before: nothing to replay, the failure to
			// report again.
			j.failure, j.failureKept = string(reason), true
			j.drive.finished, j.drive.op = true, nil
			r.failed[id] = j.failure
		} else if ji.Records[recordFinished] != nil {
			// Finished before: what it emitted is committed, and its
			// operator is not needed.
			j.finished = true
			j.drive.finished, j.drive.op = true, nil
		} else if !j.spec.Stateless {
			err := r.endsBeforeLog(j, ji)
			if err == nil {
				restore, entries, err = r.replay(j)
			}
			if err != nil {
				// Its state is gone for good (the log is read, it does not
				// replay: a store written by a build whose state this one
				// cannot read, say). The job cannot complete; the other
				// jobs can, so the process goes on without it.
				err = fmt.Errorf("%s cannot restore the state of job %s: replay state log: %w", r.self, id, err)
				j.log.Error("job state cannot be restored; the job fails", "error", err)
				r.dropped[id] = true
				r.unrestorable[id] = err
				continue
			}
			if j.failure != "" {
				// The log replays into a failure (a budget lowered since
				// it was written): the job fails as it would have live,
				// recorded with the next step.
				r.failed[id] = j.failure
			}
		}
		// The store is authoritative for ended inputs.
		open := 0
		for ch, in := range j.inputs {
			in.eof = ji.Records[transport.EndedRecord(ch)] != nil
			if in.eof {
				j.drive.Restore(in.k, in.sender)
			} else {
				open++
			}
		}
		if !r.startLocked(j) {
			return errStopping
		}
		j.log.Info("job recovered", "finished", j.finished, "open-inputs", open,
			"state-log-entries", entries, "replay", time.Since(start).Round(time.Millisecond),
			"snapshot-bytes", j.snapBytes, "restore", restore.Round(time.Millisecond), "log-bytes", j.logBytes)
	}
	return nil
}

// Failed returns the jobs Recover found failed here by their operator
// (ErrFailsJob), with why: the process reports them to the gateway again,
// which may not have heard it before the restart.
func (r *Runtime) Failed() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.failed)
}

// Unrestorable returns the jobs Recover could not rebuild, with why: the
// process reports them failed to the gateway (their streams are refused
// meanwhile, as a dropped job's are).
func (r *Runtime) Unrestorable() map[string]error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.unrestorable)
}

// endsBeforeLog notes, before a job's state log is replayed, the ended
// inputs whose EOF is not in the log: applied before the snapshot the log
// starts with, so that the snapshot holds what the operator did of them.
// Without it, the EOF of a stream's last sender replayed from the log
// would not be the stream's end (its other senders' ends noted only after
// the replay), and the operator would never hear that the stream ended. A
// log without a snapshot holds every EOF applied: nothing to note, and
// nothing read past its first entry.
func (r *Runtime) endsBeforeLog(j *job, ji *transport.JobImage) error {
	logged := map[[2]string]bool{}
	snapshot := false
	var jr wololov1.Journal
	err := r.cfg.Committer.Store().ReadState(j.id, func(raw []byte) error {
		if err := readJournal(raw, &jr); err != nil {
			return err
		}
		if !snapshot {
			if len(jr.Snapshot) == 0 {
				return errNoSnapshot
			}
			snapshot = true
			return nil
		}
		for _, a := range jr.Applied {
			if a.Eof {
				logged[[2]string{a.Stream, a.Sender}] = true
			}
		}
		return nil
	})
	if errors.Is(err, errNoSnapshot) {
		return nil
	}
	if err != nil || !snapshot {
		return err
	}
	for ch, in := range j.inputs {
		if ji.Records[transport.EndedRecord(ch)] != nil && !logged[[2]string{ch.Stream, ch.Sender}] {
			j.drive.Restore(in.k, in.sender)
		}
	}
	return nil
}

// errNoSnapshot stops endsBeforeLog's reading at a log's first entry
// when it is not a snapshot.
var errNoSnapshot = errors.New("the state log starts without a snapshot")

// replay rebuilds a job's operator from its state log, read from the
// store an entry at a time: each is applied and let go before the next is
// read, so that what replay holds is the operator and one entry, however
// long the log. What the operator emits is dropped: it is already in the
// outbox, or acknowledged. It returns how long restoring the snapshot the
// log starts with took, and the entries replayed.
func (r *Runtime) replay(j *job) (restore time.Duration, entries int, err error) {
	var jr wololov1.Journal
	err = r.cfg.Committer.Store().ReadState(j.id, func(entry []byte) error {
		entries++
		// The entry is ours to keep (Store.ReadState): the operator may
		// keep what it is given (readJournal aliases it), as it keeps a
		// live batch's, with no copy of every entry made here.
		if err := readJournal(entry, &jr); err != nil {
			return err
		}
		if len(jr.Snapshot) > 0 {
			start := time.Now()
			op := j.spec.New()
			snap, ok := op.(Snapshotter)
			if !ok {
				return fmt.Errorf("log holds a snapshot but operator %T cannot restore one", op)
			}
			if err := snap.Restore(jr.Snapshot); err != nil {
				return fmt.Errorf("restore snapshot: %w", err)
			}
			restore += time.Since(start)
			j.drive.op = op
			j.snapBytes, j.logBytes = len(jr.Snapshot), 0
			return nil
		}
		j.logBytes += len(entry)
		for _, a := range jr.Applied {
			ch := transport.ChannelID{Job: j.id, Stream: a.Stream, Sender: a.Sender, Receiver: r.self}
			if _, ok := j.inputs[ch]; !ok {
				return fmt.Errorf("log names unknown channel %s", ch)
			}
			r.step(j, ch, a.Eof, a.Rows, discard{})
		}
		return nil
	})
	return restore, entries, err
}

// actor applies a job's deliveries, up to MaxGroup of them per commit: it
// plans each group (plan.go), carries the plan out on the operator, and
// hands the step to the Committer.
func (r *Runtime) actor(ctx context.Context, j *job) {
	defer close(j.stopped)
	group := make([]delivery, 0, MaxGroup)
	for {
		group = group[:0]
		select {
		case <-ctx.Done():
			return
		case d := <-j.queue:
			group = append(group, d)
		}
	more:
		for len(group) < MaxGroup {
			select {
			case d := <-j.queue:
				group = append(group, d)
			default:
				break more
			}
		}
		if err := r.outbox().WaitRoom(ctx, j.flow, r.cfg.OutboxLimit); err != nil {
			for _, d := range group {
				d.done(err)
			}
			return
		}
		p := planGroup(group, r.inbox().State)
		for _, x := range p.refused {
			x.d.done(x.err)
		}
		if len(p.apply) == 0 {
			for _, d := range p.dups {
				d.done(nil)
			}
			continue
		}
		s, finishing, err := r.build(j, p)
		if err == nil {
			_, err = r.cfg.Committer.Commit(s)
		}
		if err != nil {
			// The operator has run ahead of the store: only a restart
			// from the store can bring them back together.
			r.life.Fail(fmt.Errorf("job %s: %w", j.id, err))
			return
		}
		j.count(p.apply)
		if j.failure != "" && !j.failureKept {
			j.failureKept = true
			j.log.Error("job failed here; its state is dropped and its batches are acknowledged without being applied", append([]any{"reason", j.failure}, j.drive.Usage()...)...)
			if r.cfg.OnFail != nil {
				job, reason := j.id, j.failure
				r.life.Go(func(ctx context.Context) { r.cfg.OnFail(ctx, job, reason) })
			}
		}
		if finishing {
			j.log.Info("job finished at this stage", append([]any{"rows-in", j.rowsIn.Load(), "rows-out", j.out.RowsOut(), "unreadable-batches", j.drive.Dropped()}, j.drive.Usage()...)...)
			if r.cfg.OnFinish != nil {
				r.cfg.OnFinish(j.id, s.Records)
			}
		} else if j.failure == "" && len(s.Records) > 0 && r.cfg.OnRecords != nil {
			r.cfg.OnRecords(j.id, s.Records)
		}
	}
}

// count adds the committed deliveries to their channels' counters: once
// per batch, under one lock per group.
func (j *job) count(applied []delivery) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, d := range applied {
		if in := j.inputs[d.ch]; in != nil {
			in.batches++
			in.rows += int64(d.rows)
			in.bytes += int64(len(d.batch.GetRows()))
		}
	}
}

// build carries a plan out on the job's operator and describes the step
// the Committer is to write: the watermarks the plan moves to, the ended
// inputs, what the operator emitted, its journal entry (or a snapshot, or
// the end of its log when the job finishes), and the acknowledgements of
// every delivery applied or already applied. It reports whether the job
// finished. On an error the acknowledgements were refused.
func (r *Runtime) build(j *job, p plan) (*transport.Step, bool, error) {
	s := &transport.Step{Commit: transport.Commit{Job: j.id, Inputs: p.marks, Records: map[string][]byte{}}, Ended: p.ended}
	var journal wololov1.Journal
	finishing := false
	var err error
	for i := range p.apply {
		d := &p.apply[i]
		if !j.spec.Stateless {
			// The rows as they arrived: journaled without being encoded again.
			journal.Applied = append(journal.Applied, &wololov1.Applied{Stream: d.ch.Stream, Sender: d.ch.Sender, Seq: d.batch.Seq, Eof: d.batch.Eof, Rows: d.batch.Rows})
		}
		var fin bool
		fin, d.rows = r.step(j, d.ch, d.batch.Eof, d.batch.Rows, j.out)
		out, records := j.out.Drain(fin)
		var emit []transport.Output
		if emit, err = Encode(out); err != nil {
			break
		}
		s.Emit = append(s.Emit, emit...)
		maps.Copy(s.Records, records)
		finishing = finishing || fin
	}
	for _, d := range p.dups {
		s.Acks = append(s.Acks, d.done)
	}
	for _, d := range p.apply {
		s.Acks = append(s.Acks, d.done)
	}
	switch {
	case err != nil:
	case j.failure != "" && !j.failureKept:
		// The operator failed the job in this step: nothing it emitted
		// goes out, its log goes, and the failure is what is kept.
		s.Emit, s.Records = nil, map[string][]byte{recordFailed: []byte(j.failure)}
		s.ResetState, finishing = true, false
	case j.failure != "":
	case finishing:
		// The operator is gone; its log is no longer needed.
		s.Records[recordFinished] = finishedRecord(time.Now())
		s.ResetState = true
	case j.spec.Stateless:
	default:
		s.State, s.ResetState, err = r.stateChange(j, &journal)
	}
	if err != nil {
		for _, ack := range s.Acks {
			ack(err)
		}
		return nil, false, err
	}
	return s, finishing, nil
}

// stateChange is what a commit appends to the state log: the journal of
// the batches it applied, or a snapshot of the operator that replaces the
// log when the log has grown past the snapshot policy.
func (r *Runtime) stateChange(j *job, journal *wololov1.Journal) ([]byte, bool, error) {
	b, err := proto.Marshal(journal)
	if err != nil {
		return nil, false, fmt.Errorf("encode journal: %w", err)
	}
	j.logBytes += len(b)
	snap, ok := j.drive.op.(Snapshotter)
	if !ok || j.logBytes < max(SnapshotMinBytes, 2*j.snapBytes) {
		return b, false, nil
	}
	if d, ok := snap.(SnapshotDecliner); ok && d.NoSnapshot() {
		return b, false, nil
	}
	sb, err := snapshotEntry(snap, j.snapBytes)
	if err != nil {
		j.log.Warn("snapshot failed; keeping the log", "error", err)
		return b, false, nil
	}
	j.log.Debug("state snapshot", "bytes", len(sb), "log-bytes", j.logBytes)
	j.logBytes, j.snapBytes = 0, len(sb)
	return sb, true, nil
}

// snapshotEntry returns the state log entry of a snapshot: a Journal with
// only its snapshot field set, in the encoding proto.Marshal gives it. The
// operator appends its state straight after room left for the field's tag
// and length, which are then written in front of it, so that the state,
// tens of megabytes at full scale, is written once and never copied. last
// is the previous snapshot's size, a guess at this one's unless the
// operator knows better (SnapshotSizer).
func snapshotEntry(snap Snapshotter, last int) ([]byte, error) {
	const room = 1 + binary.MaxVarintLen64 // the tag (field 2) and the length
	size := last + last/4 + 4096
	if s, ok := snap.(SnapshotSizer); ok {
		size = max(size, s.SnapshotSize())
	}
	b, err := snap.AppendSnapshot(make([]byte, room, room+size))
	if err != nil {
		return nil, err
	}
	state := len(b) - room
	var head [room]byte
	h := protowire.AppendVarint(protowire.AppendTag(head[:0], journalSnapshotField, protowire.BytesType), uint64(state))
	start := room - len(h)
	copy(b[start:], h)
	return b[start:], nil
}

// step applies one input batch (or its EOF) to the operator, through the
// job's Driver, and reports whether it finished the job, and the rows it
// applied. Live application and replay both go through it, so a replayed
// operator ends in the state the live one had. encoded is the batch's
// RowBatch as it travels. A batch that does not decode, or that the
// operator rejects, is dropped and counted (the Driver's rule), not
// retried forever: the job goes on without it.
func (r *Runtime) step(j *job, ch transport.ChannelID, eof bool, encoded []byte, out Emitter) (finished bool, applied int) {
	if j.drive.Finished() {
		return false, 0
	}
	dropOnError := func(what string, err error) {
		if o, ok := out.(*Outputs); ok {
			o.Discard()
		}
		if failed := j.drive.Failed(); failed != nil {
			j.failure = failed.Error() // build commits it
			return
		}
		if j.dropped.Load() {
			return // interrupted: the job is going
		}
		j.log.Error(what, "stream", ch.Stream, "sender", ch.Sender, "error", err)
	}
	in := j.inputs[ch]
	if !eof {
		n, err := j.drive.Apply(in.k, encoded, out)
		if err != nil {
			dropOnError("dropped unreadable batch", err)
		} else {
			applied = n
			j.rowsIn.Add(int64(applied))
		}
		j.droppedBatches.Store(j.drive.Dropped())
		return false, applied
	}
	j.mu.Lock()
	in.eof = true
	j.mu.Unlock()
	due, err := j.drive.End(in.k, in.sender, out)
	if err != nil {
		dropOnError("operator failed at end of stream", err)
	}
	if !due {
		return false, 0
	}
	if err := j.drive.Finish(out); err != nil {
		dropOnError("operator failed to finish; emitting nothing", err)
		if j.failure != "" {
			return false, 0
		}
	}
	j.mu.Lock()
	j.finished = true
	j.mu.Unlock()
	return true, 0
}

// Dropped is how many batches of a job this runtime dropped since it
// started, live or in replay: batches that did not decode or that the
// operator rejected (see Driver). False for a job it does not hold.
func (r *Runtime) Dropped(job string) (int64, bool) {
	r.mu.Lock()
	j, ok := r.jobs[job]
	r.mu.Unlock()
	if !ok {
		return 0, false
	}
	return j.droppedBatches.Load(), true
}

// Progress describes every job the process holds, for Status: the jobs
// of this runtime, and those it only sends for so far.
func (r *Runtime) Progress() []*wololov1.JobProgress {
	r.mu.Lock()
	jobs := make([]*job, 0, len(r.jobs))
	for _, j := range r.jobs {
		jobs = append(jobs, j)
	}
	r.mu.Unlock()
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].id < jobs[b].id })
	var out []*wololov1.JobProgress
	for _, j := range jobs {
		p := &wololov1.JobProgress{JobId: j.id, RowsIn: j.rowsIn.Load()}
		marks := r.inbox().Marks(j.id)
		j.mu.Lock()
		p.Finished = j.finished
		for ch, in := range j.inputs {
			p.Inputs = append(p.Inputs, &wololov1.InputChannel{
				Stream: in.stream, Sender: ch.Sender, Watermark: marks[ch], Eof: in.eof,
				Batches: in.batches, Rows: in.rows, Bytes: in.bytes,
			})
		}
		j.mu.Unlock()
		sort.Slice(p.Inputs, func(a, b int) bool {
			return p.Inputs[a].Stream+p.Inputs[a].Sender < p.Inputs[b].Stream+p.Inputs[b].Sender
		})
		p.RowsOut = j.out.RowsOut()
		r.addOutputs(p)
		out = append(out, p)
	}
	// The jobs that so far only send from this process (the gateway's
	// uploads, before anything came back).
	known := make(map[string]bool, len(out))
	for _, p := range out {
		known[p.JobId] = true
	}
	for _, id := range r.outbox().Jobs() {
		if !known[id] {
			p := &wololov1.JobProgress{JobId: id}
			r.addOutputs(p)
			out = append(out, p)
		}
	}
	return out
}

// MetricStreams is what the streams of job id are called in metrics, and
// whether they must be renamed (always: a job's streams are named after
// its client's queries and keys): by the names its JobSpec.MetricStreams
// gives (Progress and the logs keep the plan's names, for the operator).
// Where this runtime holds no job of the id yet (the gateway's upload
// sends before anything comes back), the spec is made from the plan once
// and kept until the job is held or dropped. No names are known (nil,
// true) of a job dropped or forgotten since Status listed it, or of a
// plan that makes no spec here.
func (r *Runtime) MetricStreams(id string) (map[string]string, bool) {
	r.mu.Lock()
	if j, ok := r.jobs[id]; ok {
		delete(r.metricStreams, id)
		r.mu.Unlock()
		return j.spec.MetricStreams, true
	}
	if names, ok := r.metricStreams[id]; ok {
		r.mu.Unlock()
		return names, true
	}
	if r.dropped[id] || !r.admittedLocked(id) {
		r.mu.Unlock()
		return nil, true
	}
	plan := r.planLocked(id)
	r.mu.Unlock()
	if len(plan) == 0 {
		return nil, true
	}
	spec, err := r.cfg.Plans(id, plan)
	if err != nil {
		return nil, true
	}
	r.mu.Lock()
	if !r.dropped[id] {
		r.metricStreams[id] = spec.MetricStreams
	}
	r.mu.Unlock()
	return spec.MetricStreams, true
}

// addOutputs describes a job's outbound channels and its waits for room.
func (r *Runtime) addOutputs(p *wololov1.JobProgress) {
	p.Outputs = outputProgress(r.outbox(), p.JobId)
	st := r.outbox().Stalled(p.JobId)
	p.BackpressureWaits, p.BackpressureSeconds = st.Waits, st.Waited.Seconds()
}

// outputProgress describes a job's outbound channels, for Status.
func outputProgress(outbox *transport.Outbox, job string) []*wololov1.OutputChannel {
	var out []*wololov1.OutputChannel
	for _, c := range outbox.Channels(job) {
		out = append(out, &wololov1.OutputChannel{
			Stream: c.Channel.Stream, Receiver: c.Channel.Receiver, LastSeq: c.LastSeq,
			Acked: c.Acked, OutboxDepth: int64(c.Depth), Connected: c.Connected, LastError: c.LastError,
			Batches: c.Batches, Rows: c.Rows, Bytes: c.Bytes,
		})
	}
	return out
}
