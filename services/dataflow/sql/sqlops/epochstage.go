package sqlops

import (
	"fmt"
	"strings"

	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// A standing plan in the deployment (physical.Plan.Standing): each
// process runs its part of the job as one stage.Operator (StageSpec), an
// EpochTask of its task's operators but the Source ones, on the streams
// and wiring of the batch plan's; a channel's batches travel as
// EncodeEpochRows' bytes, its markers as EncodeEpochMarker's (a batch of
// no rows to the runtime), its end as an EOF. Where the task holds the
// sinks (the gateway), each version is recorded in the commit of the
// step that made it (Version.Records: version/<k>/NAME.csv,
// change/<k>/NAME.csv), and Finish records each query's final answer as
// a batch job's result.

// epochStageOp is a task's part of a standing job as a stage.Operator.
type epochStageOp struct {
	t       *EpochTask
	streams *streams
	inputs  []channelOf
	// out is the Emitter of the call being served; wire writes the
	// batches.
	out  stage.Emitter
	wire wire.Writer
}

func newEpochStageOp(p *physical.Plan, task string, s *streams, b Budget) (*epochStageOp, error) {
	o := &epochStageOp{streams: s, inputs: inputsOf(p, s, task)}
	t, err := NewEpochTask(EpochConfig{
		Plan: p, Task: task, Budget: b,
		Keep: func(op *physical.Op) bool { return !p.Source(op) },
		Out:  epochOut(func() stage.Emitter { return o.out }, s, &o.wire),
	})
	if err != nil {
		return nil, err
	}
	o.t = t
	return o, nil
}

// epochOut is where an epoch task's outputs go in the deployment: what
// its exchanges write and their markers, on the channels' streams of
// out() (the Emitter of the call being served), written by w; its
// versions as records of the step's commit.
func epochOut(out func() stage.Emitter, s *streams, w *wire.Writer) EpochOut {
	return EpochOut{
		Send: func(ch *physical.Channel, to int, epoch int64, rows *Rows) error {
			if rows == nil {
				return emitOn(out(), s, ch, to, nil, w)
			}
			name, err := s.stream(ch)
			if err != nil {
				return err
			}
			out().Encoded(name, to, w.Append(EncodeEpochHead(nil, epoch), rows.b, rows.s, rows.routes), rows.Len())
			return nil
		},
		Marker: func(ch *physical.Channel, to int, epoch int64) error {
			name, err := s.stream(ch)
			if err != nil {
				return err
			}
			out().Encoded(name, to, EncodeEpochMarker(nil, epoch), 0)
			return nil
		},
		Version: func(v Version) error {
			if v.Final {
				return nil // Finish records the results
			}
			for k, b := range v.Records() {
				out().Record(k, b)
			}
			return nil
		},
	}
}

func (o *epochStageOp) input(k int) (channelOf, error) { return inputAt(o.inputs, k) }

// Apply implements stage.Operator: a batch of changes, or a marker
// (EpochTask.ReceiveEncoded).
func (o *epochStageOp) Apply(k int, encoded []byte, out stage.Emitter) (int, error) {
	c, err := o.input(k)
	if err != nil {
		return 0, err
	}
	o.out = out
	o.t.meter.interruptedBy(out)
	return o.t.ReceiveEncoded(c.ch, encoded)
}

// EndInput implements stage.InputEnder: the runtime's Driver calls it
// once every sender has ended the input, and the task is told of each
// sender's end.
func (o *epochStageOp) EndInput(k int, out stage.Emitter) error {
	c, err := o.input(k)
	if err != nil {
		return err
	}
	o.out = out
	o.t.meter.interruptedBy(out)
	return endAll(c, o.t.End)
}

// Finish implements stage.Operator: every input has ended, so every
// operator has finished; each query whose sink is here has its final
// answer recorded as the job's result, as a batch job's.
func (o *epochStageOp) Finish(out stage.Emitter) error {
	o.out = out
	if !o.t.Done() {
		var open []string
		for _, u := range o.t.units {
			if !u.done {
				open = append(open, fmt.Sprintf("#%d %s", u.top().ID, u.top().Kind))
			}
		}
		return fmt.Errorf("task %s: every input ended, but not every operator finished: %s", o.t.name, strings.Join(open, ", "))
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
func (o *epochStageOp) Usage() []any { return o.t.Usage() }

// AppendSnapshot implements stage.Snapshotter.
func (o *epochStageOp) AppendSnapshot(dst []byte) ([]byte, error) { return o.t.AppendSnapshot(dst) }

// SnapshotSize implements stage.SnapshotSizer.
func (o *epochStageOp) SnapshotSize() int { return o.t.SnapshotSize() }

// Restore implements stage.Snapshotter.
func (o *epochStageOp) Restore(state []byte) error { return o.t.Restore(state) }
