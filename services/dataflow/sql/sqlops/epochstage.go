package sqlops

import (
	"fmt"

	"github.com/wololo/wololo/services/dataflow/schema"

	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// A standing plan in the deployment: each process runs its task's part
// of the plan as one EpochTask under the stage runtime, as it runs a
// Task for a batch plan (StageSpec chooses), and the runtime does not
// know the difference: an epoch's changes and its markers are batches of
// the channels' streams like any other (EncodeEpochRows,
// EncodeEpochMarker), journaled, committed and acknowledged as they are;
// the task's snapshot holds what it holds mid-epoch. At the gateway,
// each query's version of each epoch is two records of the commit that
// completes it (Version.Records), which the gateway
// publishes (stage.Config.OnRecords), and the end of the input writes
// the results as a batch job's (schema.ResultRecord).

// standingSpec is StageSpec of a standing plan (s its streams, w its
// wiring): an epochOp.
func standingSpec(p *physical.Plan, task string, s *streams, w stage.Wiring, b Budget) (stage.JobSpec, error) {
	if _, err := newEpochOp(p, task, s, b); err != nil {
		return stage.JobSpec{}, err
	}
	return stage.JobSpec{Wiring: w, MetricStreams: MetricStreams(p), New: func() stage.Operator {
		op, err := newEpochOp(p, task, s, b)
		if err != nil {
			return failed{err} // it built a moment ago: it does not fail now
		}
		return op
	}}, nil
}

// epochOp is a task's part of a standing job as a stage.Operator: an
// EpochTask of its operators but the Source ones, fed the batches,
// markers and ends of the channels it reads.
type epochOp struct {
	t       *EpochTask
	streams *streams
	inputs  []channelOf
	// out is the Emitter of the call being served.
	out  stage.Emitter
	wire wire.Writer
}

func newEpochOp(p *physical.Plan, task string, s *streams, b Budget) (*epochOp, error) {
	o := &epochOp{streams: s, inputs: inputsOf(p, s, task)}
	t, err := NewEpochTask(EpochConfig{Plan: p, Task: task, Out: epochOut(func() stage.Emitter { return o.out }, s, &o.wire, o.version),
		Keep: func(op *physical.Op) bool { return !p.Source(op) }, Budget: b})
	if err != nil {
		return nil, err
	}
	o.t = t
	return o, nil
}

// epochOut is the EpochOut that writes an epoch task's changes, markers
// and ends on their streams, to the Emitter out returns (the one of the
// call being served), and hands versions to version (nil: none).
func epochOut(out func() stage.Emitter, s *streams, w *wire.Writer, version func(Version) error) EpochOut {
	stream := func(ch *physical.Channel) (string, error) {
		name, ok := s.byChannel[ch.Name]
		if !ok {
			return "", fmt.Errorf("no channel %q in the job's plan", ch.Name)
		}
		return name, nil
	}
	return EpochOut{
		Send: func(ch *physical.Channel, to int, epoch int64, rows *Rows) error {
			name, err := stream(ch)
			if err != nil {
				return err
			}
			if rows == nil {
				out().End(name)
				return nil
			}
			out().Encoded(name, to, EncodeEpochRows(nil, epoch, w.Append(nil, rows.b, rows.s, rows.routes)), rows.Len())
			return nil
		},
		Marker: func(ch *physical.Channel, to int, epoch int64) error {
			name, err := stream(ch)
			if err != nil {
				return err
			}
			out().Encoded(name, to, EncodeEpochMarker(nil, epoch), 0)
			return nil
		},
		Version: version,
	}
}

// version records a version of a query's answer after an epoch in the
// step's commit (Version.Records: its answer and its change). A Final
// one is recorded by Finish, with the others: a sink may finish steps
// before the task does, and the gateway reads the results from the
// final commit.
func (o *epochOp) version(v Version) error {
	if v.Final {
		return nil
	}
	for k, b := range v.Records() {
		o.out.Record(k, b)
	}
	return nil
}

func (o *epochOp) serve(out stage.Emitter) {
	o.out = out
	o.t.meter.interruptedBy(out)
}

// Apply implements stage.Operator: a batch of changes or an epoch's
// marker (EpochTask.ReceiveEncoded).
func (o *epochOp) Apply(k int, encoded []byte, out stage.Emitter) (int, error) {
	if k < 0 || k >= len(o.inputs) {
		return 0, fmt.Errorf("no input %d in the job's plan, of %d", k, len(o.inputs))
	}
	o.serve(out)
	return o.t.ReceiveEncoded(o.inputs[k].ch, encoded)
}

// EndInput implements stage.InputEnder: every sender has ended input k.
func (o *epochOp) EndInput(k int, out stage.Emitter) error {
	if k < 0 || k >= len(o.inputs) {
		return fmt.Errorf("no input %d in the job's plan, of %d", k, len(o.inputs))
	}
	o.serve(out)
	for sender := range o.inputs[k].senders {
		if err := o.t.End(o.inputs[k].ch, sender); err != nil {
			return err
		}
	}
	return nil
}

// Finish implements stage.Operator: every input has ended, so every
// operator has finished; each sink's final answer is recorded as the
// query's result (schema.ResultRecord), as a batch job's.
func (o *epochOp) Finish(out stage.Emitter) error {
	o.serve(out)
	if !o.t.Done() {
		return fmt.Errorf("task %s: every input ended, but not every operator finished", o.t.name)
	}
	for _, q := range o.t.Queries() {
		csv, ok := o.t.Answer(q)
		if !ok {
			return fmt.Errorf("query %s: its sink has not finished", q)
		}
		out.Record(schema.ResultRecord(q+".csv"), csv)
	}
	return nil
}

// Usage implements stage.Spender.
func (o *epochOp) Usage() []any { return o.t.Usage() }

// AppendSnapshot implements stage.Snapshotter.
func (o *epochOp) AppendSnapshot(dst []byte) ([]byte, error) { return o.t.AppendSnapshot(dst) }

// Restore implements stage.Snapshotter.
func (o *epochOp) Restore(state []byte) error { return o.t.Restore(state) }
