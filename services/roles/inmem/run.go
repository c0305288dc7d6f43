package inmem

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/operators"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// Options says what to run on what.
type Options struct {
	// Topology is the graph; a logical one is planned first (deploy.Plan).
	Topology deploy.Topology
	// Matches and Players are the two input files.
	Matches, Players string
	// Parsers is how many goroutines parse; 0: one per CPU.
	Parsers int
	// BatchRows is where batches are cut (stage.DefaultBatchRows if 0).
	BatchRows int
	// PieceBytes is about how much of a file one piece holds
	// (DefaultPieceBytes if 0); tests make it small.
	PieceBytes int
	// Progress, if set, hears how far parsing is after each piece: bytes
	// of the file parsed, of total. Called from several goroutines, one
	// call at a time.
	Progress func(file schema.File, parsed, total int64)
	Log      hclog.Logger
	// MaxMalformed is the share of a file's records that may be malformed
	// (schema.MalformedLimit, the gateway's rule); past it the run fails
	// with a schema.TooMalformed once that file is parsed. Nil:
	// schema.DefaultMaxMalformed.
	MaxMalformed *schema.MalformedLimit
}

// Result is what a run answers.
type Result struct {
	// Files maps each result file name (schema.ResultFiles) to its bytes.
	Files map[string][]byte
	// Reports are the inputs' reports: rows read, malformed (the first
	// schema.MaxRejectsListed listed), missing.
	Reports [2]schema.FileReport
	// DroppedBatches counts the batches an operator rejected, which were
	// dropped (stage.Driver's rule, as in a deployment), over every task.
	DroppedBatches int64
}

// job is the job name every channel carries: one run is one job.
const job = "inmem"

// inboxBatches is how many batches a task may have waiting: the bound that
// makes a fast sender wait for a slow receiver.
const inboxBatches = 64

// message is a batch, or a stream's end, from one sender instance.
type message struct {
	stream, sender string
	rows           *wololov1.RowBatch
	eof            bool
}

// task is one instance of a planned stage and its operator.
type task struct {
	inst  deploy.Instance
	log   hclog.Logger
	drive *stage.Driver // its operator's
	out   *stage.Outputs
	inbox chan message
}

// graph is every task of a run and where their outputs go.
type graph struct {
	ctx     context.Context
	stop    func(error)      // ends the run with the first failure
	tasks   map[string]*task // by instance name
	mu      sync.Mutex
	records map[string][]byte
}

// Run runs the topology on the two files and returns the answers.
func Run(ctx context.Context, o Options) (*Result, error) { return run(ctx, o, nil) }

// run is Run; inject, if set, is called once the tasks run and before the
// files are read (its tests hand tasks batches of their own there).
func run(ctx context.Context, o Options, inject func(*graph)) (*Result, error) {
	top := o.Topology
	if !top.Planned() {
		var err error
		if top, err = deploy.Plan(top); err != nil {
			return nil, err
		}
	}
	if o.MaxMalformed != nil {
		if err := o.MaxMalformed.Valid(); err != nil {
			return nil, err
		}
	}
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	if o.PieceBytes <= 0 {
		o.PieceBytes = DefaultPieceBytes
	}
	if o.Parsers <= 0 {
		o.Parsers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	g := &graph{ctx: ctx, stop: cancel, tasks: map[string]*task{}, records: map[string][]byte{}}
	if err := g.build(top, o); err != nil {
		return nil, err
	}

	var wg sync.WaitGroup
	for _, t := range g.tasks {
		wg.Go(func() {
			if err := g.run(t); err != nil {
				g.stop(fmt.Errorf("%s: %w", t.inst.Name(), err))
			}
		})
	}
	if inject != nil {
		inject(g)
	}
	src := &source{g: g, top: top, opts: o}
	reports := src.run()
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	res := &Result{Files: map[string][]byte{}, Reports: reports}
	for _, t := range g.tasks {
		res.DroppedBatches += t.drive.Dropped()
	}
	for _, name := range schema.ResultFiles(queries.Names) {
		b, ok := g.records[schema.ResultRecord(name)]
		if !ok {
			return nil, fmt.Errorf("the graph ended without %s", name)
		}
		res.Files[name] = b
	}
	return res, nil
}

// build makes a task for every instance of every stage of the plan.
func (g *graph) build(top deploy.Topology, o Options) error {
	for _, st := range top.Stages {
		spec, err := operators.SpecFor(top, st)
		if err != nil {
			return err
		}
		for i := range st.Replicas {
			inst := deploy.Instance{Stage: st.Name, Index: i}
			out, err := stage.NewOutputs(top, inst, job, spec.Outputs, o.BatchRows)
			if err != nil {
				return err
			}
			senders := map[string]int{}
			for _, name := range spec.Inputs {
				s, ok := top.Stream(name)
				if !ok {
					return fmt.Errorf("stage %s reads stream %q, which the topology lacks", st.Name, name)
				}
				senders[name] = top.Replicas(s.From)
			}
			g.tasks[inst.Name()] = &task{inst: inst, log: o.Log.With("job", job, "stage", st.Name, "instance", inst.Name()),
				drive: stage.NewDriver(spec.New(), senders), out: out, inbox: make(chan message, inboxBatches)}
		}
	}
	return nil
}

// run applies a task's input until every input stream has ended, then
// finishes its operator and ends its outputs. A batch the operator
// rejects is dropped and counted, as the stage runtime drops it (see
// stage.Driver), not a failure of the run.
func (g *graph) run(t *task) error {
	if t.drive.AllEnded() {
		return g.finish(t)
	}
	for {
		var m message
		select {
		case m = <-t.inbox:
		case <-g.ctx.Done():
			return nil
		}
		if !m.eof {
			if err := t.drive.Apply(m.stream, m.rows, t.out); err != nil {
				t.out.Discard()
				t.log.Error("dropped unreadable batch", "stream", m.stream, "sender", m.sender, "error", err)
			}
			if err := g.flush(t.out, false); err != nil {
				return err
			}
			continue
		}
		due, err := t.drive.End(m.stream, m.sender, t.out)
		if err != nil {
			return fmt.Errorf("end of %s: %w", m.stream, err)
		}
		if due {
			return g.finish(t)
		}
		if err := g.flush(t.out, false); err != nil {
			return err
		}
	}
}

func (g *graph) finish(t *task) error {
	if err := t.drive.Finish(t.out); err != nil {
		return fmt.Errorf("finish: %w", err)
	}
	t.log.Debug("finished", "rows-out", t.out.RowsOut(), "dropped-batches", t.drive.Dropped())
	return g.flush(t.out, true)
}

// flush hands what out has built to its receivers (with eof, the ends of
// its streams too) and keeps its records.
func (g *graph) flush(out *stage.Outputs, eof bool) error {
	batches, records := out.Drain(eof)
	if len(records) > 0 {
		g.mu.Lock()
		for k, v := range records {
			g.records[k] = v
		}
		g.mu.Unlock()
	}
	return g.send(batches)
}

// send puts each batch in its receiver's inbox.
func (g *graph) send(batches []stage.Emitted) error {
	for _, b := range batches {
		t, ok := g.tasks[b.Channel.Receiver]
		if !ok {
			return fmt.Errorf("stream %s goes to %s, which is no task", b.Channel.Stream, b.Channel.Receiver)
		}
		rows, err := b.RowBatch()
		if err != nil {
			return err
		}
		select {
		case t.inbox <- message{stream: b.Channel.Stream, sender: b.Channel.Sender, rows: rows, eof: b.EOF}:
		case <-g.ctx.Done():
			return errStopped
		}
	}
	return nil
}

// errStopped is what a send returns once the run is ending anyway.
var errStopped = errors.New("run stopped")
