package sqlops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// Source is the gateway's part of a job's plan for one table: the
// table's scan and the exchanges that read it, which route each row the
// upload parses onto the channels, as the plan's routes say. Rows come in
// one at a time as text fields (Row: what ingest parses of a record),
// which the scan reads straight into the typed columns of its next batch;
// Flush applies them as one batch, so the upload calls it before each
// commit and the commit holds every row up to its offset. It is not safe
// for concurrent use.
//
// When one exchange reads the table, keyed by one of its text columns,
// to several instances, and sends every row (the usual plan's
// match_players: each row goes by its match token to a shard, for q2),
// the Source routes each record as it reads it, by the key's field (the
// bytes the exchange routes a text key by), into a batch per receiving
// instance, and Flush gives the exchange each as rows all for that
// instance: a row's key is hashed once, and its values are not copied
// again from a batch of every instance's rows into each instance's
// message.
type Source struct {
	t       *Task
	scan    *instance // the table's scan in t
	sc      *scan     // its operator
	table   string
	width   int
	streams *streams
	outputs []stage.Edge
	out     stage.Emitter
	wire    wire.Writer // writes the batches out takes as bytes
	// x, when not nil, is the one exchange the rows are routed for as
	// they are read, by field key (of a standing plan too: et's
	// exchange, ScannedTo, is the same channel's).
	x   *instance
	key int
	// et, of a standing plan, is what the scan's rows go through: its
	// exchanges write them as changes of weight +1, tagged with the
	// table's open epoch, and EndEpoch's markers (the batch Task t then
	// only reads the records into the scan's columns).
	et *EpochTask
	// epochs are the epochs EndEpoch has ended.
	epochs int64
}

// sourceBatchRows and sourceBatchBytes are the most rows, and about the
// most text, a Source applies as one batch: what it routes to one
// receiver stays well within a message, and is about an exchange's
// chunk (exec.BatchRows) when two shards share it, not half of one (each message costs its encoding, commit, journal entry and
// lookups on both sides): 16384 rows, measured against 4096 and 8192.
const (
	sourceBatchRows  = 2 * exec.BatchRows
	sourceBatchBytes = 1 << 20
)

// NewSource returns the Source of the named table of p at its gateway,
// whose file's header row is header. A plan that does not scan the table
// has a Source that routes nothing.
func NewSource(p *physical.Plan, table string, header []string) (*Source, error) {
	s, err := planStreams(p)
	if err != nil {
		return nil, err
	}
	src := &Source{table: table, width: len(header), streams: s}
	keep := func(o *physical.Op) bool {
		if o.Kind == plan.Scan {
			return o.Node.Table == table
		}
		return p.Source(o) && p.Ops[o.Inputs[0].Op].Node.Table == table
	}
	var ops []*physical.Op
	for _, o := range p.Ops {
		if o.Task == p.Gateway.Name && keep(o) {
			ops = append(ops, o)
		}
	}
	if src.outputs, err = edges(p, s, ops); err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return src, nil
	}
	send := func(ch *physical.Channel, to int, rows *Rows) error {
		return emitOn(src.out, s, ch, to, rows, &src.wire)
	}
	if src.t, err = newTask(p, p.Gateway.Name, 0, map[string][]string{table: slices.Clone(header)}, nil, send, keep, DefaultBudget); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	if src.scan, err = src.t.scan(table); err != nil {
		return nil, err
	}
	src.sc = src.scan.op.(*scan)
	if p.Standing {
		src.et, err = NewEpochTask(EpochConfig{
			Plan: p, Task: p.Gateway.Name, Columns: map[string][]string{table: slices.Clone(header)}, Keep: keep, Budget: DefaultBudget,
			Out: epochOut(func() stage.Emitter { return src.out }, s, &src.wire),
		})
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", table, err)
		}
	}
	src.x, src.key = routedBy(src.t, src.scan)
	return src, nil
}

// RouteOf is how the gateway's records of table (whose header is header)
// part by the instance their rows go to, when a Source would route each
// as it reads it (routedBy): the key's field, hashed as the exchange
// routes it. A CSVReader parted so (exec.NewCSVReaderParted), its
// batches given to Task.TableTo, saves the exchange a copy of each row
// into its receiver's batch. The zero PartBy (nothing parted) when the
// rows are not routed so.
func RouteOf(p *physical.Plan, table string, header []string) (exec.PartBy, error) {
	src, err := NewSource(p, table, header)
	if err != nil || src.x == nil {
		return exec.PartBy{}, err
	}
	key, n := src.key, src.x.x.to
	return exec.PartBy{Parts: n, Of: func(fields [][]byte) int { return stage.Route(fields[key], n) }}, nil
}

// Outputs are the streams the Source writes: the routes of its table's
// channels, to their tasks.
func (s *Source) Outputs() []stage.Edge { return s.outputs }

// Width is the number of fields a record of the table has.
func (s *Source) Width() int { return s.width }

// Row reads a record's fields (Width of them) into the rows held until
// the next Flush; the caller flushes when Full.
func (s *Source) Row(fields [][]byte) {
	switch {
	case s.x != nil:
		s.sc.rowTo(stage.Route(fields[s.key], s.x.x.to), fields)
	case s.t != nil:
		s.sc.row(fields)
	}
}

// Full reports whether the rows held are a batch's worth: the caller
// flushes them (with the Emitter it commits).
func (s *Source) Full() bool {
	return s.t != nil && (s.sc.rows >= sourceBatchRows || s.sc.bytes >= sourceBatchBytes)
}

// Flush applies the rows held to the scan's chain, and routes them into
// out.
func (s *Source) Flush(out stage.Emitter) error {
	if s.t == nil || s.sc.rows == 0 {
		return nil
	}
	s.out = out
	if s.et != nil && s.x == nil {
		return s.et.Scanned(s.table, s.sc.take(0))
	}
	if s.et != nil {
		return s.sc.flush(func(to int, b *exec.Batch) error { return s.et.ScannedTo(s.table, to, b) })
	}
	s.t.step() // one flush is one batch: what it sends is held to the step budget alone
	if s.x == nil {
		return s.t.flushScan(s.scan)
	}
	return s.sc.flush(func(to int, b *exec.Batch) error {
		if err := s.x.x.ApplyTo(to, b); err != nil {
			return fmt.Errorf("operator #%d (%s): %w", s.x.o.ID, s.x.o.Kind, err)
		}
		return nil
	})
}

// End flushes the rows held and ends the table: every channel route its
// exchanges write ends (out.End).
func (s *Source) End(out stage.Emitter) error {
	if err := s.Flush(out); err != nil {
		return err
	}
	if s.t == nil {
		return nil
	}
	s.out = out
	if s.et != nil {
		return s.et.EndTable(s.table)
	}
	return s.t.EndTable(s.table)
}

// EndEpoch, of a standing plan's Source, flushes the rows held and ends
// the table's open epoch: the epoch's marker goes on every channel
// route its exchanges write, to every receiving instance, after the
// epoch's rows. The gateway calls it for every table of the job at the
// end of each epoch (a table with no rows in it too), in the commit of
// the epoch's last rows; epochs are numbered 1, 2, ... in that order.
func (s *Source) EndEpoch(out stage.Emitter) error {
	if err := s.Flush(out); err != nil {
		return err
	}
	s.epochs++
	if s.t == nil {
		return nil // the plan reads nothing of the table
	}
	if s.et == nil {
		return fmt.Errorf("table %s: the end of an epoch of a job that is not a standing one", s.table)
	}
	s.out = out
	return s.et.EndTableEpoch(s.table)
}

// Epochs is the number of epochs EndEpoch has ended (those it was told
// of by ResumeEpochs included).
func (s *Source) Epochs() int64 { return s.epochs }

// ResumeEpochs tells a standing plan's Source just made that epochs
// 1..n have ended (a restarted gateway's upload, whose commits recorded
// them): the rows it is given next are epoch n+1's.
func (s *Source) ResumeEpochs(n int64) error {
	if s.epochs != 0 {
		return fmt.Errorf("table %s: resumed at epoch %d after %d epochs", s.table, n, s.epochs)
	}
	s.epochs = n
	if s.et == nil {
		return nil
	}
	return s.et.ResumeAt(n)
}

// Stats are the scan's counts of the values that read as NULL, by
// column name, since the Source was made.
func (s *Source) Stats() map[string]int64 {
	out := map[string]int64{}
	if s.t == nil {
		return out
	}
	for _, st := range s.t.Stats() {
		if n := st.Missing + st.Invalid; n > 0 {
			out[strings.TrimPrefix(st.Column, s.table+".")] += n
		}
	}
	return out
}
