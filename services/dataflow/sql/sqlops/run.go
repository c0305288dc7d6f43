package sqlops

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// Result is what Run returns: each query's NAME.csv, and the scans'
// counts of the values that read as NULL.
type Result struct {
	Files map[string][]byte
	Stats []exec.ColumnStats
}

// Run runs a job's physical plan over its tables (by name) in this
// process: every instance of every task (the gateway's one, the shard
// task's p.Shard.Replicas) with its own operators, each driven by a
// stage.Driver as the stage runtime drives its operators, rows sent
// between instances on the plan's channels as ColumnBatches (marshalled
// and read back, as the wire carries them), each to the instance
// stage.Route picks by the row's key, as the deployment routes. Every
// sender of an input ends it (a chained operator's one sender, each
// instance of a channel's producing task); an operator finishes when the
// driver says every input has ended, and then ends its own outputs. It
// returns each query's output file.
//
// Each instance applies what was sent to it in the order it was sent, one
// arrival at a time; Run takes the instances in the order of the plan's
// operators (an operator comes after those it reads, over a channel too),
// which is one of the orders a deployment may apply them in. The tests
// run the same plan in random orders, restarting operators from their
// snapshots on the way, and get the same answers.
func Run(p *physical.Plan, tables map[string]*exec.Table) (*Result, error) {
	res, _, err := run(p, tables, options{})
	return res, err
}

// options are how the tests run a plan; Run uses none.
type options struct {
	// pick chooses which of n instances ready to apply their next
	// arrival does; nil: the first, by operator and instance.
	pick func(n int) int
	// restart, when not nil, is asked before each arrival of an instance
	// of an operator with state (a stage.Snapshotter) whether to restart
	// it first: its snapshot written, a fresh operator made and restored
	// from it, a fresh driver told the ends the old one had noted.
	restart func(op, instance int) bool
	// own gives every keyed operator a table of its own instead of its
	// Plan.Tables entry's.
	own bool
}

// run runs p, and returns as well the number of keys its keyed
// operators' tables hold at the end, in all.
func run(p *physical.Plan, tables map[string]*exec.Table, opt options) (*Result, int, error) {
	if p.Gateway.Replicas != 1 {
		return nil, 0, fmt.Errorf("run: the gateway task has %d replicas; the runner parses the files in one", p.Gateway.Replicas)
	}
	r := &runner{p: p, tables: tables, insts: make([][]*instance, len(p.Ops)), opt: opt, shared: map[[2]int]*exec.KeyTable{}}
	for _, o := range p.Ops {
		if err := r.build(o); err != nil {
			return nil, 0, err
		}
	}
	var all, ready []*instance
	for _, o := range p.Ops {
		all = append(all, r.insts[o.ID]...)
	}
	for {
		ready = ready[:0]
		for _, in := range all {
			if !in.done && (len(in.inbox) > 0 || in.x == nil && in.d.AllEnded()) {
				ready = append(ready, in)
			}
		}
		if len(ready) == 0 {
			break
		}
		k := 0
		if opt.pick != nil {
			k = opt.pick(len(ready))
		}
		in := ready[k]
		if err := r.next(in); err != nil {
			return nil, 0, fmt.Errorf("run: operator #%d (%s) instance %d: %w", in.o.ID, in.o.Kind, in.i, err)
		}
	}
	res := &Result{Files: map[string][]byte{}}
	for _, in := range all {
		if !in.done {
			return nil, 0, fmt.Errorf("run: operator #%d (%s) instance %d: its inputs never ended", in.o.ID, in.o.Kind, in.i)
		}
		if s, ok := in.op.(*scan); ok {
			res.Stats = append(res.Stats, s.Stats()...)
		}
	}
	for _, q := range p.Queries {
		if q.Sink < 0 || q.Sink >= len(p.Ops) || len(r.insts[q.Sink]) != 1 {
			return nil, 0, fmt.Errorf("run: query %s: sink #%d is not one operator", q.Name, q.Sink)
		}
		sink, ok := r.insts[q.Sink][0].op.(*Sink)
		if !ok {
			return nil, 0, fmt.Errorf("run: query %s: #%d is no sink", q.Name, q.Sink)
		}
		res.Files[q.Name] = sink.CSV()
	}
	keys := 0
	for _, t := range r.shared {
		keys += t.Len()
	}
	return res, keys, nil
}

type runner struct {
	p      *physical.Plan
	tables map[string]*exec.Table
	insts  [][]*instance // per operator, per instance of its task
	opt    options
	shared map[[2]int]*exec.KeyTable // by table ID and instance
}

// instance is one operator on one instance of its task, with what was
// sent to it and not yet applied.
type instance struct {
	o       *physical.Op
	i       int
	done    bool // finished, its outputs ended
	dv      *driven
	op      Operator
	x       *Exchange
	d       *stage.Driver
	senders map[string]int
	ended   [][2]string // the ends the driver noted: stream, sender
	inbox   []arrival
	// cols are the columns of each input; table, a scan's table's.
	cols  [][]plan.Column
	table []string
	// shared is the table of the instance's Plan.Tables entry.
	shared *exec.KeyTable
}

// arrival is a batch of an input, or (end) the end of it by one sender.
type arrival struct {
	input  int
	b      *exec.Batch
	end    bool
	sender int
}

// stream names input k of an operator for its driver.
func stream(k int) string { return "in" + strconv.Itoa(k) }

// table returns instance i's table of the plan's table id, made on first
// use: the one its operators keyed by the same key share.
func (r *runner) table(id, i int) *exec.KeyTable {
	k := [2]int{id, i}
	if r.opt.own {
		k = [2]int{-len(r.shared) - 1, i}
	}
	if r.shared[k] == nil {
		r.shared[k] = exec.NewKeyTable()
	}
	return r.shared[k]
}

func (r *runner) replicas(task string) (int, error) {
	switch task {
	case r.p.Gateway.Name:
		return r.p.Gateway.Replicas, nil
	case r.p.Shard.Name:
		return r.p.Shard.Replicas, nil
	}
	return 0, fmt.Errorf("run: no task %q", task)
}

// build makes o's instances, checking that it reads only operators
// before it.
func (r *runner) build(o *physical.Op) error {
	if o.ID < 0 || o.ID >= len(r.p.Ops) || r.p.Ops[o.ID] != o {
		return fmt.Errorf("run: operator #%d is not at its place", o.ID)
	}
	n, err := r.replicas(o.Task)
	if err != nil {
		return err
	}
	senders := map[string]int{}
	for k, in := range o.Inputs {
		from, count := in.Op, 1
		if in.Channel != "" {
			ch := r.p.Channel(in.Channel)
			if ch == nil {
				return fmt.Errorf("run: operator #%d reads channel %q, which is not there", o.ID, in.Channel)
			}
			if from = ch.Producer; from >= 0 && from < len(r.p.Ops) {
				if count, err = r.replicas(r.p.Ops[from].Task); err != nil {
					return err
				}
			}
		}
		if from >= o.ID || from < 0 {
			return fmt.Errorf("run: operator #%d reads #%d, which does not come before it", o.ID, from)
		}
		senders[stream(k)] = count
	}
	cols, err := InputColumns(r.p, o)
	if err != nil {
		return err
	}
	for range n {
		in := &instance{o: o, i: len(r.insts[o.ID]), cols: cols, senders: senders}
		switch o.Kind {
		case physical.Exchange:
			if len(o.Inputs) != 1 {
				return fmt.Errorf("run: exchange #%d with %d inputs", o.ID, len(o.Inputs))
			}
			ch := r.p.Channel(o.Channel)
			if ch == nil {
				return fmt.Errorf("run: exchange #%d writes channel %q, which is not there", o.ID, o.Channel)
			}
			to, err := r.replicas(ch.To)
			if err != nil {
				return err
			}
			if in.x, err = NewExchange(r.p, ch, to); err != nil {
				return err
			}
		case plan.Scan:
			t, ok := r.tables[o.Node.Table]
			if !ok {
				return fmt.Errorf("run: no table %q", o.Node.Table)
			}
			in.table = t.Columns
			text := make([]plan.Column, len(t.Columns))
			for c, name := range t.Columns {
				text[c] = plan.Column{Name: name, Type: plan.Text}
			}
			in.cols = [][]plan.Column{text}
			for _, b := range t.Batches {
				in.inbox = append(in.inbox, arrival{b: b})
			}
		default:
			if o.Table != 0 {
				in.shared = r.table(o.Table, len(r.insts[o.ID]))
			}
		}
		if in.x == nil {
			if in.op, err = New(o, in.cols, in.table, in.shared); err != nil {
				return err
			}
			in.dv = &driven{op: in.op, cols: in.cols, out: func(b *exec.Batch) { r.send(in.o, in.i, b) }}
			in.d = stage.NewDriver(in.dv, in.senders)
		}
		r.insts[o.ID] = append(r.insts[o.ID], in)
	}
	return nil
}

// next applies in's next arrival: a batch, or an input's end by one of
// its senders; an operator whose inputs have all ended (at once for a
// scan, once its table's batches are applied) is finished, and its
// outputs ended.
func (r *runner) next(in *instance) error {
	if in.x != nil {
		return r.route(in)
	}
	if _, ok := in.op.(stage.Snapshotter); ok && r.opt.restart != nil && r.opt.restart(in.o.ID, in.i) {
		if err := r.restore(in); err != nil {
			return err
		}
	}
	if len(in.inbox) > 0 {
		a := in.inbox[0]
		in.inbox = in.inbox[1:]
		if !a.end {
			if in.d.Finished() {
				return fmt.Errorf("a batch after the end")
			}
			return in.d.Apply(stream(a.input), ToRows(a.b), nil)
		}
		in.ended = append(in.ended, [2]string{stream(a.input), strconv.Itoa(a.sender)})
		if _, err := in.d.End(stream(a.input), strconv.Itoa(a.sender), nil); err != nil {
			return err
		}
	}
	if !in.d.AllEnded() || len(in.inbox) > 0 && in.o.Kind == plan.Scan {
		return nil
	}
	if err := in.d.Finish(nil); err != nil {
		return err
	}
	in.done = true
	r.end(in.o, in.i)
	return nil
}

// route sends an exchange instance's next arrival on its channel, or,
// when it is the end of its input, ends the channel from this instance.
func (r *runner) route(in *instance) error {
	a := in.inbox[0]
	in.inbox = in.inbox[1:]
	if in.done {
		return fmt.Errorf("a batch after the end")
	}
	if a.end {
		in.done = true
		for route, rt := range in.x.ch.Routes {
			for _, c := range r.insts[rt.Consumer] {
				c.inbox = append(c.inbox, arrival{input: in.x.inputs[route], end: true, sender: in.i})
			}
		}
		return nil
	}
	return in.x.Route(a.b, func(route, to int, b *exec.Batch) error {
		c := r.insts[in.x.ch.Routes[route].Consumer][to]
		k := in.x.inputs[route]
		// Through the wire's form, as a deployment sends it.
		wire, err := proto.Marshal(ToRows(b))
		if err != nil {
			return fmt.Errorf("channel %s: %w", in.x.ch.Name, err)
		}
		var rb wololov1.RowBatch
		if err := proto.Unmarshal(wire, &rb); err != nil {
			return fmt.Errorf("channel %s: %w", in.x.ch.Name, err)
		}
		if b, err = FromRows(&rb, c.cols[k]); err != nil {
			return fmt.Errorf("channel %s: %w", in.x.ch.Name, err)
		}
		c.inbox = append(c.inbox, arrival{input: k, b: b})
		return nil
	})
}

// restore replaces in's operator by a fresh one restored from its
// snapshot, which must write the same snapshot again, and its driver by
// a fresh one told the ends the old one had noted.
func (r *runner) restore(in *instance) error {
	if in.d.Finished() {
		return nil // nothing left to restart
	}
	snap, err := in.op.(stage.Snapshotter).AppendSnapshot(nil)
	if err != nil {
		return err
	}
	// Into the same shared table, which holds the other operators' keys
	// and this one's already: its view of the table starts empty.
	fresh, err := New(in.o, in.cols, in.table, in.shared)
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
		return fmt.Errorf("restored, it snapshots %d bytes where it restored %d others", len(again), len(snap))
	}
	in.op, in.dv.op = fresh, fresh
	in.d = stage.NewDriver(in.dv, in.senders)
	for _, e := range in.ended {
		in.d.Restore(e[0], e[1])
	}
	return nil
}

// send hands a batch o's instance i emitted to the operators chained
// after it, on the same instance.
func (r *runner) send(o *physical.Op, i int, b *exec.Batch) {
	r.chained(o, i, arrival{b: b})
}

// end ends o's instance i's output to the operators chained after it.
func (r *runner) end(o *physical.Op, i int) {
	r.chained(o, i, arrival{end: true})
}

func (r *runner) chained(o *physical.Op, i int, a arrival) {
	for _, c := range r.p.Ops[o.ID+1:] {
		if c.Task != o.Task {
			continue
		}
		for k, in := range c.Inputs {
			if in.Channel == "" && in.Op == o.ID {
				a.input = k
				r.insts[c.ID][i].inbox = append(r.insts[c.ID][i].inbox, a)
			}
		}
	}
}

// driven is an operator as a stage.Operator, for a stage.Driver: its
// inputs are the streams in0, in1, ... of ColumnBatches, read as their
// columns; what it emits goes to out, not to the stage's Emitter (whose
// row kinds are the fixed pipeline's).
type driven struct {
	op   Operator
	cols [][]plan.Column
	out  Out
}

func (d *driven) input(s string) (int, error) {
	k, err := strconv.Atoi(s[min(2, len(s)):])
	if err != nil || k < 0 || k >= len(d.cols) {
		return 0, fmt.Errorf("no input stream %q", s)
	}
	return k, nil
}

func (d *driven) Apply(s string, rows *wololov1.RowBatch, _ stage.Emitter) error {
	k, err := d.input(s)
	if err != nil {
		return err
	}
	b, err := FromRows(rows, d.cols[k])
	if err != nil {
		return err
	}
	return d.op.Apply(k, b, d.out)
}

// EndStream tells an operator that ends an input early (InputEnder).
func (d *driven) EndStream(s string, _ stage.Emitter) error {
	k, err := d.input(s)
	if err != nil {
		return err
	}
	if e, ok := d.op.(InputEnder); ok {
		return e.EndInput(k, d.out)
	}
	return nil
}

func (d *driven) Finish(stage.Emitter) error { return d.op.Finish(d.out) }

// Exchange writes an operator's output rows on a channel: per route, the
// rows its condition holds for, as the columns the route reads, each to
// the receiving instance the hash of the row's key picks (stage.Route of
// the key's one form: a text key's bytes, else its values' AppendKey).
type Exchange struct {
	ch     *physical.Channel
	to     int   // receiving instances
	inputs []int // per route, the index of the channel among its consumer's inputs
}

// NewExchange returns the exchange writing channel ch of plan p, to a
// task of `to` instances.
func NewExchange(p *physical.Plan, ch *physical.Channel, to int) (*Exchange, error) {
	x := &Exchange{ch: ch, to: to}
	for ri, rt := range ch.Routes {
		if rt.Consumer < 0 || rt.Consumer >= len(p.Ops) {
			return nil, fmt.Errorf("channel %s route %d: no consumer #%d", ch.Name, ri, rt.Consumer)
		}
		k := -1
		for j, in := range p.Ops[rt.Consumer].Inputs {
			if in.Channel == ch.Name && in.Route == ri {
				k = j
			}
		}
		if k < 0 {
			return nil, fmt.Errorf("channel %s route %d: #%d does not read it", ch.Name, ri, rt.Consumer)
		}
		for _, c := range rt.Cols {
			if c < 0 || c >= len(ch.Exprs) {
				return nil, fmt.Errorf("channel %s route %d: column %d of %d", ch.Name, ri, c, len(ch.Exprs))
			}
		}
		x.inputs = append(x.inputs, k)
	}
	for _, c := range ch.Key {
		if c < 0 || c >= len(ch.Exprs) {
			return nil, fmt.Errorf("channel %s: key column %d of %d", ch.Name, c, len(ch.Exprs))
		}
	}
	return x, nil
}

// Route sends the rows of b, a batch of the producer's input, to send:
// per route, to each receiving instance, one batch.
func (x *Exchange) Route(b *exec.Batch, send func(route, to int, b *exec.Batch) error) error {
	for ri, rt := range x.ch.Routes {
		rows := []*exec.Batch{b}
		if rt.Cond != nil {
			var err error
			if rows, err = exec.Filter(rt.Cond, rows); err != nil {
				return err
			}
		}
		if len(rows) == 0 || rows[0].N == 0 {
			continue
		}
		exprs := make([]*plan.Expr, len(rt.Cols))
		for i, c := range rt.Cols {
			exprs[i] = x.ch.Exprs[c]
		}
		cols, err := exec.Project(exprs, rows)
		if err != nil {
			return err
		}
		if len(x.ch.Key) == 0 || x.to == 1 {
			if err := send(ri, 0, cols[0]); err != nil {
				return err
			}
			continue
		}
		keys := make([]*plan.Expr, len(x.ch.Key))
		for i, c := range x.ch.Key {
			keys[i] = x.ch.Exprs[c]
		}
		kb, err := exec.Project(keys, rows)
		if err != nil {
			return err
		}
		byTo := make([][]int32, x.to)
		var key []byte
		for i := range kb[0].N {
			key = RouteKey(key[:0], kb[0].Cols, i)
			t := stage.Route(key, x.to)
			byTo[t] = append(byTo[t], int32(i))
		}
		for t, rs := range byTo {
			if len(rs) > 0 {
				if err := send(ri, t, cols[0].Rows(rs)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// RouteKey appends the bytes a row's key is routed by: the text itself
// for one text column (as the deployment routes a match token), else each
// value's exec.AppendKey, so that equal numbers go to one instance
// whatever their trailing zeros.
func RouteKey(dst []byte, keys []*exec.Vec, i int) []byte {
	if len(keys) == 1 && keys[0].Type == plan.Text && !keys[0].IsNull(i) {
		return append(dst, keys[0].Text(i)...)
	}
	for _, k := range keys {
		dst = exec.AppendKey(dst, k, i)
	}
	return dst
}
