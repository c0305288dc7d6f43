package sqlops

import (
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Out receives an operator's output rows, a batch at a time.
type Out func(*exec.Batch)

// Operator is one operator of the physical plan, on one instance of its
// task. Apply takes a batch of its input number input (the index into
// Op.Inputs; a scan's one input is its table's text); Finish is called
// once, after the last batch of every input, and emits what the operator
// held back. Like stage.Operator, it is called from one goroutine.
type Operator interface {
	Apply(input int, b *exec.Batch, out Out) error
	Finish(out Out) error
}

// InputEnder is implemented by operators that act when one input ends
// before the others (stage.InputEnder's counterpart): a semi-join or a
// join stops holding its left rows once its right input has ended.
type InputEnder interface {
	EndInput(input int, out Out) error
}

// slotted is a keyed operator that can be given, with a batch of one of
// its inputs, the slot of each row's key in its table: the task looks a
// row's key up once for every operator of one shared table that reads
// the batch (Task.Receive), and each reads its own state at the slots.
type slotted interface {
	// keyOf says how the operator keys input, when its key there is one
	// column of the input's batch.
	keyOf(input int) (keyUse, bool)
	// applySlots is Apply given slots, the slots of b's rows' keys
	// (exec.KeyTable.Slots, each looked up as keyOf's modes say).
	applySlots(input int, b *exec.Batch, slots []int32, out Out) error
}

// keyUse is how a keyed operator keys one of its inputs: the column of
// the input's batch that is its key, and what the operator does with a
// row's key in its table (exec.AddKey: it adds it; exec.FindKey: it
// only looks it up), and with a NULL key (a group of its own, or
// exec.SkipKey: a NULL matches nothing).
//
// out, when set, is the consumer's spilled partitions (nil: none yet;
// partsOut): a row of one of them it diverts to disk by its key without
// reading its slot, so the task neither adds nor looks its key up for
// it, and the shared table stops growing with the keys of what went to
// disk (a spilled aggregate's later rows, a spilled join's).
type keyUse struct {
	col        int
	mode, null exec.KeyMode
	out        func() *[spillParts]bool
	find       bool // the rows of spilled partitions are looked up (FindKey), not skipped: an aggregate's done keys are found (aggfinish.go)
}

// keyGroup is the routes of a channel whose consumers on a task
// instance are keyed by one column of the channel in one shared table
// (operators of one Plan.Tables entry): a task receiving a batch of the
// channel looks each row's key up in the table once (routeSlots), and
// hands every one of them the slots with its rows, where each would look
// the key up again (Task.Receive; EpochTask's, to the operators that
// fold the batch).
type keyGroup struct {
	table  *exec.KeyTable
	col    int      // the channel's column that is the key
	routes []int    // the routes, in order
	uses   []keyUse // how each route's consumer keys its input
}

// keyGroupsOf finds, for each channel of p, the routes whose consumers
// key a column of the channel in a shared table, grouped by table and
// column: keyOf says of route r of channel ch the table its consumer
// keys in and how, ok false when it is not so keyed.
func keyGroupsOf(p *physical.Plan, keyOf func(ch string, r int) (t *exec.KeyTable, use keyUse, ok bool)) map[string][]keyGroup {
	out := map[string][]keyGroup{}
	for _, c := range p.Channels {
		var groups []keyGroup
		for r, rt := range c.Routes {
			table, use, ok := keyOf(c.Name, r)
			if !ok || use.col < 0 || use.col >= len(rt.Cols) {
				continue
			}
			col := rt.Cols[use.col]
			g := slices.IndexFunc(groups, func(g keyGroup) bool { return g.table == table && g.col == col })
			if g < 0 {
				groups = append(groups, keyGroup{table: table, col: col})
				g = len(groups) - 1
			}
			groups[g].routes = append(groups[g].routes, r)
			groups[g].uses = append(groups[g].uses, use)
		}
		if len(groups) > 0 {
			out[c.Name] = groups
		}
	}
	return out
}

// routeSlots returns, per route of a channel of routes routes, the slots
// of the keys of the rows of b (a batch of it, whose rows are for the
// routes masks says) in the table of the route's key group, or nil for a
// route of none: each row's key looked up once for the group's routes
// that take it, added when one of them adds it.
func routeSlots(groups []keyGroup, routes int, b *exec.Batch, masks []uint64) [][]int32 {
	out := make([][]int32, routes)
	for _, g := range groups {
		key := b.Cols[g.col]
		sl := g.table.Slots([]*exec.Vec{key}, b.N, g.modes(key, b.N, masks), nil)
		for _, r := range g.routes {
			out[r] = sl
		}
	}
	return out
}

// modes is the mode of each of the n rows of key, a batch's key column, for
// Slots: the most of the modes of the group's routes that take the row
// (masks; none: every route); nil, every key added, when a route that
// adds every key, NULL included, takes every row (an aggregate's).
//
// A route whose consumer has spilled partitions (keyUse.out) takes no
// key of theirs: its rows there count as SkipKey, or FindKey (keyUse.find).
func (g *keyGroup) modes(key *exec.Vec, n int, masks []uint64) []exec.KeyMode {
	outs := make([]*[spillParts]bool, len(g.routes))
	spilled := false
	for j := range g.routes {
		if f := g.uses[j].out; f != nil {
			outs[j] = f()
			spilled = spilled || outs[j] != nil
		}
	}
	for j, r := range g.routes {
		if use := g.uses[j]; outs[j] == nil && use.mode == exec.AddKey && use.null == exec.AddKey && !slices.ContainsFunc(masks, func(m uint64) bool { return m&(1<<r) == 0 }) {
			return nil
		}
	}
	var parts []uint8
	if spilled {
		parts = keyPartitions([]*exec.Vec{key}, n)
	}
	modes := make([]exec.KeyMode, n)
	for j, r := range g.routes {
		use := g.uses[j]
		for i := range modes {
			if len(masks) != 0 && masks[i]&(1<<r) == 0 {
				continue
			}
			if outs[j] != nil && outs[j][parts[i]] {
				if use.find {
					modes[i] = max(modes[i], exec.FindKey)
				}
				continue
			}
			m := use.mode
			if key.IsNull(i) {
				m = use.null
			}
			modes[i] = max(modes[i], m)
		}
	}
	return modes
}

// routeBatch is route r's rows of b, a batch of a channel's (its rows'
// routes masks; none: every row is the route's), with their slots (sl,
// b's rows', or nil); ok is false when the route has none of them.
func routeBatch(b *exec.Batch, sl []int32, masks []uint64, r int) (sub *exec.Batch, slots []int32, ok bool) {
	if len(masks) == 0 {
		return b, sl, true
	}
	rs := make([]int32, 0, b.N)
	for i, m := range masks {
		if m&(1<<r) != 0 {
			rs = append(rs, int32(i))
		}
	}
	switch {
	case len(rs) == 0:
		return nil, nil, false
	case len(rs) == b.N:
		return b, sl, true
	}
	if sl != nil {
		sl = gatherSlots(sl, rs)
	}
	return b.Rows(rs), sl, true
}

// gatherSlots returns the slots at rows.
func gatherSlots(slots, rows []int32) []int32 {
	out := make([]int32, len(rows))
	for k, r := range rows {
		out[k] = slots[r]
	}
	return out
}

// colKey is the keyUse of key expression e when it is a column.
func colKey(e *plan.Expr, mode, null exec.KeyMode) (keyUse, bool) {
	if e == nil || e.Kind != plan.ColRef {
		return keyUse{}, false
	}
	return keyUse{col: e.Col, mode: mode, null: null}, true
}

// New returns the operator of o, one instance's. inputs are the columns
// of each of o's inputs (InputColumns); a scan's one input is the text of
// its table's columns, named by table. A keyed operator (a join, a
// semi-join, an aggregate, a distinct) keeps its keys in shared, the
// table of its instance's Plan.Tables entry that the other operators of
// that entry share (nil: a table of its own).
func New(o *physical.Op, inputs [][]plan.Column, table []string, shared *exec.KeyTable) (Operator, error) {
	if shared == nil {
		shared = exec.NewKeyTable()
	}
	n := o.Node
	if n == nil && o.Kind != physical.Sink {
		return nil, fmt.Errorf("operator #%d (%s) has no node", o.ID, o.Kind)
	}
	want := 1
	switch o.Kind {
	case plan.Join, plan.SemiJoin, plan.UnionAll:
		want = 2
	case physical.Exchange:
		return nil, fmt.Errorf("operator #%d: an exchange is the runner's (see Route)", o.ID)
	}
	if len(inputs) != want {
		return nil, fmt.Errorf("operator #%d (%s) with %d inputs, want %d", o.ID, o.Kind, len(inputs), want)
	}
	switch o.Kind {
	case plan.Scan:
		return newScan(n, table)
	case plan.Filter:
		return &filter{exec.NewRowFilter(n.Cond)}, nil
	case plan.Project:
		return stateless(func(b *exec.Batch) ([]*exec.Batch, error) { return exec.Project(n.Exprs, []*exec.Batch{b}) }), nil
	case plan.Join:
		jo := newTypedJoin(n, inputs[0], exec.NewJoin(shared, n.LeftKey, n.RightKey, inputs[1]), inputs[1])
		jo.id, jo.table = o.ID, shared
		return jo, nil
	case plan.SemiJoin:
		return newSemiJoin(inputs[0], exec.NewKeySet(shared), n.LeftKey), nil
	case plan.Sort:
		return &buffered{ins: make([][]*exec.Batch, 1), cols: inputs, done: func(in [][]*exec.Batch) ([]*exec.Batch, error) {
			return exec.Sort(n, in[0]), nil
		}}, nil
	case physical.Sink:
		return &Sink{buffered{ins: make([][]*exec.Batch, 1), cols: inputs}}, nil
	case plan.Aggregate:
		return newAggregate(o.ID, shared, inputs[0], n.Keys, nil, func(t *exec.KeyTable) *exec.Aggregation { return exec.NewAggregation(t, n.Keys, n.Aggs) }), nil
	case physical.PartialAggregate:
		aggs := exec.PartialAggs(n.Aggs)
		return newAggregate(o.ID, shared, inputs[0], n.Keys, nil, func(t *exec.KeyTable) *exec.Aggregation { return exec.NewPartialAggregation(t, n.Keys, aggs) }), nil
	case physical.FinalAggregate:
		aggs, post := exec.MergeAggs(n)
		return newAggregate(o.ID, shared, inputs[0], n.Keys, post, func(t *exec.KeyTable) *exec.Aggregation { return exec.NewAggregation(t, n.Keys, aggs) }), nil
	case plan.Distinct, physical.PartialDistinct:
		return &distinct{d: exec.NewDistinct(shared), cols: len(n.Output)}, nil
	case plan.Limit:
		return &limit{n: n.N, skip: n.Offset}, nil
	case plan.RowNumber:
		return &rowNumber{col: n.Col, next: 1 + n.Offset}, nil
	case plan.UnionAll:
		return unionAll{}, nil
	case plan.Window:
		return newWindow(n, inputs), nil // window.go
	}
	return nil, fmt.Errorf("operator #%d: unknown kind %q", o.ID, o.Kind)
}

// InputColumns returns the columns of o's inputs: a chained operator's
// output, or the columns a channel's route carries to it.
func InputColumns(p *physical.Plan, o *physical.Op) ([][]plan.Column, error) {
	var out [][]plan.Column
	for _, in := range o.Inputs {
		if in.Channel == "" {
			if in.Op < 0 || in.Op >= len(p.Ops) {
				return nil, fmt.Errorf("operator #%d reads #%d of %d", o.ID, in.Op, len(p.Ops))
			}
			out = append(out, p.Ops[in.Op].Output())
			continue
		}
		ch := p.Channel(in.Channel)
		if ch == nil || in.Route < 0 || in.Route >= len(ch.Routes) {
			return nil, fmt.Errorf("operator #%d reads route %d of channel %q, which is not there", o.ID, in.Route, in.Channel)
		}
		var cols []plan.Column
		for _, c := range ch.Routes[in.Route].Cols {
			cols = append(cols, ch.Columns[c])
		}
		out = append(out, cols)
	}
	if o.Kind == plan.Scan {
		out = [][]plan.Column{nil}
	}
	return out, nil
}

// replicasOf is the number of instances of the plan's task named task.
func replicasOf(p *physical.Plan, task string) (int, error) {
	switch task {
	case p.Gateway.Name:
		return p.Gateway.Replicas, nil
	case p.Shard.Name:
		return p.Shard.Replicas, nil
	}
	return 0, fmt.Errorf("no task %q", task)
}

// filter keeps the rows where its condition holds, gathering the
// columns its readers read (readCols).
type filter struct{ f *exec.RowFilter }

func (f *filter) Apply(_ int, b *exec.Batch, out Out) error {
	kept, err := f.f.Apply(b)
	if err != nil {
		return err
	}
	if kept != nil && kept.N > 0 {
		out(kept)
	}
	return nil
}

func (*filter) Finish(Out) error { return nil }

// stateless is an operator of each batch on its own (a projection).
type stateless func(*exec.Batch) ([]*exec.Batch, error)

func (f stateless) Apply(_ int, b *exec.Batch, out Out) error {
	bs, err := f(b)
	if err != nil {
		return err
	}
	emit(bs, out)
	return nil
}

func (stateless) Finish(Out) error { return nil }

func emit(bs []*exec.Batch, out Out) {
	for _, b := range bs {
		if b.N > 0 {
			out(b)
		}
	}
}

// scan reads its table's text columns as the kinds its node gives them:
// a batch of them (Apply), or a record's fields at a time (row, rowTo),
// held until flush.
type scan struct {
	n     *plan.Node
	idx   []int
	stats []exec.ColumnStats
	// held are the rows read since the last flush, per part (rowTo);
	// rows and bytes, how many in all and the bytes of their fields.
	held        []heldRows
	rows, bytes int
}

// heldRows are a part's rows read since the last flush, as columns
// (none yet: nil). last is the rows of its last batch, and text the
// bytes of each of its text columns' values, which the next one's make
// room for (and a little more: the parts' batches are not all of one
// size). spent is the columns of its last batch once read (spend): the
// next one's numbers and booleans are built in their memory.
type heldRows struct {
	cols  []*exec.VecBuilder
	rows  int
	last  int
	text  []int
	spent []*exec.Vec
}

func newScan(n *plan.Node, table []string) (*scan, error) {
	idx, err := exec.ScanIndex(n, table)
	if err != nil {
		return nil, err
	}
	s := &scan{n: n, idx: idx}
	for _, c := range n.Output {
		s.stats = append(s.stats, exec.ColumnStats{Table: n.Table, Column: c.Name, Type: c.Type, Read: c.Read})
	}
	return s, nil
}

func (s *scan) Apply(_ int, b *exec.Batch, out Out) error {
	nb, err := s.read(b)
	if err == nil && nb.N > 0 {
		out(nb)
	}
	return err
}

// read is b, the text of the table's columns, as the scan's columns.
func (s *scan) read(b *exec.Batch) (*exec.Batch, error) {
	if slices.ContainsFunc(s.idx, func(j int) bool { return j >= len(b.Cols) }) {
		return nil, fmt.Errorf("scan of %s: a batch of %d columns", s.n.Table, len(b.Cols))
	}
	nb := &exec.Batch{N: b.N, Cols: make([]*exec.Vec, len(s.idx))}
	for i, j := range s.idx {
		nb.Cols[i] = exec.ReadAs(b.Cols[j], s.n.Output[i], &s.stats[i])
	}
	return nb, nil
}

func (*scan) Finish(Out) error { return nil }

// row reads a record's fields (the table's, in its header's order) into
// the scan's columns, as Apply reads a batch of them.
func (s *scan) row(fields [][]byte) { s.rowTo(0, fields) }

// rowTo is row into part `part` of the rows held, which take and flush
// make a batch of their own.
func (s *scan) rowTo(part int, fields [][]byte) {
	if part >= len(s.held) {
		s.held = append(s.held, make([]heldRows, part+1-len(s.held))...)
	}
	h := &s.held[part]
	if h.cols == nil {
		h.cols = make([]*exec.VecBuilder, len(s.idx))
		h.text = slices.Grow(h.text, len(s.idx))[:len(s.idx)]
		for i := range h.cols {
			var spent *exec.Vec
			if h.spent != nil {
				spent = h.spent[i]
			}
			h.cols[i] = exec.NewVecBuilderIn(s.n.Output[i], max(h.last+h.last/16, exec.BatchRows), spent)
			h.cols[i].Reserve(h.text[i] + h.text[i]/8)
		}
		h.spent = nil
	}
	for i, j := range s.idx {
		f := fields[j]
		h.cols[i].Read(f, &s.stats[i])
		s.bytes += len(f)
	}
	h.rows++
	s.rows++
}

// take returns the rows of a part held since the last flush as one
// batch, and lets them go; nil when there are none.
func (s *scan) take(part int) *exec.Batch {
	if part >= len(s.held) || s.held[part].rows == 0 {
		return nil
	}
	h := &s.held[part]
	b := &exec.Batch{N: h.rows, Cols: make([]*exec.Vec, len(h.cols))}
	for i, c := range h.cols {
		b.Cols[i] = c.Vec()
		h.text[i] = len(b.Cols[i].Data)
	}
	s.rows -= h.rows
	if s.rows == 0 {
		s.bytes = 0
	}
	h.cols, h.last, h.rows = nil, h.rows, 0
	return b
}

// spend tells the scan that b, the batch take made of a part's rows, has
// been read and is read no more: the part's next batch is built in the
// memory of its numbers and booleans. Only a Source's scan is told so:
// what reads its batches is the exchanges of its table alone, which write
// the rows they route onto the wire, copying numbers and booleans
// (wire.ToRows), and keep nothing.
func (s *scan) spend(part int, b *exec.Batch) { s.held[part].spent = b.Cols }

// flush gives emit the rows held since the last flush, a batch per part,
// and spends each once emit has returned (what emit gives it to reads a
// batch then, and keeps nothing of it); it stops at emit's first error.
func (s *scan) flush(emit func(part int, b *exec.Batch) error) error {
	for part := range s.held {
		if b := s.take(part); b != nil {
			if err := emit(part, b); err != nil {
				return err
			}
			s.spend(part, b)
		}
	}
	return nil
}

// Stats are the scan's counts of the values that read as NULL, per column.
func (s *scan) Stats() []exec.ColumnStats { return s.stats }

// buffered holds every input row until Finish, then computes done over
// them (the join, the semi-join, sort; the sink keeps them).
type buffered struct {
	ins  [][]*exec.Batch
	cols [][]plan.Column
	done func([][]*exec.Batch) ([]*exec.Batch, error)
	// limit, when above 0, is about the most bytes of values it holds:
	// past it the rows that come are let go and over is set, so that its
	// task reports the job's answer too large rather than run out of
	// memory (Task.Overflowed). held is what it holds.
	limit, held int64
	over        bool
	// top, when above 0, is the most rows of a sort's output that are
	// read (the N and OFFSET of the LIMIT after it: keepTop): past twice
	// that many held, and topRows, the sort keeps its first top rows
	// alone (done, then the first top), so that it holds about that many
	// whatever its input.
	top int64
}

// topRows is the fewest rows a sort with a top cuts down to it: the cut
// sorts what it holds, so it is made no more often than every so many
// rows.
const topRows = 1 << 12

// keepTop makes the sort keep only its first n rows (its LIMIT's, with
// the OFFSET), its output the same: its order is total (exec.Sort: its
// keys, then every column), so the first n rows of all of them are the
// first n of any first n's and the rows that come after.
func (o *buffered) keepTop(n int64) { o.top = n }

// cut keeps the first top rows of those held.
func (o *buffered) cut() error {
	bs, err := o.done(o.ins)
	if err != nil {
		return err
	}
	o.ins[0], o.held = exec.Limit(o.top, bs), 0
	for _, b := range o.ins[0] {
		o.held += int64(batchBytes(b))
	}
	return nil
}

// heldRows is the rows held of input 0.
func (o *buffered) heldRows() int64 {
	var n int64
	for _, b := range o.ins[0] {
		n += int64(b.N)
	}
	return n
}

// limitHeld sets the most bytes the operator holds (heldLimiter).
func (o *buffered) limitHeld(n int64) { o.limit = n }

// heldState and restoreHeld are what a task's snapshot keeps of it. What
// it holds is counted again as its rows are restored (Restore): the held
// bytes written are not added to them, which counted its rows twice
// after a restart.
func (o *buffered) heldState() (int64, bool)       { return o.held, o.over }
func (o *buffered) restoreHeld(_ int64, over bool) { o.over = over }

// heldLimiter is an operator that holds rows until its inputs end, and
// can be told the most it may hold.
type heldLimiter interface {
	limitHeld(n int64)
	heldState() (held int64, over bool)
	restoreHeld(held int64, over bool)
}

func (o *buffered) Apply(input int, b *exec.Batch, _ Out) error {
	if input < 0 || input >= len(o.ins) {
		return fmt.Errorf("input %d of %d", input, len(o.ins))
	}
	if len(b.Cols) != len(o.cols[input]) {
		return fmt.Errorf("input %d: a batch of %d columns, want %d", input, len(b.Cols), len(o.cols[input]))
	}
	if o.over {
		return nil
	}
	o.held += int64(batchBytes(b))
	o.ins[input] = append(o.ins[input], b)
	if o.top > 0 && o.heldRows() > max(2*o.top, topRows) {
		if err := o.cut(); err != nil {
			return err
		}
	}
	if o.limit > 0 && o.held > o.limit {
		// What comes from now on is let go; what it holds goes too.
		o.over = true
		clear(o.ins)
	}
	return nil
}

// stateBytes is what it holds (holder).
func (o *buffered) stateBytes() int64 { return o.held }

func (o *buffered) Finish(out Out) error {
	bs, err := o.done(o.ins)
	if err != nil {
		return err
	}
	o.ins, o.held = nil, 0
	emit(bs, out)
	return nil
}

// left is the buffer of a join's or a semi-join's left rows, held until
// its right input has ended.
func left(cols []plan.Column) buffered {
	return buffered{ins: make([][]*exec.Batch, 1), cols: [][]plan.Column{cols}}
}

// probing is what a semi-join and a join share: left rows are held
// until the right input has ended (the whole set, every right row), then
// probed, and those that come after it are probed as they come. probe
// is given the slots of the rows' keys, or nil (held rows, whose keys
// may have come into the table since: looked up then), and emits what
// they make.
type probing struct {
	left      buffered
	rightDone bool
	probe     func(b *exec.Batch, slots []int32, out Out) error
}

func (p *probing) applyLeft(b *exec.Batch, slots []int32, out Out) error {
	if !p.rightDone {
		return p.left.Apply(0, b, out)
	}
	return p.probe(b, slots, out)
}

// EndInput probes the held left rows when the right input ends.
func (p *probing) EndInput(input int, out Out) error {
	if input != 1 || p.rightDone {
		return nil
	}
	p.rightDone = true
	held := p.left.ins[0]
	p.left.ins[0], p.left.held = nil, 0
	for _, b := range held {
		if err := p.applyLeft(b, nil, out); err != nil {
			return err
		}
	}
	return nil
}

// Finish probes what is held: a right input that never ended (a chain
// finishing what is left) ends here.
func (p *probing) Finish(out Out) error { return p.EndInput(1, out) }

// semiJoin keeps its left rows whose key is among its right input's
// values (the set, in the shared table), each once.
type semiJoin struct {
	probing
	set *exec.KeySet
	key *plan.Expr
}

func newSemiJoin(cols []plan.Column, set *exec.KeySet, key *plan.Expr) *semiJoin {
	s := &semiJoin{set: set, key: key}
	s.probing = probing{left: left(cols), probe: func(b *exec.Batch, slots []int32, out Out) error {
		kept, err := set.KeepSlots(key, b, slots)
		if kept != nil {
			out(kept)
		}
		return err
	}}
	return s
}

// stateBytes: the left rows held, and the set's view of its table.
func (s *semiJoin) stateBytes() int64 { return s.left.held + s.set.Bytes() }

func (s *semiJoin) Apply(input int, b *exec.Batch, out Out) error {
	return s.applySlots(input, b, nil, out)
}

// keyOf: the left key, looked up; the right input's column 0, added;
// a NULL matches nothing.
func (s *semiJoin) keyOf(input int) (keyUse, bool) {
	if input == 0 {
		return colKey(s.key, exec.FindKey, exec.SkipKey)
	}
	return keyUse{col: 0, mode: exec.AddKey, null: exec.SkipKey}, true
}

func (s *semiJoin) applySlots(input int, b *exec.Batch, slots []int32, out Out) error {
	switch {
	case input == 0:
		return s.applyLeft(b, slots, out)
	case len(b.Cols) < 1 || s.rightDone:
		return fmt.Errorf("semi-join: a right batch of no column, or after the right input's end")
	}
	s.set.AddSlots(b, slots)
	return nil
}

// join is the inner equi-join: the right rows by key (in the shared
// table), probed with the left rows. What it makes is not bounded by
// what it is given (a key of n left and m right rows makes n*m rows):
// it makes it in chunks of at most chunkRows rows, each handed on before
// the next is made, and stops at its task's budget (meter, nil: none),
// where says which join it is.
type join struct {
	probing
	j                 *exec.Join
	right             []plan.Column
	leftKey, rightKey *plan.Expr
	meter             *meter
	where             string
	keepsRight        bool // an outer join's: Finish emits the right rows no left row matched (join.go)
	// id is the plan operator's, table the key table j is in, typ the
	// join's type: a spilling join's (spilling.go), which makes joins of
	// its own; gr is its spilled state (nil: none).
	id    int
	table *exec.KeyTable
	typ   plan.JoinType
	gr    *grace
	// read is which of its output columns its readers read (readCols;
	// nil: all), what every exec.Join it makes is told.
	read []bool
}

// setRead tells the join, and the exec.Joins it makes, which of its
// output columns are read.
func (j *join) setRead(read []bool) {
	j.read = read
	j.j.SetRead(read)
}

// execJoin is a new exec.Join of j's in table t: of its keys, right
// columns, type and reads.
func (j *join) execJoin(t *exec.KeyTable) *exec.Join {
	x := exec.NewJoin(t, j.leftKey, j.rightKey, j.right)
	x.SetType(j.typ, j.left.cols[0])
	x.SetRead(j.read)
	return x
}

func newJoin(cols []plan.Column, j *exec.Join, right []plan.Column, leftKey, rightKey *plan.Expr) *join {
	jo := &join{j: j, right: right, leftKey: leftKey, rightKey: rightKey}
	jo.probing = probing{left: left(cols), probe: jo.probe}
	return jo
}

// probe emits the rows b's make, chunk by chunk, each counted against
// the budget first; a bound passed (by this join, or by what a chunk
// made the task send) stops it.
func (j *join) probe(b *exec.Batch, slots []int32, out Out) error {
	return j.j.ProbeChunks(b, slots, chunkRows, j.counted(out))
}

// counted hands a chunk the join made to out, counted against the
// budget first; a bound passed stops the join. After it, what the task
// holds is checked as after a step (meter.between), so that the
// operators the chunks go to spill as they grow.
func (j *join) counted(out Out) func(*exec.Batch) error {
	return func(nb *exec.Batch) error {
		if err := j.meter.joined(nb.N, j.where); err != nil {
			return err
		}
		out(nb)
		if j.meter == nil {
			return nil
		}
		if err := j.meter.err(); err != nil {
			return err
		}
		return j.meter.emitted(nb.N)
	}
}

// stateBytes: the left rows held, and the right rows.
func (j *join) stateBytes() int64 { return j.left.held + j.j.Bytes() }

func (j *join) Apply(input int, b *exec.Batch, out Out) error {
	return j.applySlots(input, b, nil, out)
}

// keyOf: the left key, looked up; the right key, added; a NULL matches
// nothing.
func (j *join) keyOf(input int) (keyUse, bool) {
	if input == 0 {
		return colKey(j.leftKey, exec.FindKey, exec.SkipKey)
	}
	return colKey(j.rightKey, exec.AddKey, exec.SkipKey)
}

func (j *join) applySlots(input int, b *exec.Batch, slots []int32, out Out) error {
	if input != 0 && (len(b.Cols) != len(j.right) || j.rightDone) {
		return fmt.Errorf("join: a right batch of %d columns (want %d), or after the right input's end", len(b.Cols), len(j.right))
	}
	if j.gr != nil { // its rows of spilled partitions to disk (spilling.go)
		var err error
		if b, slots, err = j.spillRows(input != 0, b, slots); b == nil {
			return err
		}
	}
	if input == 0 {
		return j.applyLeft(b, slots, out)
	}
	return j.j.AddRightSlots(b, slots)
}

// Sink gathers a query's rows at the gateway and formats them as its
// NAME.csv, exactly as exec.Result.CSV does.
type Sink struct{ buffered }

// Finish emits nothing: the rows stay for CSV.
func (s *Sink) Finish(Out) error { return nil }

// CSV is the output file: the header of the input's column names, then
// every row, in the order they came.
func (s *Sink) CSV() []byte {
	r := &exec.Result{Columns: s.cols[0], Rows: exec.Concat(s.cols[0], s.ins[0])}
	return r.CSV()
}

// aggregate is a complete, partial or final aggregate: the groups, and
// for a final one the projection of the merged partials onto its output.
// Past its task's budget it moves groups to disk (aggspill.go): newAgg
// makes an empty Aggregation of its keys and aggregates, cols are its
// input's columns, and sp its spilled groups (nil: none). Under a HAVING
// that bounds a count it drops its finished groups (aggfinish.go; fin,
// nil: it cannot).
type aggregate struct {
	agg    *exec.Aggregation
	keys   []*plan.Expr
	post   []*plan.Expr
	newAgg func(*exec.KeyTable) *exec.Aggregation
	cols   []plan.Column
	id     int
	meter  *meter
	where  string
	sp     *aggSpill
	fin    *aggFinish
	// alone: no other operator keys in the aggregate's table, so that a
	// spill lets its spilled groups' keys go too (aggspill.go).
	alone bool
}

// newAggregate is the aggregate #id of its input's columns cols, keyed in
// table, whose groups newAgg makes.
func newAggregate(id int, table *exec.KeyTable, cols []plan.Column, keys, post []*plan.Expr, newAgg func(*exec.KeyTable) *exec.Aggregation) *aggregate {
	return &aggregate{agg: newAgg(table), keys: keys, post: post, newAgg: newAgg, cols: cols, id: id}
}

func (a *aggregate) Apply(_ int, b *exec.Batch, _ Out) error { return a.applySlots(0, b, nil, nil) }

// stateBytes: the groups' keys and state.
func (a *aggregate) stateBytes() int64 { return a.agg.Bytes() + a.finished().Bytes() }

// keyOf: a key of one column, added, NULL a group of its own.
func (a *aggregate) keyOf(int) (keyUse, bool) {
	if len(a.keys) != 1 {
		return keyUse{}, false
	}
	use, ok := colKey(a.keys[0], exec.AddKey, exec.AddKey)
	use.find = a.fin != nil
	return use, ok
}

func (a *aggregate) applySlots(_ int, b *exec.Batch, slots []int32, _ Out) error {
	if a.fin != nil { // the rows of finished groups go unread
		var err error
		if b, slots, err = a.live(b, slots); err != nil || b.N == 0 {
			return err
		}
	}
	if a.sp != nil { // its rows of spilled groups to disk (aggspill.go)
		var err error
		if b, slots, err = divertRows(&a.sp.out, a.sp.rows, b, slots, a.keys...); b == nil {
			return spillErr(err, a.meter, a.where)
		}
	}
	if err := a.agg.AddSlots(b, slots); err != nil || a.fin == nil {
		return err
	}
	return a.dropFinished()
}

// finishRows is the most groups of an aggregate's result that Finish
// makes and emits as one batch: the result of 1.5M groups, and what the
// operators after it make of it (a HAVING's filter: a vector per
// comparison), is never held whole.
const finishRows = 1 << 16

// Finish emits the groups, finishRows at a time; then those it moved to
// disk, partition by partition (aggspill.go).
func (a *aggregate) Finish(out Out) error {
	if err := a.emit(a.agg, out); err != nil {
		return err
	}
	return a.finishSpilled(out)
}

// emit emits the result of agg, one of the aggregate's (its groups, or a
// spilled partition's), finishRows groups at a time.
func (a *aggregate) emit(agg *exec.Aggregation, out Out) error {
	n := agg.Groups()
	for from := 0; from < n; from += finishRows {
		res := []*exec.Batch{agg.ResultRange(from, min(from+finishRows, n))}
		if a.post != nil {
			var err error
			if res, err = exec.Project(a.post, res); err != nil {
				return err
			}
		}
		emit(res, out)
	}
	return nil
}

// distinct passes each row the first time it is seen.
type distinct struct {
	d    *exec.Distinct
	cols int
}

func (d *distinct) Apply(_ int, b *exec.Batch, out Out) error {
	return d.applySlots(0, b, nil, out)
}

// keyOf: a row of one column is its key, added, NULL a row of its own.
func (d *distinct) keyOf(int) (keyUse, bool) {
	if d.cols != 1 {
		return keyUse{}, false
	}
	return keyUse{col: 0, mode: exec.AddKey, null: exec.AddKey}, true
}

func (d *distinct) applySlots(_ int, b *exec.Batch, slots []int32, out Out) error {
	if len(b.Cols) < d.cols {
		return fmt.Errorf("distinct of %d columns: a batch of %d", d.cols, len(b.Cols))
	}
	if nb := d.d.AddSlots(b, d.cols, slots); nb != nil {
		out(nb)
	}
	return nil
}

func (*distinct) Finish(Out) error { return nil }

// stateBytes: its view of its table.
func (d *distinct) stateBytes() int64 { return d.d.Bytes() }

// limit passes the first n rows.
// limit passes its rows but the first skip, then n of them (n -1: all).
type limit struct{ n, skip int64 }

func (l *limit) Apply(_ int, b *exec.Batch, out Out) error {
	bs := exec.Skip(l.skip, []*exec.Batch{b})
	l.skip -= min(l.skip, int64(b.N))
	if l.n < 0 {
		emit(bs, out)
		return nil
	}
	bs = exec.Limit(l.n, bs)
	for _, x := range bs {
		l.n -= int64(x.N)
	}
	emit(bs, out)
	return nil
}

func (*limit) Finish(Out) error { return nil }

// rowNumber numbers the rows 1, 2, ... in the order they come.
type rowNumber struct {
	col  int
	next int64
}

func (r *rowNumber) Apply(_ int, b *exec.Batch, out Out) error {
	nb, err := exec.NumberRows(r.col, r.next, b)
	if err != nil {
		return err
	}
	r.next += int64(b.N)
	emit([]*exec.Batch{nb}, out)
	return nil
}

func (*rowNumber) Finish(Out) error { return nil }
