package sqlops

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/spill"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// Task is one instance of one task of a physical plan: the plan's
// operators of that task, chained as the plan chains them, the ends of
// each one's inputs counted as the stage runtime counts them
// (stage.Ends). It is what a process runs for a job: the gateway's
// instance is given each parsed batch of each table (Table, then
// EndTable), every instance the batches and the ends that arrive on the
// channels it reads (Receive, End); it applies each at once through its
// chain (the scan, the filters and projections, the exchanges that route
// rows onto channels at the gateway; the keyed operators at the shards;
// the final aggregate, sort, limit, row number and sink at the gateway)
// and hands what its exchanges write to Sender. It is not safe for
// concurrent use.
type Task struct {
	p     *physical.Plan
	name  string
	index int
	send  Sender
	ops   map[int]*instance // the task's operators, by ID
	order []*instance       // in the plan's order
	// restart, when not nil, is asked before each arrival of an operator
	// with state whether to restart it from its snapshot first (tests).
	restart func(op, instance int) bool
	// err is the first error of an operator chained after the one being
	// applied (an Out has no error to return).
	err error
	// meter counts the job here against its Budget; its HeldBytes, when
	// above 0, is the most bytes each operator that holds rows until its
	// inputs end may hold (the gateway's in the deployment: StageSpec),
	// past which the job's answer is too large (Overflowed).
	meter *meter
	// keyed are, per channel into the task, its routes whose consumers
	// are keyed by a column of the channel in a shared table, by table
	// and column (keyGroups).
	keyed map[string][]keyGroup
	// tables are the key tables of the task's operators, each once.
	tables []*exec.KeyTable
}

// instance is one operator on a task instance.
type instance struct {
	o  *physical.Op
	op Operator
	// out hands what the operator emits on through the chain.
	out  Out
	ends *stage.Ends
	x    *Exchange
	// cols are the columns of each input; table, a scan's table's.
	cols  [][]plan.Column
	table []string
	// shared is the table of the operator's Plan.Tables entry; keys, the
	// table it keys in (shared, or one of its own), for its size.
	shared, keys *exec.KeyTable
	done         bool // finished, its outputs ended
	// busy counts the calls into the operator under way (call: Apply,
	// applySlots, EndInput, Finish): a spill between two chunks an
	// operator emits (meter.between) leaves it, and every operator that
	// called it, alone.
	busy int
}

// NewTask returns instance index of the named task of p. columns are the
// header of each table the task scans; shared returns the key table of a
// Plan.Tables entry for this instance (nil: one per operator).
//
// The job may make the instance hold and make what DefaultBudget allows.
func NewTask(p *physical.Plan, name string, index int, columns map[string][]string, shared func(id int) *exec.KeyTable, send Sender) (*Task, error) {
	return newTask(p, name, index, columns, shared, send, func(*physical.Op) bool { return true }, DefaultBudget)
}

// newTask is NewTask of the task's operators keep keeps only: a part of
// the task that no other operator of it reads from (the gateway's Source
// operators, or all but them), the job held to budget b (its zero
// fields at their defaults; see Task.meter).
func newTask(p *physical.Plan, name string, index int, columns map[string][]string, shared func(id int) *exec.KeyTable, send Sender, keep func(*physical.Op) bool, b Budget) (*Task, error) {
	t := &Task{p: p, name: name, index: index, ops: map[int]*instance{}, meter: newMeter(b, name, index)}
	t.meter.between = t.spillPast
	if b.SpillDir != "" {
		t.meter.space = spill.NewSpace(b.SpillDir, name+"-"+strconv.Itoa(index), t.meter.b.SpillBytes)
	}
	t.send = func(ch *physical.Channel, to int, rows *Rows) error {
		if rows != nil && rows.Len() > 0 {
			if err := t.meter.sent(rows.bytes(), "the channel "+ch.Name); err != nil {
				return err
			}
		}
		return send(ch, to, rows)
	}
	for _, o := range p.Ops {
		if o.Task != name || !keep(o) {
			continue
		}
		in, err := t.build(o, columns, shared)
		if err != nil {
			return nil, fmt.Errorf("task %s[%d]: operator #%d (%s): %w", name, index, o.ID, o.Kind, err)
		}
		t.ops[o.ID] = in
		t.order = append(t.order, in)
		if in.keys != nil && !slices.Contains(t.tables, in.keys) {
			t.tables = append(t.tables, in.keys)
		}
	}
	t.keyed = t.keyGroups()
	return t, nil
}

// keyGroups finds, for each channel into the task, the routes whose
// consumers are slotted operators keyed by a column of the channel in a
// shared table, grouped by table and column.
func (t *Task) keyGroups() map[string][]keyGroup {
	return keyGroupsOf(t.p, func(ch string, r int) (*exec.KeyTable, keyUse, bool) {
		in, k, err := t.consumer(ch, r)
		if err != nil || in.shared == nil {
			return nil, keyUse{}, false
		}
		s, ok := in.op.(slotted)
		if !ok {
			return nil, keyUse{}, false
		}
		use, ok := s.keyOf(k)
		if p, spills := in.op.(partsOuter); spills {
			use.out = p.partsOut
		}
		return in.shared, use, ok
	})
}

func (t *Task) replicas(task string) (int, error) { return replicasOf(t.p, task) }

func (t *Task) build(o *physical.Op, columns map[string][]string, shared func(int) *exec.KeyTable) (*instance, error) {
	senders := make([]int, len(o.Inputs))
	for k, in := range o.Inputs {
		n := 1
		if in.Channel != "" {
			ch := t.p.Channel(in.Channel)
			if ch == nil || ch.Producer < 0 || ch.Producer >= len(t.p.Ops) {
				return nil, fmt.Errorf("it reads channel %q, which is not there", in.Channel)
			}
			var err error
			if n, err = t.replicas(t.p.Ops[ch.Producer].Task); err != nil {
				return nil, err
			}
		} else if in.Op < 0 || in.Op >= len(t.p.Ops) || t.p.Ops[in.Op].Task != o.Task {
			return nil, fmt.Errorf("it reads #%d, not an operator of its task", in.Op)
		}
		senders[k] = n
	}
	cols, err := InputColumns(t.p, o)
	if err != nil {
		return nil, err
	}
	in := &instance{o: o, cols: cols, ends: stage.NewEnds(senders)}
	switch o.Kind {
	case physical.Exchange:
		if len(o.Inputs) != 1 {
			return nil, fmt.Errorf("an exchange with %d inputs", len(o.Inputs))
		}
		ch := t.p.Channel(o.Channel)
		if ch == nil {
			return nil, fmt.Errorf("it writes channel %q, which is not there", o.Channel)
		}
		to, err := t.replicas(ch.To)
		if err != nil {
			return nil, err
		}
		if in.x, err = NewExchange(t.p, ch, to); err != nil {
			return nil, err
		}
	case plan.Scan:
		c, ok := columns[o.Node.Table]
		if !ok {
			return nil, fmt.Errorf("no table %q", o.Node.Table)
		}
		in.table = c
		text := make([]plan.Column, len(c))
		for i, name := range c {
			text[i] = plan.Column{Name: name, Type: plan.Text}
		}
		in.cols = [][]plan.Column{text}
	default:
		if o.Table != 0 && shared != nil {
			in.shared = shared(o.Table)
		}
		if in.keys = in.shared; in.keys == nil {
			in.keys = exec.NewKeyTable()
		}
	}
	if in.op, err = t.newOp(in); err != nil {
		return nil, err
	}
	in.out = func(b *exec.Batch) {
		if err := t.emit(in, b); err != nil && t.err == nil {
			t.err = err
		}
	}
	return in, nil
}

func (t *Task) newOp(in *instance) (Operator, error) {
	if in.x != nil {
		in.x.send = t.send
		return in.x, nil
	}
	op, err := New(in.o, in.cols, in.table, in.keys)
	if err != nil {
		return nil, err
	}
	if l, ok := op.(heldLimiter); ok && t.meter.b.HeldBytes > 0 {
		l.limitHeld(t.meter.b.HeldBytes)
	}
	if b, ok := op.(*buffered); ok && in.o.Kind == plan.Sort {
		if n := topOf(t.p, in.o); n > 0 {
			b.keepTop(n)
		}
	}
	switch o := op.(type) {
	case *join:
		o.meter, o.where = t.meter, "the join #"+strconv.Itoa(in.o.ID)+" of "+strings.Join(in.o.Queries, ", ")
		o.setRead(readCols(t.p, in.o))
	case *filter:
		o.f.SetRead(readCols(t.p, in.o))
	case *aggregate:
		o.meter, o.where = t.meter, "the aggregate #"+strconv.Itoa(in.o.ID)+" of "+strings.Join(in.o.Queries, ", ")
		o.alone = in.shared == nil || tableAlone(t.p, in.o)
		o.finishIn(in.o.Node, havingOf(t.p, in.o), in.keys)
	}
	return op, nil
}

// holder is an operator whose state grows with its input: about the
// bytes it holds, besides the keys of its table.
type holder interface{ stateBytes() int64 }

// stateBytes is about the bytes of values the task's operators hold: the
// keys of their tables (each table once) and each one's own state. It
// also names the operator that holds the most of its own.
func (t *Task) stateBytes() (int64, *instance) {
	var n, most int64
	var top *instance
	for _, k := range t.tables {
		n += k.Bytes()
	}
	for _, in := range t.order {
		if s, ok := in.op.(holder); ok && !in.done {
			b := s.stateBytes()
			if n += b; top == nil || b > most {
				top, most = in, b
			}
		}
	}
	return n, top
}

// step starts the task's count of what one batch or end given to it
// makes it send (Budget.StepBytes).
func (t *Task) step() { t.meter.step() }

// checked is err, or, without one, the error of a job past its budget
// once the batch or end given to the task is applied: what its
// operators hold (Budget.StateBytes), or a bound an operator passed.
func (t *Task) checked(err error) error {
	if err == nil {
		err = t.spillPast()
	}
	err = t.meter.checked(err, t.name, func() (int64, *physical.Op) {
		n, top := t.stateBytes()
		if top == nil {
			return n, nil
		}
		return n, top.o
	})
	if t.meter.space != nil && (errors.Is(err, stage.ErrFailsJob) || t.Done()) {
		// The job fails here, or the task is over: its spill files are
		// no longer read.
		err = errors.Join(err, t.meter.space.Close())
	}
	return err
}

// spillPast moves state of the task's operators to disk while what they
// hold is past the budget, or the job's share of the process's memory
// (meter.spillAt; the operator that holds the most first), when
// the job may spill (Budget.SpillDir); past the budget still, the job
// fails (meter.checked).
func (t *Task) spillPast() error {
	if t.meter.space == nil {
		return nil
	}
	for {
		n, _ := t.stateBytes()
		if n <= t.meter.spillAt() {
			return nil
		}
		// The operators that can spill, the one holding the most first:
		// the first that moves something does.
		var ins []*instance
		for _, in := range t.order {
			if _, ok := in.op.(spiller); ok && !in.done && in.busy == 0 {
				ins = append(ins, in)
			}
		}
		slices.SortStableFunc(ins, func(a, b *instance) int {
			return cmp.Compare(movable(b), movable(a))
		})
		moved := false
		for _, in := range ins {
			s := in.op.(spiller)
			first := !s.spilled()
			var err error
			if moved, err = s.spill(t.meter.space); err != nil {
				return fmt.Errorf("operator #%d (%s): %w", in.o.ID, in.o.Kind, err)
			}
			if !moved {
				continue
			}
			t.meter.spilled = max(t.meter.spilled, t.meter.space.Used())
			if first && t.meter.b.Spilled != nil {
				t.meter.b.Spilled(fmt.Sprintf("task %s[%d] #%d %s of %s", t.name, t.index, in.o.ID, in.o.Kind, strings.Join(in.o.Queries, ", ")), n)
			}
			break
		}
		if after, _ := t.stateBytes(); !moved || after >= n {
			return nil
		}
	}
}

// movable is what spilling in's operator lets go: its state, and its
// table's keys when it alone keys in the table (an aggregate's,
// aggspill.go).
func movable(in *instance) int64 {
	n := in.op.(spiller).stateBytes()
	if a, ok := in.op.(*aggregate); ok && a.compacts() {
		n += in.keys.Bytes()
	}
	return n
}

// tableAlone says whether o is the only operator of its Plan.Tables
// entry.
func tableAlone(p *physical.Plan, o *physical.Op) bool {
	for _, tb := range p.Tables {
		if tb.ID == o.Table {
			return len(tb.Ops) == 1
		}
	}
	return true
}

// NoSnapshot says whether an operator of the task has state on disk,
// which its snapshot would take back into memory: the task declines to
// write one (stage.SnapshotDecliner; spilling.go says why).
func (t *Task) NoSnapshot() bool {
	for _, in := range t.order {
		if s, ok := in.op.(spiller); ok && s.spilled() {
			return true
		}
	}
	return false
}

// Overflowed names the first operator of the task that was given more
// rows to hold than the task's limit allows, if one was: its answer is
// not whole, and the job is to fail.
func (t *Task) Overflowed() (string, bool) {
	for _, in := range t.order {
		if l, ok := in.op.(heldLimiter); ok {
			if _, over := l.heldState(); over {
				return fmt.Sprintf("operator #%d (%s) of %s", in.o.ID, in.o.Kind, strings.Join(in.o.Queries, ", ")), true
			}
		}
	}
	return "", false
}

// Table applies a parsed batch of a table (its text columns, in its
// header's order) to the table's scan, and on through the chain.
func (t *Task) Table(name string, b *exec.Batch) error {
	in, err := t.scan(name)
	if err != nil {
		return err
	}
	// Straight to the scan, which reads the columns it needs of b (and
	// only those need be there).
	t.step()
	return t.checked(t.applyBatch(in, 0, b))
}

// TableTo is Table of a batch of the table's records that all go to
// receiving instance to of the one exchange its scan feeds (RouteOf
// parted them so): the scan reads them, and the exchange sends them
// there as they are, not routed again nor copied into a batch of that
// instance's rows.
func (t *Task) TableTo(name string, to int, b *exec.Batch) error {
	in, err := t.scan(name)
	if err != nil {
		return err
	}
	x, _ := routedBy(t, in)
	if x == nil {
		return fmt.Errorf("table %s: its rows are not routed by a field", name)
	}
	if in.done {
		return fmt.Errorf("operator #%d (%s): a batch after its end", in.o.ID, in.o.Kind)
	}
	t.step()
	nb, err := in.op.(*scan).read(b)
	if err != nil || nb.N == 0 {
		return t.checked(err)
	}
	return t.checked(x.call(func() error { return x.x.applyOwned(to, nb) }))
}

// routedBy returns the exchange of t that a Source routes its rows for
// as it reads them, and the field of the table that is its key: when it
// is the one operator that reads the scan sc, sends to several instances
// every row (a route of the channel has no condition: where every route
// has one, the exchange routes only the rows some condition keeps, often
// few), and is keyed by one column of the scan's read as text (whose
// value is the field, never NULL: the bytes the exchange routes it by).
// Else nil.
func routedBy(t *Task, sc *instance) (*instance, int) {
	rs := t.p.Readers(sc.o)
	if len(rs) != 1 {
		return nil, 0
	}
	var x *instance
	for _, in := range t.order {
		if in.o == rs[0].Op && in.x != nil {
			x = in
		}
	}
	if x == nil || x.x.to <= 1 || len(x.x.ch.Key) != 1 {
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

// flushScan applies the rows a table's scan has read a record at a time
// (scan.row) since its last flush, as one batch, on through the chain;
// the caller (Source.Flush) has started the step.
func (t *Task) flushScan(in *instance) error {
	if in.done {
		return fmt.Errorf("operator #%d (%s): rows after its end", in.o.ID, in.o.Kind)
	}
	in.op.(*scan).flush(func(_ int, b *exec.Batch) error {
		in.out(b)
		return nil
	})
	return t.checked(t.chainErr())
}

// EndTable ends a table: its scan finishes, and ends what it feeds.
func (t *Task) EndTable(name string) error {
	in, err := t.scan(name)
	if err != nil {
		return err
	}
	t.step()
	return t.checked(t.finish(in))
}

func (t *Task) scan(name string) (*instance, error) {
	for _, in := range t.order {
		if in.o.Kind == plan.Scan && in.o.Node.Table == name {
			return in, nil
		}
	}
	return nil, fmt.Errorf("task %s[%d] scans no table %q", t.name, t.index, name)
}

// consumer returns the operator route route of channel ch feeds here,
// and which of its inputs that is.
func (t *Task) consumer(ch string, route int) (*instance, int, error) {
	c := t.p.Channel(ch)
	if c == nil || route < 0 || route >= len(c.Routes) {
		return nil, 0, fmt.Errorf("task %s[%d]: no route %d of channel %q", t.name, t.index, route, ch)
	}
	in := t.ops[c.Routes[route].Consumer]
	if in == nil {
		return nil, 0, fmt.Errorf("task %s[%d]: channel %s's route %d is not read here", t.name, t.index, ch, route)
	}
	for k, i := range in.o.Inputs {
		if i.Channel == ch && i.Route == route {
			return in, k, nil
		}
	}
	return nil, 0, fmt.Errorf("task %s[%d]: #%d does not read channel %s's route %d", t.name, t.index, in.o.ID, ch, route)
}

// Receive applies a batch of channel ch from sending instance sender:
// to each route's consumer, the rows that are for it (the batch's
// routes) as the columns it reads, and on through the chain. A batch
// whose columns are not the channel's, or whose routes are not, is
// refused before any consumer has any of it.
func (t *Task) Receive(ch string, sender int, rows *wololov1.RowBatch) error {
	c, err := t.channel(ch)
	if err != nil {
		return err
	}
	b, err := wire.FromRows(rows, c.Columns)
	if err != nil {
		return fmt.Errorf("channel %s: %w", ch, err)
	}
	return t.apply(c, b, rows.GetColumns().GetRoutes())
}

// ReceiveBatch is Receive of a batch as the in-process runner hands it
// on (Rows.Batch): its rows, of the channel's columns, and the routes
// each is for (nil: the channel's one route).
func (t *Task) ReceiveBatch(ch string, sender int, b *exec.Batch, routes []uint64) error {
	c, err := t.channel(ch)
	if err != nil {
		return err
	}
	if len(b.Cols) != len(c.Columns) {
		return fmt.Errorf("channel %s: %w: %d columns, want %d", ch, batch.ErrBadBatch, len(b.Cols), len(c.Columns))
	}
	return t.apply(c, b, routes)
}

// ReceiveEncoded is Receive of a batch as it travels (a RowBatch's
// bytes), read with the wire codec (wire.Read) where it is in the codec's
// form, else by way of the RowBatch; it returns the batch's rows.
func (t *Task) ReceiveEncoded(ch string, sender int, encoded []byte) (int, error) {
	c, err := t.channel(ch)
	if err != nil {
		return 0, err
	}
	b, masks, ok := wire.Read(encoded, c.Columns)
	if !ok {
		rows := &wololov1.RowBatch{}
		if err := proto.Unmarshal(encoded, rows); err != nil {
			return 0, fmt.Errorf("channel %s: %w: %v", ch, batch.ErrBadBatch, err)
		}
		if b, err = wire.FromRows(rows, c.Columns); err != nil {
			return 0, fmt.Errorf("channel %s: %w", ch, err)
		}
		masks = rows.GetColumns().GetRoutes()
	}
	return b.N, t.apply(c, b, masks)
}

// channel is the plan's channel ch, which this task must read.
func (t *Task) channel(ch string) (*physical.Channel, error) {
	if c := t.p.Channel(ch); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("task %s[%d]: no channel %q", t.name, t.index, ch)
}

// apply is a step of the task: a batch of channel c, read (receive).
func (t *Task) apply(c *physical.Channel, b *exec.Batch, masks []uint64) error {
	t.step()
	return t.checked(t.receive(c, b, masks))
}

// receive is Receive of a batch b of channel c read, with the routes of
// its rows.
func (t *Task) receive(c *physical.Channel, b *exec.Batch, masks []uint64) error {
	ch := c.Name
	type target struct {
		in *instance
		k  int
	}
	targets := make([]target, len(c.Routes))
	for r := range c.Routes {
		in, k, err := t.consumer(ch, r)
		if err != nil {
			return err
		}
		targets[r] = target{in, k}
	}
	switch {
	case len(masks) == 0 && len(c.Routes) != 1:
		return fmt.Errorf("channel %s: a batch that names no routes, of %d", ch, len(c.Routes))
	case len(masks) != 0 && len(masks) != b.N:
		return fmt.Errorf("channel %s: routes of %d rows in a batch of %d", ch, len(masks), b.N)
	}
	for _, m := range masks {
		if m>>len(c.Routes) != 0 {
			return fmt.Errorf("channel %s: a row for a route the channel does not have (%#x of %d routes)", ch, m, len(c.Routes))
		}
	}
	slots := routeSlots(t.keyed[ch], len(c.Routes), b, masks)
	for r, rt := range c.Routes {
		// The columns the route reads, then its rows of them: a column
		// of the channel the route does not read is not gathered.
		cols := make([]*exec.Vec, len(rt.Cols))
		for i, col := range rt.Cols {
			cols[i] = b.Cols[col]
		}
		sub, sl, ok := routeBatch(&exec.Batch{N: b.N, Cols: cols}, slots[r], masks, r)
		if !ok {
			continue
		}
		if err := t.applyRoute(targets[r].in, targets[r].k, sub, sl); err != nil {
			return err
		}
	}
	return nil
}

// applyRoute hands a channel route's batch to its consumer: with the
// slots of its rows' keys (slots not nil: a slotted operator), or as
// applyBatch does.
func (t *Task) applyRoute(in *instance, k int, b *exec.Batch, slots []int32) error {
	if slots == nil {
		return t.applyBatch(in, k, b)
	}
	if in.done {
		return fmt.Errorf("operator #%d (%s): a batch after its end", in.o.ID, in.o.Kind)
	}
	if err := t.restartFirst(in); err != nil {
		return err
	}
	if err := in.call(func() error { return in.op.(slotted).applySlots(k, b, slots, in.out) }); err != nil {
		return err
	}
	return t.chainErr()
}

// call calls into in's operator (f), busy meanwhile, and wraps its
// error with the operator.
func (in *instance) call(f func() error) error {
	in.busy++
	err := f()
	in.busy--
	if err != nil {
		return fmt.Errorf("operator #%d (%s): %w", in.o.ID, in.o.Kind, err)
	}
	return nil
}

// End notes that sending instance sender has ended channel ch: every
// route's consumer hears it; an operator finishes once all its inputs
// have ended on every sender, and ends what it feeds.
func (t *Task) End(ch string, sender int) error {
	c, err := t.channel(ch)
	if err != nil {
		return err
	}
	t.step()
	for r := range c.Routes {
		in, k, err := t.consumer(ch, r)
		if err != nil {
			return err
		}
		if err := t.end(in, k, sender); err != nil {
			return t.checked(err)
		}
	}
	return t.checked(nil)
}

// Done reports whether every operator of the task has finished.
func (t *Task) Done() bool {
	for _, in := range t.order {
		if !in.done {
			return false
		}
	}
	return true
}

// Sink returns the output file of the query whose sink is operator id, if
// it is here and has finished.
func (t *Task) Sink(id int) ([]byte, bool) {
	in := t.ops[id]
	if in == nil || !in.done {
		return nil, false
	}
	s, ok := in.op.(*Sink)
	if !ok {
		return nil, false
	}
	return s.CSV(), true
}

// Stats are the task's scans' counts of the values that read as NULL.
func (t *Task) Stats() []exec.ColumnStats {
	var out []exec.ColumnStats
	for _, in := range t.order {
		if s, ok := in.op.(*scan); ok {
			out = append(out, s.Stats()...)
		}
	}
	return out
}

func (t *Task) restartFirst(in *instance) error {
	if s, ok := in.op.(spiller); ok && s.spilled() {
		return nil // it declines to snapshot (NoSnapshot)
	}
	if _, ok := in.op.(stage.Snapshotter); ok && t.restart != nil && !in.done && t.restart(in.o.ID, t.index) {
		return t.restore(in)
	}
	return nil
}

// applyBatch hands a batch to an operator of the task: a table's to its
// scan, a channel route's to its consumer, what an operator emitted to
// the one chained after it, as it is (the operators do not change the
// batches they are given, so one batch may go to several).
func (t *Task) applyBatch(in *instance, k int, b *exec.Batch) error {
	if in.done {
		return fmt.Errorf("operator #%d (%s): a batch after its end", in.o.ID, in.o.Kind)
	}
	if err := t.restartFirst(in); err != nil {
		return err
	}
	if err := in.call(func() error { return in.op.Apply(k, b, in.out) }); err != nil {
		return err
	}
	return t.chainErr()
}

// chainErr returns, once, the error an operator chained after another
// met while that one emitted.
func (t *Task) chainErr() error {
	err := t.err
	t.err = nil
	return err
}

// end notes that sending instance sender has ended input k of an
// operator: once every sender has ended it, the operator hears it
// (InputEnder), and once every input has ended, it finishes.
func (t *Task) end(in *instance, k, sender int) error {
	if err := t.restartFirst(in); err != nil {
		return err
	}
	if in.done || !in.ends.Note(k, sender) || !in.ends.Ended(k) {
		return nil
	}
	if e, ok := in.op.(InputEnder); ok {
		if err := in.call(func() error { return e.EndInput(k, in.out) }); err != nil {
			return err
		}
		if err := t.chainErr(); err != nil {
			return err
		}
	}
	if in.ends.AllEnded() {
		return t.finish(in)
	}
	return nil
}

// finish finishes an operator and ends its outputs: the operators
// chained after it, or an exchange's channel to every receiving instance.
func (t *Task) finish(in *instance) error {
	if in.done {
		return nil
	}
	if err := in.call(func() error { return in.op.Finish(in.out) }); err != nil {
		return err
	}
	if err := t.chainErr(); err != nil {
		return err
	}
	in.done = true
	if in.x != nil {
		to, err := t.replicas(in.x.ch.To)
		if err != nil {
			return err
		}
		for i := range to {
			if err := t.send(in.x.ch, i, nil); err != nil {
				return err
			}
		}
		return nil
	}
	for _, c := range t.order {
		for k, i := range c.o.Inputs {
			if i.Channel == "" && i.Op == in.o.ID {
				if err := t.end(c, k, 0); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// emit hands what an operator emitted to the operators chained after it,
// or an exchange's rows to the sender.
func (t *Task) emit(in *instance, b *exec.Batch) error {
	for _, c := range t.order {
		for k, i := range c.o.Inputs {
			if i.Channel == "" && i.Op == in.o.ID {
				if err := t.applyBatch(c, k, b); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// restore replaces in's operator by a fresh one restored from its
// snapshot, which must write the same snapshot again (the ends of its
// inputs, counted by the instance, stay).
func (t *Task) restore(in *instance) error {
	snap, err := in.op.(stage.Snapshotter).AppendSnapshot(nil)
	if err != nil {
		return err
	}
	// Into the same shared table, which holds the other operators' keys
	// and this one's already: its view of the table starts empty.
	fresh, err := t.newOp(in)
	if err != nil {
		return err
	}
	if err := fresh.(stage.Snapshotter).Restore(slices.Clone(snap)); err != nil {
		return err
	}
	again, err := fresh.(stage.Snapshotter).AppendSnapshot(nil)
	if err != nil {
		return err
	}
	if !bytes.Equal(again, snap) {
		return fmt.Errorf("operator #%d (%s): restored, it snapshots %d bytes where it restored %d others", in.o.ID, in.o.Kind, len(again), len(snap))
	}
	in.op = fresh
	return nil
}

// topOf is the most rows of sort o's output that the plan reads: the N
// and OFFSET of the LIMIT that alone reads it, or 0 (all of them).
func topOf(p *physical.Plan, o *physical.Op) int64 {
	var top int64
	readers := 0
	for _, r := range p.Ops {
		for _, in := range r.Inputs {
			if in.Channel != "" || in.Op != o.ID || r.Task != o.Task {
				continue
			}
			readers++
			if r.Kind == plan.Limit && r.Node != nil && r.Node.N >= 0 {
				top = r.Node.N + r.Node.Offset
			}
		}
	}
	if readers != 1 {
		return 0
	}
	return top
}
