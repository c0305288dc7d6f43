package sqlops

import (
	"fmt"
	"strings"

	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// A job's plan in the deployment. Each process runs, for each job, its
// part of the job's plan as one stage.Operator (StageSpec):
// the stage runtime then gives it what it gives every operator (the
// inbox's order, exactly-once commits, the journal replayed after a
// restart, the outputs cut into batches and routed) and does not know the
// difference. A channel is a stream of the transport (ChannelStream):
// each row crosses it once, with the routes (consumers) it is for, and
// the receiving Task hands each consumer its rows. The gateway's part
// that runs as a file is parsed (the table's scan and the exchanges
// reading it: physical.Plan.Source) is a Source of its own, which the
// upload feeds and commits.

// DecodeSpec is what an instance of task runs for a job whose encoded
// plan (physical.Encode) is plan: StageSpec of the decoded plan, checked
// first (a plan from the store or the wire must hold the invariants
// before anything runs it).
func DecodeSpec(plan []byte, task string, b Budget) (stage.JobSpec, error) {
	p, err := physical.Decode(plan)
	if err != nil {
		return stage.JobSpec{}, err
	}
	if err := physical.Check(p); err != nil {
		return stage.JobSpec{}, fmt.Errorf("plan: %w", err)
	}
	return StageSpec(p, task, b)
}

// StageSpec is what an instance of task runs for a job of plan p (of a
// standing plan, physical.Plan.Standing: an EpochTask, epochstage.go): every
// operator of the task but its Source ones, as one stage.Operator whose
// input streams are the routes of the channels into the task, and whose
// outputs are the routes of the channels its exchanges write. Where the
// task holds the queries' sinks (the gateway), the operator's Finish
// records each query's NAME.csv as the job's result
// (schema.ResultRecord). It is stateful, and replayed from the journal
// after a restart. In metrics its streams go by numbers (MetricStreams).
//
// A task that is neither the plan's gateway nor its shard task (a plan
// made on another topology than the process's) runs nothing of the job:
// no streams, an operator that is never given anything.
//
// The job is held to budget b there (its zero fields at their defaults;
// past one, the job fails: OverBudget). Its HeldBytes is about the most
// bytes of values an operator of the gateway's task holds until its
// inputs end (a sort, a sink): past it the job's answer is too large,
// and Finish records the job's failure (schema.FailedResultsRecord)
// instead of results. 0: DefaultMaxHeldBytes.
func StageSpec(p *physical.Plan, task string, b Budget) (stage.JobSpec, error) {
	if _, err := replicasOf(p, task); err != nil {
		return stage.JobSpec{New: func() stage.Operator { return failed{fmt.Errorf("task %s runs nothing of this job", task)} }, Stateless: true, MetricStreams: MetricStreams(p)}, nil
	}
	s, err := planStreams(p)
	if err != nil {
		return stage.JobSpec{}, err
	}
	var ops []*physical.Op
	for _, o := range p.Ops {
		if o.Task == task && !p.Source(o) {
			ops = append(ops, o)
		}
	}
	var w stage.Wiring
	for _, c := range inputsOf(p, s, task) {
		w.Inputs = append(w.Inputs, stage.Edge{Stream: s.byChannel[c.ch], Stage: p.Channel(c.ch).From, Replicas: c.senders})
	}
	if w.Outputs, err = edges(p, s, ops); err != nil {
		return stage.JobSpec{}, err
	}
	if p.Standing {
		// An EpochTask (epochstage.go); made now too, as below.
		if _, err := newEpochStageOp(p, task, s, b); err != nil {
			return stage.JobSpec{}, err
		}
		return stage.JobSpec{Wiring: w, MetricStreams: MetricStreams(p), New: func() stage.Operator {
			op, err := newEpochStageOp(p, task, s, b)
			if err != nil {
				return failed{err}
			}
			return op
		}}, nil
	}
	// One operator made now: a plan that does not build fails here, when
	// the job is introduced, not in its actor.
	if b.HeldBytes <= 0 {
		b.HeldBytes = DefaultMaxHeldBytes
	}
	if _, err := newStageOp(p, task, s, b); err != nil {
		return stage.JobSpec{}, err
	}
	return stage.JobSpec{Wiring: w, MetricStreams: MetricStreams(p), New: func() stage.Operator {
		op, err := newStageOp(p, task, s, b)
		if err != nil {
			return failed{err} // it built a moment ago: it does not fail now
		}
		return op
	}}, nil
}

// stageOp is a task's part of a job as a stage.Operator: a Task of its
// operators but the Source ones, fed the batches and ends of the channels
// it reads (its inputs, by index: inputsOf).
type stageOp struct {
	t       *Task
	p       *physical.Plan
	streams *streams
	inputs  []channelOf
	maxHeld int64 // the gateway's limit, for the failure's reason
	// out is the Emitter of the call being served: where the exchanges'
	// batches and ends go; wire writes the batches.
	out  stage.Emitter
	wire wire.Writer
}

func newStageOp(p *physical.Plan, task string, s *streams, b Budget) (*stageOp, error) {
	tables := map[int]*exec.KeyTable{}
	shared := func(id int) *exec.KeyTable {
		if tables[id] == nil {
			tables[id] = exec.NewKeyTable()
		}
		return tables[id]
	}
	o := &stageOp{p: p, streams: s, inputs: inputsOf(p, s, task), maxHeld: b.HeldBytes}
	if task != p.Gateway.Name {
		b.HeldBytes = 0 // it holds no answer
	}
	t, err := newTask(p, task, 0, nil, shared, o.send, func(op *physical.Op) bool { return !p.Source(op) }, b)
	if err != nil {
		return nil, err
	}
	o.t = t
	return o, nil
}

// send hands what an exchange writes to the runtime's Emitter: a batch
// for one receiving instance, or (rows nil) the end of the route, once the
// exchange has finished.
func (o *stageOp) send(ch *physical.Channel, to int, rows *Rows) error {
	return emitOn(o.out, o.streams, ch, to, rows, &o.wire)
}

// emitOn hands a batch an exchange wrote (or, rows nil, its end) to out,
// on the channel's stream, as the bytes it travels as, written by w.
func emitOn(out stage.Emitter, s *streams, ch *physical.Channel, to int, rows *Rows, w *wire.Writer) error {
	name, err := s.stream(ch)
	if err != nil {
		return err
	}
	if rows == nil {
		out.End(name)
		return nil
	}
	out.Encoded(name, to, w.Append(nil, rows.b, rows.s, rows.routes), rows.Len())
	return nil
}

func (o *stageOp) input(k int) (channelOf, error) { return inputAt(o.inputs, k) }

// inputAt is input k of a stage operator's inputs.
func inputAt(inputs []channelOf, k int) (channelOf, error) {
	if k < 0 || k >= len(inputs) {
		return channelOf{}, fmt.Errorf("no input %d in the job's plan, of %d", k, len(inputs))
	}
	return inputs[k], nil
}

// Apply implements stage.Operator: the batch read with the wire codec
// (Task.ReceiveEncoded).
func (o *stageOp) Apply(k int, encoded []byte, out stage.Emitter) (int, error) {
	c, err := o.input(k)
	if err != nil {
		return 0, err
	}
	o.out = out
	o.t.meter.interruptedBy(out)
	return o.t.ReceiveEncoded(c.ch, 0, encoded)
}

// EndInput implements stage.InputEnder: the runtime's Driver calls it
// once every sender has ended the input, and the Task is told of each
// sender's end, as it counts them itself.
func (o *stageOp) EndInput(k int, out stage.Emitter) error {
	c, err := o.input(k)
	if err != nil {
		return err
	}
	o.out = out
	o.t.meter.interruptedBy(out)
	return endAll(c, o.t.End)
}

// endAll tells a task (a Task's End, an EpochTask's) that every sender
// of channel c has ended it, as the runtime's Driver has counted them.
func endAll(c channelOf, end func(ch string, sender int) error) error {
	for sender := range c.senders {
		if err := end(c.ch, sender); err != nil {
			return err
		}
	}
	return nil
}

// DefaultMaxHeldBytes is about the most bytes of values one operator of
// a job holds at the gateway until its inputs end (a sort, a sink: a
// query's answer) unless the gateway says otherwise (--max-held-bytes):
// past it the job fails, its answer too large, rather than the gateway
// run out of memory for every job.
const DefaultMaxHeldBytes = 256 << 20

// Usage implements stage.Spender: what the job spent here of its Budget.
func (o *stageOp) Usage() []any { return o.t.meter.usage() }

// Finish implements stage.Operator: every input has ended, so every
// operator has finished; the task's sinks become the job's results, or,
// when an operator was given more rows than it may hold, the job's
// failure (schema.FailedResultsRecord).
func (o *stageOp) Finish(out stage.Emitter) error {
	o.out = out
	o.t.meter.interruptedBy(out)
	if what, over := o.t.Overflowed(); over {
		out.Record(schema.FailedResultsRecord, fmt.Appendf(nil, "the answer is too large: %s was given more than %d MiB of rows to hold at the gateway (--max-held-bytes)", what, o.maxHeld>>20))
		return nil
	}
	if !o.t.Done() {
		var open []string
		for _, in := range o.t.order {
			if !in.done {
				open = append(open, fmt.Sprintf("#%d %s", in.o.ID, in.o.Kind))
			}
		}
		return fmt.Errorf("task %s: every input ended, but not every operator finished: %s", o.t.name, strings.Join(open, ", "))
	}
	for _, q := range o.p.Queries {
		if o.p.Ops[q.Sink].Task != o.t.name {
			continue
		}
		csv, ok := o.t.Sink(q.Sink)
		if !ok {
			return fmt.Errorf("query %s: its sink #%d has not finished", q.Name, q.Sink)
		}
		out.Record(schema.ResultRecord(q.Name+".csv"), csv)
	}
	return nil
}

// AppendSnapshot implements stage.Snapshotter.
func (o *stageOp) AppendSnapshot(dst []byte) ([]byte, error) { return o.t.AppendSnapshot(dst) }

// SnapshotSize implements stage.SnapshotSizer.
func (o *stageOp) SnapshotSize() int { return o.t.SnapshotSize() }

// NoSnapshot implements stage.SnapshotDecliner: a task with spilled
// state writes none.
func (o *stageOp) NoSnapshot() bool { return o.t.NoSnapshot() }

// Restore implements stage.Snapshotter.
func (o *stageOp) Restore(state []byte) error { return o.t.Restore(state) }

// interruptedBy makes the count's err say so when out says that the job
// was dropped (stage.Interrupter); an out that cannot say, never.
func (m *meter) interruptedBy(out stage.Emitter) {
	if i, ok := out.(stage.Interrupter); ok {
		m.interrupted = i.Interrupted
	} else {
		m.interrupted = nil
	}
}

// failed is an operator that could not be made: it refuses everything.
type failed struct{ err error }

func (f failed) Apply(int, []byte, stage.Emitter) (int, error) { return 0, f.err }
func (f failed) Finish(stage.Emitter) error                    { return f.err }
