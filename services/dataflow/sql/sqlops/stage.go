package sqlops

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
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

// ChannelStream is the transport's stream of the channel at index i of
// a plan's Channels, named ch: "c", i and '-' (which make it unique within
// the job: no "c<i>-" is a prefix of another), then as much of the
// channel's name as fits in MaxStreamLen bytes, its bytes other than
// letters, digits, '_', '-' and '+' written as '_' (a stream is part of
// store keys and logs). A channel's name is made of query names and key
// expressions, of any length (a GROUP BY of a long CASE): the stream's is
// bounded, well within transport.MaxNameLen, whatever the query, and reads
// as the channel's beginning where it is shown (logs, `wololo top`, the
// dashboard); the whole name is the plan's (explain), listed there at the
// same index.
//
// Streams were named by the channel's name alone before (issue 38): a job
// of queries running across the upgrade holds its outboxes, watermarks
// and journal under the old names, which the upgraded processes do not
// take, and fails (its receivers refuse the old streams, a final
// refusal), to be submitted again; see the package doc.
func ChannelStream(i int, ch string) string {
	b := make([]byte, 0, MaxStreamLen)
	b = append(b, 'c')
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, '-')
	for j := 0; j < len(ch) && len(b) < MaxStreamLen; j++ {
		c := ch[j]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '+' {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

// MaxStreamLen is the most bytes of a channel's stream name
// (ChannelStream), but for a channel index of more than 35 digits.
const MaxStreamLen = 40

// MetricStreams is what the streams of p's channels are called in
// metrics: "ch" and the channel's index in p.Channels ("ch3"), by stream.
// A channel's stream is named after the channel (ChannelStream), whose
// name is made of the job's query names and key expressions (a query
// "payroll" grouped by "ssn" sends on a stream named after both), which
// are the tenant's and must not be shown to whoever reads /metrics; the
// number means something only beside the plan, which the job's client
// and the operator can see (explain, the dashboard).
func MetricStreams(p *physical.Plan) map[string]string {
	out := make(map[string]string, len(p.Channels))
	for i, c := range p.Channels {
		out[ChannelStream(i, c.Name)] = "ch" + strconv.Itoa(i)
	}
	return out
}

// channelOf is a channel, and how many instances send on it.
type channelOf struct {
	ch      string
	senders int
}

// streams names every channel of p (ChannelStream), both ways. No two
// channels share a stream (each is numbered); a plan where they would (two
// channels of one name) is refused all the same.
type streams struct {
	byStream  map[string]channelOf
	byChannel map[string]string
}

func planStreams(p *physical.Plan) (*streams, error) {
	s := &streams{byStream: map[string]channelOf{}, byChannel: map[string]string{}}
	for i, c := range p.Channels {
		n, err := replicasOf(p, c.From)
		if err != nil {
			return nil, fmt.Errorf("channel %s: %w", c.Name, err)
		}
		name := ChannelStream(i, c.Name)
		if prev, ok := s.byStream[name]; ok {
			return nil, fmt.Errorf("channels %s and %s are both stream %s", prev.ch, c.Name, name)
		}
		if _, ok := s.byChannel[c.Name]; ok {
			return nil, fmt.Errorf("two channels named %s", c.Name)
		}
		s.byStream[name] = channelOf{ch: c.Name, senders: n}
		s.byChannel[c.Name] = name
	}
	return s, nil
}

func replicasOf(p *physical.Plan, task string) (int, error) {
	switch task {
	case p.Gateway.Name:
		return p.Gateway.Replicas, nil
	case p.Shard.Name:
		return p.Shard.Replicas, nil
	}
	return 0, fmt.Errorf("no task %q", task)
}

// edges are the streams of the channels that ops write, each to the
// task the channel goes to.
func edges(p *physical.Plan, s *streams, ops []*physical.Op) ([]stage.Edge, error) {
	var out []stage.Edge
	for _, o := range ops {
		if o.Kind != physical.Exchange {
			continue
		}
		c := p.Channel(o.Channel)
		if c == nil {
			return nil, fmt.Errorf("#%d writes channel %q, which is not there", o.ID, o.Channel)
		}
		n, err := replicasOf(p, c.To)
		if err != nil {
			return nil, err
		}
		out = append(out, stage.Edge{Stream: s.byChannel[c.Name], Stage: c.To, Replicas: n})
	}
	return out, nil
}

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

// StageSpec is what an instance of task runs for a job of plan p: every
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

// inputsOf are the channels into task, in the plan's order: the inputs
// of its stage.Operator, by index.
func inputsOf(p *physical.Plan, s *streams, task string) []channelOf {
	var out []channelOf
	for _, c := range p.Channels {
		if c.To == task {
			out = append(out, s.byStream[s.byChannel[c.Name]])
		}
	}
	return out
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
	name, ok := s.byChannel[ch.Name]
	if !ok {
		return fmt.Errorf("no channel %q in the job's plan", ch.Name)
	}
	if rows == nil {
		out.End(name)
		return nil
	}
	out.Encoded(name, to, w.Append(nil, rows.b, rows.s, rows.routes), rows.Len())
	return nil
}

func (o *stageOp) input(k int) (channelOf, error) {
	if k < 0 || k >= len(o.inputs) {
		return channelOf{}, fmt.Errorf("no input %d in the job's plan, of %d", k, len(o.inputs))
	}
	return o.inputs[k], nil
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
	for sender := range c.senders {
		if err := o.t.End(c.ch, sender); err != nil {
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

// failed is an operator that could not be made: it refuses everything.
type failed struct{ err error }

func (f failed) Apply(int, []byte, stage.Emitter) (int, error) { return 0, f.err }
func (f failed) Finish(stage.Emitter) error                    { return f.err }

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
	// they are read, by field key.
	x   *instance
	key int
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
	src.x, src.key = routedBy(src.t, src.scan)
	return src, nil
}

// routedBy returns the exchange of t that a Source routes its rows for
// as it reads them, and the field of the table that is its key: when it
// is the one exchange, it reads the scan sc, sends to several instances
// every row (a route of the channel has no condition: where every route
// has one, the exchange routes only the rows some condition keeps, often
// few), and is keyed by one column of the scan's read as text (whose
// value is the field, never NULL: the bytes the exchange routes it by).
// Else nil.
func routedBy(t *Task, sc *instance) (*instance, int) {
	var x *instance
	for _, in := range t.order {
		if in.x != nil {
			if x != nil {
				return nil, 0
			}
			x = in
		}
	}
	if x == nil || x.o.Inputs[0].Op != sc.o.ID || x.x.to <= 1 || len(x.x.ch.Key) != 1 {
		return nil, 0
	}
	if !slices.ContainsFunc(x.x.ch.Routes, func(r physical.Route) bool { return r.Cond == nil }) {
		return nil, 0
	}
	s := sc.op.(*scan)
	e := x.x.ch.Exprs[x.x.ch.Key[0]]
	if e.Kind != plan.ColRef || e.Col < 0 || e.Col >= len(s.idx) || s.n.Output[e.Col].Type != plan.Text {
		return nil, 0
	}
	return x, s.idx[e.Col]
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
	return s.t.EndTable(s.table)
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
