package ops

import (
	"bytes"
	"fmt"
	"slices"

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
// task's p.Shard.Replicas) with its own operators, rows sent between
// instances on the plan's channels, each to the instance stage.Route
// picks by the row's key, as the deployment routes. It returns each
// query's output file.
//
// The instances run in the order of the plan's operators (an operator
// comes after those it reads, over a channel too): each operator instance
// is given every batch its inputs sent it, in the order they were sent,
// and then, its inputs having ended on every sender, finished. That is
// one of the orders a deployment may apply them in; the operators'
// output does not depend on which.
func Run(p *physical.Plan, tables map[string]*exec.Table) (*Result, error) {
	return run(p, tables, nil)
}

// restartAt, when not nil, names for each operator instance with state
// (a stage.Snapshotter) the number of its input batches after which it is
// restarted: its snapshot written, a fresh operator made and restored
// from it, the rest fed to that one. -1: not restarted.
type restartAt func(op, instance, batches int) int

func run(p *physical.Plan, tables map[string]*exec.Table, restart restartAt) (*Result, error) {
	res, _, err := runKeys(p, tables, restart, false)
	return res, err
}

// runKeys runs p, and returns the number of keys its keyed operators'
// tables hold at the end, in all; with own, every keyed operator has a
// table of its own instead of its Plan.Tables entry's.
func runKeys(p *physical.Plan, tables map[string]*exec.Table, restart restartAt, own bool) (*Result, int, error) {
	if p.Gateway.Replicas != 1 {
		return nil, 0, fmt.Errorf("run: the gateway task has %d replicas; the runner parses the files in one", p.Gateway.Replicas)
	}
	r := &runner{p: p, tables: tables, insts: make([][]*instance, len(p.Ops)), restart: restart, shared: map[[2]int]*exec.KeyTable{}, own: own}
	for _, o := range p.Ops {
		if err := r.build(o); err != nil {
			return nil, 0, err
		}
	}
	res := &Result{Files: map[string][]byte{}}
	for _, o := range p.Ops {
		for i, in := range r.insts[o.ID] {
			if err := r.step(o, i, in); err != nil {
				return nil, 0, fmt.Errorf("run: operator #%d (%s) instance %d: %w", o.ID, o.Kind, i, err)
			}
			if s, ok := in.op.(*scan); ok {
				res.Stats = append(res.Stats, s.Stats()...)
			}
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
	p       *physical.Plan
	tables  map[string]*exec.Table
	insts   [][]*instance // per operator, per instance of its task
	restart restartAt
	shared  map[[2]int]*exec.KeyTable // by table ID and instance
	own     bool                      // a table per operator (runKeys)
}

// instance is one operator on one instance of its task, with the batches
// sent to it and not yet applied.
type instance struct {
	op    Operator
	x     *Exchange
	inbox []arrival
	// cols are the columns of each input; table, a scan's table's.
	cols  [][]plan.Column
	table []string
	// shared is the table of the instance's Plan.Tables entry.
	shared *exec.KeyTable
}

// table returns instance i's table of the plan's table id, made on first
// use: the one its operators keyed by the same key share.
func (r *runner) table(id, i int) *exec.KeyTable {
	k := [2]int{id, i}
	if r.own {
		k = [2]int{-len(r.shared) - 1, i}
	}
	if r.shared[k] == nil {
		r.shared[k] = exec.NewKeyTable()
	}
	return r.shared[k]
}

type arrival struct {
	input int
	b     *exec.Batch
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
	for _, in := range o.Inputs {
		from := in.Op
		if in.Channel != "" {
			ch := r.p.Channel(in.Channel)
			if ch == nil {
				return fmt.Errorf("run: operator #%d reads channel %q, which is not there", o.ID, in.Channel)
			}
			from = ch.Producer
		}
		if from >= o.ID {
			return fmt.Errorf("run: operator #%d reads #%d, which comes after it", o.ID, from)
		}
	}
	cols, err := InputColumns(r.p, o)
	if err != nil {
		return err
	}
	for range n {
		in := &instance{cols: cols}
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
			if in.op, err = New(o, cols, t.Columns, nil); err != nil {
				return err
			}
			for _, b := range t.Batches {
				in.inbox = append(in.inbox, arrival{0, b})
			}
		default:
			if o.Table != 0 {
				in.shared = r.table(o.Table, len(r.insts[o.ID]))
			}
			if in.op, err = New(o, cols, nil, in.shared); err != nil {
				return err
			}
		}
		r.insts[o.ID] = append(r.insts[o.ID], in)
	}
	return nil
}

// step applies what was sent to instance i of o, finishes it and sends
// on what it emitted.
func (r *runner) step(o *physical.Op, i int, in *instance) error {
	if in.x != nil {
		for _, a := range in.inbox {
			err := in.x.Route(a.b, func(route, to int, b *exec.Batch) error {
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
				c.inbox = append(c.inbox, arrival{k, b})
				return nil
			})
			if err != nil {
				return err
			}
		}
		in.inbox = nil
		return nil
	}
	out := func(b *exec.Batch) { r.send(o, i, b) }
	at := -1
	if _, ok := in.op.(stage.Snapshotter); ok && r.restart != nil {
		at = r.restart(o.ID, i, len(in.inbox))
	}
	for k, a := range in.inbox {
		if k == at {
			if err := r.restore(o, in); err != nil {
				return err
			}
		}
		if err := in.op.Apply(a.input, a.b, out); err != nil {
			return err
		}
	}
	if at == len(in.inbox) {
		if err := r.restore(o, in); err != nil {
			return err
		}
	}
	in.inbox = nil
	return in.op.Finish(out)
}

// restore replaces in's operator by a fresh one restored from its
// snapshot, which must write the same snapshot again.
func (r *runner) restore(o *physical.Op, in *instance) error {
	snap, err := in.op.(stage.Snapshotter).AppendSnapshot(nil)
	if err != nil {
		return err
	}
	// Into the same shared table, which holds the other operators' keys
	// and this one's already: its view of the table starts empty.
	fresh, err := New(o, in.cols, in.table, in.shared)
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
	in.op = fresh
	return nil
}

// send hands a batch o's instance i emitted to the operators chained
// after it, on the same instance.
func (r *runner) send(o *physical.Op, i int, b *exec.Batch) {
	for _, c := range r.p.Ops[o.ID+1:] {
		if c.Task != o.Task {
			continue
		}
		for k, in := range c.Inputs {
			if in.Channel == "" && in.Op == o.ID {
				r.insts[c.ID][i].inbox = append(r.insts[c.ID][i].inbox, arrival{k, b})
			}
		}
	}
}

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
