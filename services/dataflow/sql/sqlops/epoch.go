package sqlops

import (
	"fmt"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// EpochTask is one instance of one task of a standing plan
// (physical.Plan.Standing, docs/standing.md): the Task's counterpart
// that keeps its queries' answers over epochs of appended rows, each
// operator in its incremental form (incr.Op). What flows is changes:
// a table's rows come with weight +1; on a channel every row carries one
// more column, its weight (+n, -n), and is tagged with the epoch it is a
// change of; after an epoch's rows, each sending instance sends an epoch
// marker on every channel, to every receiving instance.
//
// The operators with no state (scans, filters, projections, exchanges)
// pass each batch on as it comes, tagged with its epoch. An operator with
// state steps an epoch (incr.Op.Step) once the epoch's marker has come on
// every input from every sender, and passes its changes on. Until then,
// one over rows that only arrive (an aggregate, a join, a semi-join, a
// DISTINCT: incr.Op.Folds) folds the changes of its next epoch in as they
// come (incr.Op.Fold; epochfold.go), and holds only those of later epochs;
// the others hold every epoch's changes until its step. An exchange
// writes the changes it is given on its channel (with their weights),
// then the marker, to every receiving instance. At a sink, each epoch is a version of the query's answer:
// its whole CSV, byte for byte a batch job's NAME.csv over the rows of
// the epochs so far, and its change from the version before
// (incr.Diff.Result's CSV), handed to EpochOut.Version.
//
// The end of every input (EOFs) finishes it as a Task finishes: an
// operator that holds rows of an epoch no marker closed steps them (a
// last epoch, with no version), and each sink hands on its final answer
// (Version.Final), which is what a batch job over every row writes.
// AppendSnapshot and Restore write and read its whole state at any
// point, mid-epoch included. It is not safe for concurrent use.
type EpochTask struct {
	p     *physical.Plan
	name  string
	index int
	out   EpochOut
	units []*unit // in the plan's order
	byOp  map[int]*unit
	chans map[string]*physical.Channel // the channels as they travel: with the weight column
	meter *meter
	// tables are the key tables of the plan's Tables entries here, by
	// ID, that the keyed operators of each share (incr.NewOpIn); keyed,
	// per channel into the task, its routes whose consumers fold their
	// batches keyed by a column of the channel in one of them (keyGroups):
	// a batch's keys are looked up once for all of them.
	tables []sharedTable
	keyed  map[string][]keyGroup
	// ones are the weights of the scanned rows, +1 (plusOnes).
	ones []value.Dec
}

// sharedTable is the key table of a Plan.Tables entry on the task.
type sharedTable struct {
	id int
	t  *exec.KeyTable
}

// keyTable is the shared key table of Plan.Tables entry id, made when new.
func (t *EpochTask) keyTable(id int) *exec.KeyTable {
	for _, s := range t.tables {
		if s.id == id {
			return s.t
		}
	}
	s := sharedTable{id: id, t: exec.NewKeyTable()}
	t.tables = append(t.tables, s)
	slices.SortFunc(t.tables, func(a, b sharedTable) int { return a.id - b.id })
	return s.t
}

// EpochOut is where an epoch task's outputs go.
type EpochOut struct {
	// Send takes what an exchange writes: the rows of an epoch's changes
	// for receiving instance to, as the channel's columns and a last
	// column, the weight (the channel is given as it travels, that
	// column included), or, rows nil, the end of the channel from this
	// instance (epoch 0), once per receiving instance.
	Send func(ch *physical.Channel, to int, epoch int64, rows *Rows) error
	// Marker sends the end of epoch on channel ch to receiving instance
	// to, after the epoch's rows.
	Marker func(ch *physical.Channel, to int, epoch int64) error
	// Version takes each version of a query's answer, at its sink.
	Version func(v Version) error
}

// Version is a version of a query's answer: at the end of an epoch, or,
// Final, at the end of the input.
type Version struct {
	Query string
	// Epoch is the epoch it is the answer after (1, 2, ...); for Final,
	// the epochs the sink had stepped.
	Epoch int64
	// CSV is the whole answer over the rows of epochs 1..Epoch, byte for
	// byte a batch job's NAME.csv over them.
	CSV []byte
	// Change is the change from version Epoch-1 (incr.Diff.Result's CSV:
	// the columns, then diff, +n or -n); nil for Final.
	Change []byte
	// Final: every input has ended; CSV is the query's result.
	Final bool
}

// Records are the job records a version is published as, in the commit
// of the step that made it (stage.Emitter.Record): version/<k>/NAME.csv
// (its CSV) and change/<k>/NAME.csv (its change), k its epoch in
// decimal; a Final one, the query's result (schema.ResultRecord), as a
// batch job's.
func (v Version) Records() map[string][]byte {
	if v.Final {
		return map[string][]byte{schema.ResultRecord(v.Query + ".csv"): v.CSV}
	}
	k := strconv.FormatInt(v.Epoch, 10)
	return map[string][]byte{
		"version/" + k + "/" + v.Query + ".csv": v.CSV,
		"change/" + k + "/" + v.Query + ".csv":  v.Change,
	}
}

// EpochConfig is what an EpochTask runs: instance Index of the task
// named Task of the standing plan Plan.
type EpochConfig struct {
	Plan  *physical.Plan
	Task  string
	Index int
	// Columns are the header of each table the task scans.
	Columns map[string][]string
	Out     EpochOut
	// Keep, when not nil, keeps of the task's operators those it says
	// (a part of it that no other operator reads from: a gateway's
	// Source operators, or all but them, as the Task's).
	Keep func(*physical.Op) bool
	// Budget holds the job here (its zero fields at their defaults): the
	// state the operators keep and the epochs' rows they hold
	// (StateBytes), what one batch, marker or end makes it send
	// (StepBytes).
	Budget Budget
}

// unit is one incremental operator of the task (unitPlan) and its
// inputs' epochs not yet stepped.
type unit struct {
	*unitPlan
	op    *incr.Op  // nil: an exchange
	x     *Exchange // an exchange's, of its channel as it travels
	ins   []*epochInput
	epoch int64 // epochs stepped (an exchange's, streamed's: marked)
	done  bool
	outs  []target   // the units chained after it
	table []string   // a scan's table's header
	t     *EpochTask // for an exchange's sends
	// sending is the epoch of the changes an exchange is writing.
	sending int64
	// heldBytes is about the bytes of the changes its inputs hold for
	// epochs to come (batchBytes'), kept as they come and go.
	heldBytes int64
}

// target is an input of a unit.
type target struct {
	u *unit
	k int
}

// epochInput is one input of a unit: how many instances send on it, the
// changes and markers of each epoch not yet stepped, and which senders
// have ended it.
type epochInput struct {
	cols    []plan.Column // with the weight
	senders int
	pending []pendingEpoch // by epoch, those after the unit's
	ended   []bool
}

// pendingEpoch is an epoch's changes on an input, and the markers of it
// that came.
type pendingEpoch struct {
	epoch int64
	marks int
	rows  []*exec.Batch
}

// weightColumn is the column a standing plan's channels carry each row's
// weight in, last (incr's Diff calls it so).
var weightColumn = plan.Column{Name: "diff", Type: plan.Number}

// NewEpochTask returns the epoch task of c. A plan that CheckStanding
// refuses is refused.
func NewEpochTask(c EpochConfig) (*EpochTask, error) {
	p := c.Plan
	plans, err := standingUnits(p)
	if err != nil {
		return nil, err
	}
	t := &EpochTask{p: p, name: c.Task, index: c.Index, out: c.Out, byOp: map[int]*unit{}, chans: map[string]*physical.Channel{}, meter: newMeter(c.Budget, c.Task, c.Index)}
	for _, ch := range p.Channels {
		w, err := weighted(p, ch)
		if err != nil {
			return nil, err
		}
		t.chans[ch.Name] = w
	}
	for _, up := range plans {
		if up.top().Task != c.Task || c.Keep != nil && !c.Keep(up.top()) {
			continue
		}
		u, err := t.build(up, c.Columns)
		if err != nil {
			return nil, fmt.Errorf("task %s[%d]: operator #%d (%s): %w", c.Task, c.Index, up.top().ID, up.top().Kind, err)
		}
		t.units = append(t.units, u)
		for _, o := range up.ops {
			t.byOp[o.ID] = u
		}
	}
	for _, u := range t.units {
		for k, in := range u.bottom().Inputs {
			if in.Channel != "" {
				continue
			}
			if from := t.byOp[in.Op]; from != nil {
				from.outs = append(from.outs, target{u, k})
			}
		}
	}
	// A table no operator took (of a Plan.Tables entry of operators
	// that keep their own, a final aggregate's) is not the task's.
	t.tables = slices.DeleteFunc(t.tables, func(s sharedTable) bool {
		return !slices.ContainsFunc(t.units, func(u *unit) bool { return u.op != nil && u.op.Shares() == s.t })
	})
	t.keyed = t.keyGroups()
	return t, nil
}

// keyGroups finds, for each channel into the task, the routes whose
// consumers fold what they are given keyed by a column of the channel in
// a shared table, grouped by table and column.
func (t *EpochTask) keyGroups() map[string][]keyGroup {
	return keyGroupsOf(t.p, func(ch string, r int) (*exec.KeyTable, keyUse, bool) {
		to, err := t.consumer(ch, r)
		if err != nil || to.u.op == nil || to.u.op.Shares() == nil || !to.u.op.Folds(to.k) {
			return nil, keyUse{}, false
		}
		use, ok := to.u.op.KeyOf(to.k)
		return to.u.op.Shares(), keyUse{col: use.Col, mode: use.Mode, null: use.Null}, ok
	})
}

// weighted is channel ch as it travels in a standing plan: its columns
// and, last, each row's weight, the last column of its producer's
// changes.
func weighted(p *physical.Plan, ch *physical.Channel) (*physical.Channel, error) {
	if ch.Producer < 0 || ch.Producer >= len(p.Ops) || len(p.Ops[ch.Producer].Inputs) != 1 {
		return nil, fmt.Errorf("channel %s: no producer #%d", ch.Name, ch.Producer)
	}
	in, err := InputColumns(p, p.Ops[ch.Producer])
	if err != nil {
		return nil, err
	}
	w := *ch
	w.Exprs = append(slices.Clone(ch.Exprs), &plan.Expr{Kind: plan.ColRef, Col: len(in[0]), Type: plan.Number, Name: weightColumn.Name})
	w.Columns = append(slices.Clone(ch.Columns), weightColumn)
	return &w, nil
}

func (t *EpochTask) build(up *unitPlan, columns map[string][]string) (*unit, error) {
	u := &unitPlan{}
	*u = *up
	x := &unit{unitPlan: u, t: t}
	var keys *exec.KeyTable
	if id := up.bottom().Table; id != 0 {
		keys = t.keyTable(id)
	}
	op, err := newUnitOp(t.p, up, keys)
	if err != nil {
		return nil, err
	}
	x.op = op
	o := up.bottom()
	if o.Kind == plan.Scan {
		x.table = columns[o.Node.Table]
		if x.table == nil {
			return nil, fmt.Errorf("no header of table %q", o.Node.Table)
		}
		if _, err := exec.ScanIndex(o.Node, x.table); err != nil {
			return nil, err
		}
	}
	if up.kind == exchanging {
		ch := t.chans[o.Channel]
		if ch == nil {
			return nil, fmt.Errorf("no channel %q", o.Channel)
		}
		to, err := replicasOf(t.p, ch.To)
		if err != nil {
			return nil, err
		}
		if x.x, err = NewExchange(t.p, ch, to); err != nil {
			return nil, err
		}
		x.x.send = func(ch *physical.Channel, to int, rows *Rows) error {
			if rows != nil && rows.Len() > 0 {
				if err := t.meter.sent(rows.bytes(), "the channel "+ch.Name); err != nil {
					return err
				}
			}
			return t.out.Send(ch, to, x.sending, rows)
		}
	}
	cols, err := InputColumns(t.p, o)
	if err != nil {
		return nil, err
	}
	for k, in := range o.Inputs {
		senders := 1
		if in.Channel != "" {
			c := t.p.Channel(in.Channel)
			if c == nil {
				return nil, fmt.Errorf("no channel %q", in.Channel)
			}
			if senders, err = replicasOf(t.p, c.From); err != nil {
				return nil, err
			}
		}
		x.ins = append(x.ins, &epochInput{cols: append(slices.Clone(cols[k]), weightColumn), senders: senders, ended: make([]bool, senders)})
	}
	return x, nil
}

// Table applies a parsed batch of a table (its text columns, in its
// header's order) to the table's scan: rows of the table's open epoch
// (the one after its last EndTableEpoch), on through the chain.
func (t *EpochTask) Table(name string, b *exec.Batch) error {
	u, err := t.scan(name)
	if err != nil {
		return err
	}
	t.meter.step()
	return t.checked(t.table(u, b))
}

func (t *EpochTask) table(u *unit, b *exec.Batch) error {
	if u.done {
		return fmt.Errorf("table %s: rows after its end", u.bottom().Node.Table)
	}
	if err := u.op.AddScan(u.table, b); err != nil {
		return err
	}
	out, err := u.op.Step(nil)
	if err != nil {
		return err
	}
	return t.forward(u, u.epoch+1, out)
}

// Scanned applies rows of a table already read as its scan's columns
// (the scan's node's Output, as a Source's scan reads a record at a time)
// as Table applies a batch of its text: each with weight +1, rows of the
// table's open epoch, on through what the scan feeds. The values read as
// NULL are the reader's to count.
func (t *EpochTask) Scanned(name string, b *exec.Batch) error {
	return t.scanned(name, -1, b)
}

// scanned is Scanned, of rows that all go to receiving instance `to` of
// the exchange after the scan when it is not -1 (ScannedTo).
func (t *EpochTask) scanned(name string, to int, b *exec.Batch) error {
	u, err := t.scan(name)
	if err != nil {
		return err
	}
	if u.done {
		return fmt.Errorf("table %s: rows after its end", name)
	}
	if out := u.bottom().Node.Output; len(b.Cols) != len(out) {
		return fmt.Errorf("table %s: %d columns scanned, the scan reads %d", name, len(b.Cols), len(out))
	}
	t.meter.step()
	w := &exec.Batch{N: b.N, Cols: append(slices.Clone(b.Cols), t.plusOnes(b.N))}
	if to < 0 {
		return t.checked(t.forward(u, u.epoch+1, []*exec.Batch{w}))
	}
	if len(u.outs) != 1 || u.outs[0].u.x == nil || u.outs[0].u.done {
		return fmt.Errorf("table %s: rows for instance %d of a scan that does not feed one exchange alone", name, to)
	}
	return t.checked(t.send(u.outs[0].u, u.epoch+1, w, to))
}

// ScannedTo is Scanned of rows that all go to receiving instance `to`
// of the one exchange the table's scan feeds: a Source that routes its
// rows as it reads them (routedBy), each row's key hashed once, as a
// batch job's Source does, not again by the exchange.
func (t *EpochTask) ScannedTo(name string, to int, b *exec.Batch) error {
	return t.scanned(name, to, b)
}

// plusOnes is a weight column of n rows of weight +1: its numbers are
// the task's ones, shared by every scanned batch (no operator modifies a
// batch it is given), made anew only when a batch has more rows.
func (t *EpochTask) plusOnes(n int) *exec.Vec {
	if n > len(t.ones) {
		t.ones = make([]value.Dec, n)
		for i := range t.ones {
			t.ones[i] = value.Int(1)
		}
	}
	return &exec.Vec{Type: plan.Number, N: n, Nums: t.ones[:n:n]}
}

// EndTableEpoch ends the table's open epoch: its scan passes the
// epoch's marker on.
func (t *EpochTask) EndTableEpoch(name string) error {
	u, err := t.scan(name)
	if err != nil {
		return err
	}
	if u.done {
		return fmt.Errorf("table %s: an epoch after its end", name)
	}
	t.meter.step()
	u.epoch++
	return t.checked(t.passMarker(u, u.epoch))
}

// EndTable ends a table: its scan finishes, and ends what it feeds.
func (t *EpochTask) EndTable(name string) error {
	u, err := t.scan(name)
	if err != nil {
		return err
	}
	t.meter.step()
	return t.checked(t.finish(u))
}

func (t *EpochTask) scan(name string) (*unit, error) {
	for _, u := range t.units {
		if o := u.bottom(); o.Kind == plan.Scan && o.Node.Table == name {
			return u, nil
		}
	}
	return nil, fmt.Errorf("task %s[%d] scans no table %q", t.name, t.index, name)
}

// ReceiveEncoded applies a batch of channel ch as it travels: a batch
// of changes (a RowBatch's bytes, the channel's columns and the weight,
// after its epoch: EncodeEpochRows), handing each route's consumer the
// rows that are for it (the batch's routes) as the columns it reads and
// the weight; or a marker (EncodeEpochMarker: Marker). It returns the
// batch's rows.
func (t *EpochTask) ReceiveEncoded(ch string, encoded []byte) (int, error) {
	c := t.chans[ch]
	if c == nil {
		return 0, fmt.Errorf("task %s[%d]: no channel %q", t.name, t.index, ch)
	}
	epoch, rest, marker, err := DecodeEpoch(encoded)
	if err != nil {
		return 0, fmt.Errorf("channel %s: %w", ch, err)
	}
	if marker {
		return 0, t.Marker(ch, epoch)
	}
	b, masks, ok := wire.Read(rest, c.Columns)
	if !ok {
		rows := &wololov1.RowBatch{}
		if err := proto.Unmarshal(rest, rows); err != nil {
			return 0, fmt.Errorf("channel %s: %w: %v", ch, batch.ErrBadBatch, err)
		}
		if b, err = wire.FromRows(rows, c.Columns); err != nil {
			return 0, fmt.Errorf("channel %s: %w", ch, err)
		}
		masks = rows.GetColumns().GetRoutes()
	}
	t.meter.step()
	return b.N, t.checked(t.receive(c, epoch, b, masks))
}

// receive hands each route's consumer its rows of b.
func (t *EpochTask) receive(c *physical.Channel, epoch int64, b *exec.Batch, masks []uint64) error {
	switch {
	case len(masks) == 0 && len(c.Routes) != 1:
		return fmt.Errorf("channel %s: a batch that names no routes, of %d", c.Name, len(c.Routes))
	case len(masks) != 0 && len(masks) != b.N:
		return fmt.Errorf("channel %s: routes of %d rows in a batch of %d", c.Name, len(masks), b.N)
	}
	weight := len(c.Columns) - 1
	if err := checkWeights(b.Cols[weight], b.N); err != nil {
		return fmt.Errorf("channel %s: %w", c.Name, err)
	}
	slots := routeSlots(t.keyed[c.Name], len(c.Routes), b, masks)
	for r, rt := range c.Routes {
		to, err := t.consumer(c.Name, r)
		if err != nil {
			return err
		}
		cols := make([]*exec.Vec, 0, len(rt.Cols)+1)
		for _, col := range rt.Cols {
			cols = append(cols, b.Cols[col])
		}
		sub, sl, ok := routeBatch(&exec.Batch{N: b.N, Cols: append(cols, b.Cols[weight])}, slots[r], masks, r)
		if !ok {
			continue
		}
		if err := t.deliverSlots(to.u, to.k, epoch, sub, sl); err != nil {
			return err
		}
	}
	return nil
}

// checkWeights refuses a weight column that is not n whole numbers
// other than 0 (no NULL, no fraction, within an int64), which the
// operators would not know what to do with.
func checkWeights(v *exec.Vec, n int) error {
	for i := range n {
		if v.IsNull(i) {
			return fmt.Errorf("a row of no weight")
		}
		if w, scale, ok := v.Nums[i].Unscaled(); !ok || scale != 0 || w == 0 {
			return fmt.Errorf("a row of weight %s", v.Nums[i])
		}
	}
	return nil
}

// consumer is the unit route r of channel ch feeds here, and which of
// its inputs that is.
func (t *EpochTask) consumer(ch string, r int) (target, error) {
	c := t.p.Channel(ch)
	if c == nil || r < 0 || r >= len(c.Routes) {
		return target{}, fmt.Errorf("task %s[%d]: no route %d of channel %q", t.name, t.index, r, ch)
	}
	u := t.byOp[c.Routes[r].Consumer]
	if u == nil {
		return target{}, fmt.Errorf("task %s[%d]: channel %s's route %d is not read here", t.name, t.index, ch, r)
	}
	k := slices.Index(u.bottom().Inputs, physical.Input{Channel: ch, Route: r})
	if k < 0 {
		return target{}, fmt.Errorf("task %s[%d]: #%d does not read channel %s's route %d", t.name, t.index, u.bottom().ID, ch, r)
	}
	return target{u, k}, nil
}

// Marker notes the end of epoch on channel ch from one of its senders:
// every route's consumer hears it, and steps the epoch once it has it
// from every sender of every input.
func (t *EpochTask) Marker(ch string, epoch int64) error {
	return t.toConsumers(ch, func(to target) error { return t.mark(to.u, to.k, epoch) })
}

// End notes that sending instance sender has ended channel ch: a unit
// finishes once every sender has ended each of its inputs.
func (t *EpochTask) End(ch string, sender int) error {
	return t.toConsumers(ch, func(to target) error { return t.end(to.u, to.k, sender) })
}

// toConsumers calls f with the input of each route of channel ch, as one
// step of the task.
func (t *EpochTask) toConsumers(ch string, f func(target) error) error {
	c := t.p.Channel(ch)
	if c == nil {
		return fmt.Errorf("task %s[%d]: no channel %q", t.name, t.index, ch)
	}
	t.meter.step()
	for r := range c.Routes {
		to, err := t.consumer(ch, r)
		if err != nil {
			return err
		}
		if err := f(to); err != nil {
			return t.checked(err)
		}
	}
	return t.checked(nil)
}

// Done reports whether every operator of the task has finished.
func (t *EpochTask) Done() bool {
	for _, u := range t.units {
		if !u.done {
			return false
		}
	}
	return true
}

// Queries are the queries whose sinks are here.
func (t *EpochTask) Queries() []string {
	var out []string
	for _, u := range t.units {
		if u.kind == sinking {
			out = append(out, u.query)
		}
	}
	return out
}

// Answer is the final answer (NAME.csv) of a query whose sink is here
// and has finished.
func (t *EpochTask) Answer(query string) ([]byte, bool) {
	for _, u := range t.units {
		if u.kind == sinking && u.query == query && u.done {
			csv, err := answerCSV(u)
			return csv, err == nil
		}
	}
	return nil, false
}

// ResumeAt tells a task just made that its epochs 1..n have ended
// (each of its operators has stepped them, and sent their markers): a
// Source's, whose state is no more than that, resumed after a restart.
func (t *EpochTask) ResumeAt(n int64) error {
	for _, u := range t.units {
		if u.epoch != 0 || u.done || u.heldBytes != 0 {
			return fmt.Errorf("task %s[%d]: resumed at epoch %d after it ran", t.name, t.index, n)
		}
	}
	for _, u := range t.units {
		u.epoch = n
	}
	return nil
}

// deliver hands changes of epoch e to input k of unit u: through it at
// once when it has no state, else held until the epoch's step.
func (t *EpochTask) deliver(u *unit, k int, e int64, b *exec.Batch) error {
	return t.deliverSlots(u, k, e, b, nil)
}

// deliverSlots is deliver given slots, the slots of b's rows' keys in
// u's shared table (nil: none), which a fold takes and a hold lets go
// (the step looks them up again).
func (t *EpochTask) deliverSlots(u *unit, k int, e int64, b *exec.Batch, slots []int32) error {
	if u.done {
		return fmt.Errorf("operator #%d (%s): a batch after its end", u.top().ID, u.top().Kind)
	}
	if e <= u.epoch {
		return fmt.Errorf("operator #%d (%s): changes of epoch %d after it stepped it", u.top().ID, u.top().Kind, e)
	}
	if b.N == 0 {
		return nil
	}
	switch u.kind {
	case exchanging:
		return t.forward(u, e, []*exec.Batch{b})
	case streamed:
		out, err := u.op.Step([][]*exec.Batch{{b}})
		if err != nil {
			return fmt.Errorf("operator #%d (%s): %w", u.top().ID, u.top().Kind, err)
		}
		return t.forward(u, e, out)
	}
	if e == u.epoch+1 && u.op.Folds(k) {
		return t.fold(u, k, e, b, slots)
	}
	// Held as it is, not copied: a batch here is one the task read off
	// a channel (wire.Read's, which aliases nothing of the bytes it
	// read, or of a RowBatch it unmarshalled itself) or one an operator
	// of the task made of such, and no operator modifies a batch it is
	// given or has made.
	p := u.ins[k].at(e)
	p.rows = append(p.rows, b)
	u.heldBytes += int64(batchBytes(b))
	return nil
}

// at is the pending epoch e of the input, made when new.
func (in *epochInput) at(e int64) *pendingEpoch {
	i, found := slices.BinarySearchFunc(in.pending, e, func(p pendingEpoch, e int64) int { return cmpInt(p.epoch, e) })
	if !found {
		in.pending = slices.Insert(in.pending, i, pendingEpoch{epoch: e})
	}
	return &in.pending[i]
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// forward hands a unit's changes of epoch e on: an exchange's onto its
// channel, the rest to the units chained after it.
func (t *EpochTask) forward(u *unit, e int64, out []*exec.Batch) error {
	for _, b := range out {
		if b.N == 0 {
			continue
		}
		if u.x != nil {
			if err := t.send(u, e, b, -1); err != nil {
				return err
			}
			continue
		}
		for _, to := range u.outs {
			if err := t.deliver(to.u, to.k, e, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// send writes changes b of epoch e onto exchange u's channel: each row
// to the instance its key routes it to, or all to instance `to` when it
// is not -1.
func (t *EpochTask) send(u *unit, e int64, b *exec.Batch, to int) error {
	u.sending = e
	if err := u.x.route(b, to, u.x.sendRows); err != nil {
		return fmt.Errorf("operator #%d (%s): %w", u.top().ID, u.top().Kind, err)
	}
	return t.meter.err()
}

// mark notes a marker of epoch e on input k of u, and steps what it
// completes.
func (t *EpochTask) mark(u *unit, k int, e int64) error {
	if u.done {
		return fmt.Errorf("operator #%d (%s): an epoch's end after its end", u.top().ID, u.top().Kind)
	}
	if e <= u.epoch {
		return fmt.Errorf("operator #%d (%s): the end of epoch %d after it stepped it", u.top().ID, u.top().Kind, e)
	}
	in := u.ins[k]
	p := in.at(e)
	if p.marks++; p.marks > in.senders {
		return fmt.Errorf("operator #%d (%s): %d ends of epoch %d on an input of %d senders", u.top().ID, u.top().Kind, p.marks, e, in.senders)
	}
	for t.ready(u) {
		if err := t.stepEpoch(u, true); err != nil {
			return err
		}
	}
	return nil
}

// ready reports whether every input of u has the marker of its next
// epoch from every sender.
func (t *EpochTask) ready(u *unit) bool {
	next := u.epoch + 1
	for _, in := range u.ins {
		if len(in.pending) == 0 || in.pending[0].epoch != next || in.pending[0].marks < in.senders {
			return false
		}
	}
	return len(u.ins) > 0
}

// stepEpoch steps u's next epoch over its inputs' changes of it, hands
// its changes on, and, marked (the epoch's markers came), the marker
// after them, or at a sink the version.
func (t *EpochTask) stepEpoch(u *unit, marked bool) error {
	e := u.epoch + 1
	var in [][]*exec.Batch
	for _, x := range u.ins {
		var rows []*exec.Batch
		if len(x.pending) > 0 && x.pending[0].epoch == e {
			rows = x.pending[0].rows
			x.pending = x.pending[1:]
			for _, b := range rows {
				u.heldBytes -= int64(batchBytes(b))
			}
		}
		in = append(in, rows)
	}
	u.epoch = e
	if u.kind == exchanging || u.kind == streamed {
		if marked {
			return t.passMarker(u, e)
		}
		return nil
	}
	out, err := u.op.Step(in)
	if err != nil {
		return fmt.Errorf("operator #%d (%s): epoch %d: %w", u.top().ID, u.top().Kind, e, err)
	}
	if u.kind == sinking {
		if !marked {
			return nil
		}
		return t.version(u, e, out)
	}
	if err := t.forward(u, e, out); err != nil {
		return err
	}
	if marked {
		if err := t.passMarker(u, e); err != nil {
			return err
		}
	}
	return t.foldNext(u)
}

// version hands on the version of u's query after epoch e, whose change
// is out.
func (t *EpochTask) version(u *unit, e int64, out []*exec.Batch) error {
	csv, err := answerCSV(u)
	if err != nil {
		return err
	}
	change := u.op.Diff(e, out).Result().CSV()
	if t.out.Version == nil {
		return nil
	}
	return t.out.Version(Version{Query: u.query, Epoch: e, CSV: csv, Change: change})
}

// answerCSV is a sink's answer as its NAME.csv.
func answerCSV(u *unit) ([]byte, error) {
	csv, err := u.op.AnswerCSV()
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", u.query, err)
	}
	return csv, nil
}

// passMarker hands the marker of epoch e on: an exchange's to every
// receiving instance of its channel, the rest to the units chained
// after it.
func (t *EpochTask) passMarker(u *unit, e int64) error {
	if u.x != nil {
		for to := range u.x.to {
			if err := t.out.Marker(u.x.ch, to, e); err != nil {
				return err
			}
		}
		return nil
	}
	for _, to := range u.outs {
		if err := t.mark(to.u, to.k, e); err != nil {
			return err
		}
	}
	return nil
}

// end notes the end of input k of u from sender; once every sender has
// ended every input, u finishes.
func (t *EpochTask) end(u *unit, k, sender int) error {
	if u.done {
		return nil
	}
	in := u.ins[k]
	if sender < 0 || sender >= len(in.ended) {
		return fmt.Errorf("operator #%d (%s): an end from sender %d of %d", u.top().ID, u.top().Kind, sender, len(in.ended))
	}
	in.ended[sender] = true
	for _, x := range u.ins {
		if slices.Contains(x.ended, false) {
			return nil
		}
	}
	return t.finish(u)
}

// finish steps the epochs u holds changes of that no marker closed (and
// a first one, when it has stepped none: a query over no rows has an
// answer too), in order, skipping those of no changes (an epoch a
// corrupt batch said is far ahead costs its changes, not the epochs
// between), then ends its outputs: an exchange's channel to every
// receiving instance, the units chained after it, or, at a sink, its
// final version.
func (t *EpochTask) finish(u *unit) error {
	if u.done {
		return nil
	}
	for u.kind == stepped || u.kind == sinking {
		// The next epoch it holds changes of (an epoch of none changes
		// nothing, and is not stepped), or, when it has stepped none, the
		// first.
		next := int64(-1)
		if u.op.Folding() {
			next = u.epoch + 1
		}
		for _, in := range u.ins {
			if len(in.pending) > 0 && (next < 0 || in.pending[0].epoch < next) {
				next = in.pending[0].epoch
			}
		}
		switch {
		case next < 0 && u.epoch > 0:
		case next < 0:
			next = 1
		}
		if next < 0 {
			break
		}
		u.epoch = next - 1
		if err := t.stepEpoch(u, false); err != nil {
			return err
		}
	}
	u.done = true
	switch {
	case u.x != nil:
		for to := range u.x.to {
			if err := t.out.Send(u.x.ch, to, 0, nil); err != nil {
				return err
			}
		}
	case u.kind == sinking:
		csv, err := answerCSV(u)
		if err != nil {
			return err
		}
		if t.out.Version != nil {
			return t.out.Version(Version{Query: u.query, Epoch: u.epoch, CSV: csv, Final: true})
		}
	default:
		for _, to := range u.outs {
			if err := t.end(to.u, to.k, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// checked is err, or, without one, the error of a job past its budget:
// what the task's operators keep and the epochs' changes they hold
// (Budget.StateBytes), or what it sent (Budget.StepBytes).
func (t *EpochTask) checked(err error) error {
	return t.meter.checked(err, t.name, func() (int64, *physical.Op) {
		n, top := t.stateBytes()
		if top == nil {
			return n, nil
		}
		return n, top.top()
	})
}

// stateBytes is about the bytes the task's operators keep and the
// changes they hold, and the unit that has the most of them.
func (t *EpochTask) stateBytes() (int64, *unit) {
	var n, most int64
	var top *unit
	for _, s := range t.tables {
		n += s.t.Bytes()
	}
	for _, u := range t.units {
		b := u.heldBytes
		if u.op != nil {
			b += u.op.Bytes()
		}
		if n += b; top == nil || b > most {
			top, most = u, b
		}
	}
	return n, top
}

// SnapshotSize is about the size of the task's snapshot, and an eighth
// more: its key tables' keys, the changes its units hold and their
// operators' state as they write it (incr.Op.SnapshotSize), less than
// the memory they take (stateBytes), which a snapshot of a full-scale
// standing job made room for (at twice the bytes it wrote).
func (t *EpochTask) SnapshotSize() int {
	var n int64
	for _, s := range t.tables {
		n += int64(s.t.StateSize())
	}
	for _, u := range t.units {
		n += u.heldBytes
		if u.op != nil {
			n += u.op.SnapshotSize()
		}
	}
	return int(n + n/8)
}

// Stats are the task's scans' counts of the values that read as NULL.
func (t *EpochTask) Stats() []exec.ColumnStats {
	var out []exec.ColumnStats
	for _, u := range t.units {
		if u.bottom().Kind == plan.Scan {
			out = append(out, u.op.ScanStats()...)
		}
	}
	return out
}

// Usage is what the job spent here of its Budget, as log key-values.
func (t *EpochTask) Usage() []any { return t.meter.usage() }
