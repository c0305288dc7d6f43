package stage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/batch"
	"github.com/wololo/wololo/transport"
)

// DefaultOutboxLimit is how many unacknowledged batches a channel may hold
// before the job's actor stops applying input.
const DefaultOutboxLimit = 16

// Config is what a Runtime needs.
type Config struct {
	Topology    deploy.Topology
	Instance    deploy.Instance
	Spec        Spec
	Store       transport.Store
	Outbox      *transport.Outbox
	Sender      *transport.Sender
	Log         hclog.Logger
	BatchRows   int // rows per output batch; DefaultBatchRows if 0
	OutboxLimit int // DefaultOutboxLimit if 0
	// OnFinish, if set, is called after a job's final commit with the
	// records its operator wrote.
	OnFinish func(job string, records map[string][]byte)
}

// Validate checks the config and that the operator reads and writes exactly
// the streams the topology gives its stage.
func (c *Config) Validate() error {
	if c.Store == nil || c.Outbox == nil || c.Sender == nil || c.Spec.New == nil {
		return errors.New("stage config: Store, Outbox, Sender and Spec.New are required")
	}
	stage, ok := c.Topology.Stage(c.Instance.Stage)
	if !ok {
		return fmt.Errorf("stage config: topology has no stage %q", c.Instance.Stage)
	}
	if c.Instance.Index < 0 || c.Instance.Index >= stage.Replicas {
		return fmt.Errorf("stage config: instance %s beyond %d replicas", c.Instance.Name(), stage.Replicas)
	}
	if err := sameStreams("inputs", stage.Name, c.Spec.Inputs, c.Topology.Inputs(stage.Name)); err != nil {
		return err
	}
	if stage.Role != "gateway" { // the gateway's outputs come from the upload, not the operator
		if err := sameStreams("outputs", stage.Name, c.Spec.Outputs, c.Topology.Outputs(stage.Name)); err != nil {
			return err
		}
	}
	if c.Log == nil {
		c.Log = hclog.NewNullLogger()
	}
	if c.BatchRows == 0 {
		c.BatchRows = DefaultBatchRows
	}
	if c.OutboxLimit == 0 {
		c.OutboxLimit = DefaultOutboxLimit
	}
	return nil
}

func sameStreams(what, stage string, want []string, got []deploy.Stream) error {
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	a, b := slices.Clone(want), names
	sort.Strings(a)
	sort.Strings(b)
	if !slices.Equal(a, b) {
		return fmt.Errorf("stage %s: operator %s are %v but the topology gives %v", stage, what, a, b)
	}
	return nil
}

// Runtime runs one stage instance: it is the transport.Handler of its
// process's StageService.
type Runtime struct {
	cfg  Config
	self string
	ctx  context.Context
	fail func(error)

	mu   sync.Mutex
	jobs map[string]*job
}

// New returns a Runtime. Its actors stop when ctx ends; a store failure
// (which leaves the process unable to keep its promises) is passed to fail.
func New(ctx context.Context, cfg Config, fail func(error)) (*Runtime, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Runtime{cfg: cfg, self: cfg.Instance.Name(), ctx: ctx, fail: fail, jobs: map[string]*job{}}, nil
}

type input struct {
	stream    string
	watermark uint64
	eof       bool
}

type delivery struct {
	ch    transport.ChannelID
	batch *wololov1.Batch
	done  func(error)
}

type job struct {
	id     string
	log    hclog.Logger
	queue  chan delivery
	op     Operator
	out    *Outputs
	rowsIn atomic.Int64
	bad    atomic.Int64

	mu       sync.Mutex // guards inputs and finished for Status and Open
	inputs   map[transport.ChannelID]*input
	open     int // inputs without EOF
	finished bool
}

// Open implements transport.Handler.
func (r *Runtime) Open(ch transport.ChannelID) (uint64, error) {
	j, err := r.job(ch.Job)
	if err != nil {
		return 0, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	in, ok := j.inputs[ch]
	if !ok {
		return 0, fmt.Errorf("%w: %s does not take %s from %s", transport.ErrUnknownChannel, r.self, ch.Stream, ch.Sender)
	}
	return in.watermark, nil
}

// Deliver implements transport.Handler.
func (r *Runtime) Deliver(ctx context.Context, ch transport.ChannelID, b *wololov1.Batch, done func(error)) error {
	j, err := r.job(ch.Job)
	if err != nil {
		return err
	}
	select {
	case j.queue <- delivery{ch: ch, batch: b, done: done}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
}

// job returns the job's state, creating it (and its actor) on first use.
func (r *Runtime) job(id string) (*job, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j, ok := r.jobs[id]; ok {
		return j, nil
	}
	out, err := NewOutputs(r.cfg.Topology, r.cfg.Instance, id, r.cfg.Spec.Outputs, r.cfg.Outbox, r.cfg.BatchRows)
	if err != nil {
		return nil, err
	}
	j := &job{
		id:     id,
		log:    r.cfg.Log.With("job", id),
		queue:  make(chan delivery, 4),
		op:     r.cfg.Spec.New(),
		out:    out,
		inputs: map[transport.ChannelID]*input{},
	}
	for _, st := range r.cfg.Topology.Inputs(r.cfg.Instance.Stage) {
		for i := 0; i < r.cfg.Topology.Replicas(st.From); i++ {
			from := deploy.Instance{Stage: st.From, Index: i}
			ch := transport.ChannelID{Job: id, Stream: st.Name, Sender: from.Name(), Receiver: r.self}
			j.inputs[ch] = &input{stream: st.Name}
		}
	}
	j.open = len(j.inputs)
	r.jobs[id] = j
	j.log.Info("job started", "inputs", len(j.inputs))
	go r.actor(j)
	return j, nil
}

// actor applies a job's deliveries one at a time.
func (r *Runtime) actor(j *job) {
	for {
		var d delivery
		select {
		case <-r.ctx.Done():
			return
		case d = <-j.queue:
		}
		if err := r.cfg.Outbox.WaitRoom(r.ctx, j.out.Channels(), r.cfg.OutboxLimit); err != nil {
			d.done(err)
			return
		}
		if err := r.apply(j, d); err != nil {
			d.done(err)
			if !errors.Is(err, transport.ErrSeqGap) {
				r.fail(fmt.Errorf("job %s: %w", j.id, err))
				return
			}
			continue
		}
		d.done(nil)
	}
}

// apply applies one delivery and commits it. Errors other than ErrSeqGap
// are store failures.
func (r *Runtime) apply(j *job, d delivery) error {
	j.mu.Lock()
	in := j.inputs[d.ch]
	wm, finished := in.watermark, j.finished
	j.mu.Unlock()
	switch transport.Check(wm, d.batch.Seq) {
	case transport.Duplicate:
		return nil
	case transport.Gap:
		return fmt.Errorf("%w: %s got %d after %d", transport.ErrSeqGap, d.ch, d.batch.Seq, wm)
	}
	finishing := false
	if d.batch.Eof {
		finishing = j.open == 1 && !finished
		if ender, ok := j.op.(StreamEnder); ok && !finished && j.lastOfStream(d.ch) {
			if err := ender.EndStream(d.ch.Stream, j.out); err != nil {
				j.out.Discard()
				j.log.Error("operator failed at end of stream", "stream", d.ch.Stream, "error", err)
			}
		}
	} else if !finished {
		n := batch.Rows(d.batch.Rows)
		if err := j.op.Apply(d.ch.Stream, d.batch.GetRows(), j.out); err != nil {
			// A batch this stage cannot read is dropped and counted, not
			// retried forever; the job goes on without it.
			j.out.Discard()
			j.bad.Add(1)
			j.log.Error("dropped unreadable batch", "stream", d.ch.Stream, "sender", d.ch.Sender, "seq", d.batch.Seq, "error", err)
		} else {
			j.rowsIn.Add(int64(n))
		}
	}
	if finishing {
		if err := j.op.Finish(j.out); err != nil {
			j.out.Discard()
			j.log.Error("operator failed to finish; emitting nothing", "error", err)
		}
	}
	entries, records := j.out.Drain(finishing)
	c := &transport.Commit{Job: j.id, Inputs: map[transport.ChannelID]uint64{d.ch: d.batch.Seq}, Outputs: entries, Records: records}
	if err := r.cfg.Store.Commit(c); err != nil {
		return fmt.Errorf("commit %s seq %d: %w", d.ch, d.batch.Seq, err)
	}
	j.mu.Lock()
	in.watermark = d.batch.Seq
	if d.batch.Eof && !in.eof {
		in.eof = true
		j.open--
	}
	if finishing {
		j.finished = true
		j.op = nil // its state is no longer needed
	}
	j.mu.Unlock()
	r.cfg.Sender.Publish(entries)
	if finishing {
		j.log.Info("job finished at this stage", "rows-in", j.rowsIn.Load(), "rows-out", j.out.RowsOut())
		if r.cfg.OnFinish != nil {
			r.cfg.OnFinish(j.id, records)
		}
	}
	return nil
}

// lastOfStream reports whether ch is the only channel of its stream whose
// EOF is not yet applied.
func (j *job) lastOfStream(ch transport.ChannelID) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	for c, in := range j.inputs {
		if c.Stream == ch.Stream && c != ch && !in.eof {
			return false
		}
	}
	return true
}

// Progress describes every job, for Status.
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
		j.mu.Lock()
		p.Finished = j.finished
		for ch, in := range j.inputs {
			p.Inputs = append(p.Inputs, &wololov1.InputChannel{Stream: in.stream, Sender: ch.Sender, Watermark: in.watermark, Eof: in.eof})
		}
		j.mu.Unlock()
		sort.Slice(p.Inputs, func(a, b int) bool {
			return p.Inputs[a].Stream+p.Inputs[a].Sender < p.Inputs[b].Stream+p.Inputs[b].Sender
		})
		p.RowsOut = j.out.RowsOut()
		p.Outputs = OutputProgress(r.cfg.Outbox, j.id)
		out = append(out, p)
	}
	return out
}

// OutputProgress describes a job's outbound channels, for Status.
func OutputProgress(outbox *transport.Outbox, job string) []*wololov1.OutputChannel {
	var out []*wololov1.OutputChannel
	for _, c := range outbox.Channels(job) {
		out = append(out, &wololov1.OutputChannel{
			Stream: c.Channel.Stream, Receiver: c.Channel.Receiver, LastSeq: c.LastSeq,
			Acked: c.Acked, OutboxDepth: int64(c.Depth), Connected: c.Connected,
		})
	}
	return out
}
