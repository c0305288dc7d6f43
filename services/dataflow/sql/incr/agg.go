package incr

import (
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// aggOp is GROUP BY over an input that only grows (regroupOp is the
// other's): an exec.Aggregation folds the epoch's rows in, and each group
// they touch changes from its row before (-1) to its row after (+1). Its
// work is the epoch's rows and the groups they touch. With the HAVING
// above it (the Filter over it, fused), it remembers which groups' rows
// pass it, and makes a group's row before only when it did: q2's groups
// mostly never pass.
//
// It folds the epoch's rows in a batch at a time, as they arrive
// (fold), and emits the epoch's change at its end (flush): all it
// remembers of the epoch is its touched groups and, the first time each
// is touched, its row before (when it was shown), so its memory follows
// its groups and the epoch's changes, not the epoch's rows. Step is a
// fold of each batch given, then the flush.
type aggOp struct {
	n      *plan.Node
	agg    *exec.Aggregation
	having *exec.Conds // nil: none
	shown  []bool      // with having: per group, its row passes
	mark   []bool      // per group: touched in the open epoch (all false between)
	first  bool        // no epoch yet: a keyless aggregate's one row is new
	keys   *exec.KeyTable
	ep     aggEpoch // the open epoch's
	fin    *finish  // with a HAVING that bounds a count: its finished groups (finish.go); nil: none can be
}

// aggEpoch is what an aggregate remembers of the epoch it is folding:
// what its change at the epoch's end needs and the groups no longer say.
type aggEpoch struct {
	open bool // rows folded (or a keyless first epoch begun) since the last flush
	// before is the groups there were before the epoch (0 for a keyless
	// aggregate's first: its one row over no rows is new).
	before int
	ids    []int32       // the groups below before the epoch touched, once each
	was    []*exec.Batch // the rows before of those of ids that were shown, in ids' order
	// checked is where the groups new in the epoch that dropNew has
	// looked at end (below before: none yet). Not in a snapshot: a
	// restored epoch looks at them again, which finds what it found.
	checked int
}

func newAgg(n *plan.Node, having *plan.Expr, keys *exec.KeyTable) *aggOp {
	own := keys == nil
	if own {
		keys = exec.NewKeyTable()
	}
	o := newAggOf(n, exec.NewAggregation(keys, n.Keys, n.Aggs), keys, having)
	o.fin = newFinish(n, having, keys, own)
	return o
}

// newAggOf is newAgg of the aggregation agg (a partial one, on a shard).
func newAggOf(n *plan.Node, agg *exec.Aggregation, keys *exec.KeyTable, having *plan.Expr) *aggOp {
	o := &aggOp{n: n, agg: agg, keys: keys, first: true}
	if having != nil {
		o.having = exec.NewConds([]*plan.Expr{having})
	}
	return o
}

func (o *aggOp) step(in []zset) (zset, error) {
	for _, b := range in[0] {
		if _, err := o.fold(0, b); err != nil {
			return nil, err
		}
	}
	return o.flush()
}

func (o *aggOp) folds(int) bool { return true }

func (o *aggOp) folding() bool { return o.ep.open }

// begin opens an epoch: the groups there are before it, and a keyless
// aggregate's one row, which every epoch after its first touches.
func (o *aggOp) begin() {
	o.ep = aggEpoch{open: true, before: o.agg.Groups()}
	if len(o.n.Keys) != 0 {
		return
	}
	if o.first {
		o.ep.before = 0 // the one row over no rows is new
		return
	}
	o.touch([]int32{0})
}

// touch notes the groups ids (below before, not yet touched) as touched,
// and keeps the rows before of those that were shown.
func (o *aggOp) touch(ids []int32) {
	var was []int32
	for _, g := range ids {
		o.mark[g] = true
		o.ep.ids = append(o.ep.ids, g)
		if o.having == nil || o.shown[g] {
			was = append(was, g)
		}
	}
	if len(was) > 0 {
		o.ep.was = append(o.ep.was, o.agg.ResultRows(was))
	}
}

// fold adds a batch of the epoch's rows to the groups. It emits nothing:
// a group's row after is the epoch's end's.
func (o *aggOp) fold(_ int, b *exec.Batch) (zset, error) { return o.foldSlots(b, nil) }

// foldSlots is fold given sl, the slots of b's rows' keys (nil: looked
// up here).
func (o *aggOp) foldSlots(b *exec.Batch, sl []int32) (zset, error) {
	for _, w := range weights(b) {
		if w != 1 {
			return nil, fmt.Errorf("aggregate: its input, said to only grow, retracted a row")
		}
	}
	if !o.ep.open {
		o.begin()
	}
	if sl == nil {
		var err error
		if sl, err = o.agg.Slots(b); err != nil {
			return nil, fmt.Errorf("aggregate: %w", err)
		}
	}
	if o.fin != nil {
		if b, sl = o.fin.Live(b, sl); b.N == 0 {
			return nil, nil // rows of finished groups alone
		}
	}
	var fresh []int32 // groups of before the epoch touched first by b
	for _, g := range o.agg.GroupsOf(sl) {
		if g >= 0 && int(g) < o.ep.before && !o.mark[g] {
			o.mark[g] = true // touch marks it again, with the others
			fresh = append(fresh, g)
		}
	}
	if len(fresh) > 0 {
		o.touch(fresh)
	}
	if err := o.agg.AddSlots(b, sl); err != nil {
		return nil, fmt.Errorf("aggregate: %w", err)
	}
	if err := o.dropNew(); err != nil {
		return nil, err
	}
	return nil, nil
}

// dropNew drops, mid-epoch, the state of groups new in the epoch that
// are finished already (finish.go: q2's match with a third player row,
// or two and failing), once newGroupsLag more groups came after them:
// a group new in the epoch has no row before, so dropping it changes no
// version. An epoch of millions of new groups (a first append of the
// whole dataset) held every one's accumulators to its end, 290 MB of
// q2's at the full dataset in one process, where most are finished long
// before it; an epoch of fewer new groups than newGroupsLag (one of 100
// appends) never gets here. Each group is looked at once; flush looks
// at those left.
func (o *aggOp) dropNew() error {
	after := o.agg.Groups()
	from := max(o.ep.checked, o.ep.before)
	to := after - newGroupsLag
	if o.fin == nil || to-from < newGroupsLag { // a finish is of a HAVING
		return nil
	}
	o.fin.Grow(after)
	err := o.eachRange(from, to, func(now *exec.Batch, groups []int32) error {
		_, pass, err := o.passing(now)
		if err == nil {
			o.fin.Note(now, groups, pass)
		}
		return err
	})
	if err != nil {
		return err
	}
	o.ep.checked = to
	agg, keep := o.fin.dropFrom(o.agg, o.ep.before)
	if keep == nil {
		return nil
	}
	// The groups below before keep their numbers: the epoch's touched
	// ones, their rows before, the flags stand.
	o.agg = agg
	o.ep.checked, _ = slices.BinarySearch(keep, int32(to))
	return nil
}

// newGroupsLag is how many groups new in an epoch come after one before
// dropNew looks at it, and how many it looks at, at least, at a time.
var newGroupsLag = 1 << 16

// flush ends the epoch: the rows before of its touched groups that were
// shown (-1), then the rows after (+1) of its touched groups and of its
// new ones (those that pass the HAVING).
func (o *aggOp) flush() (zset, error) {
	if !o.ep.open {
		if !(o.first && len(o.n.Keys) == 0) {
			o.first = false
			return nil, nil
		}
		o.begin() // a keyless aggregate's first epoch has its row, over no rows too
	}
	ep := o.ep
	o.ep, o.first = aggEpoch{}, false
	for _, g := range ep.ids {
		o.mark[g] = false
	}
	var out zset
	// A group whose row is the same after is a -1 and a +1 of one row,
	// which the version's change adds up to nothing.
	for _, b := range ep.was {
		out = append(out, weighted(b, -1))
	}
	after := o.agg.Groups()
	o.mark = append(o.mark, make([]bool, after-len(o.mark))...)
	if o.having != nil {
		o.shown = append(o.shown, make([]bool, after-len(o.shown))...)
		if o.fin != nil {
			o.fin.Grow(after)
		}
	}
	// The rows after of groups (now), those that pass the HAVING kept.
	emit := func(now *exec.Batch, groups []int32) error {
		if o.having != nil {
			sel, pass, err := o.passing(now)
			if err != nil {
				return err
			}
			for i, g := range groups {
				o.shown[g] = pass[i]
			}
			if o.fin != nil {
				o.fin.Note(now, groups, pass)
			}
			now = now.Rows(sel)
		}
		if now.N > 0 {
			out = append(out, weighted(now, 1))
		}
		return nil
	}
	// The touched groups', then the new groups', flushChunk groups at a
	// time: an epoch can touch every group (a first epoch of the whole
	// dataset, 3.1M of q2's), whose rows made at once held 250 MB more
	// than the state at the epoch's end, where most fail the HAVING.
	for start := 0; start < len(ep.ids); start += flushChunk {
		ids := ep.ids[start:min(start+flushChunk, len(ep.ids))]
		if err := emit(o.agg.ResultRows(ids), ids); err != nil {
			return nil, err
		}
	}
	if err := o.eachRange(ep.before, after, emit); err != nil {
		return nil, err
	}
	if o.fin != nil {
		o.dropFinished()
	}
	return out, nil
}

// flushChunk is how many groups' rows flush and dropNew make at a time.
var flushChunk = 1 << 16

// eachRange hands fn the rows after of the groups numbered lo to hi-1
// and their numbers, flushChunk groups at a time.
func (o *aggOp) eachRange(lo, hi int, fn func(now *exec.Batch, groups []int32) error) error {
	groups := make([]int32, 0, min(max(hi-lo, 0), flushChunk))
	for from := lo; from < hi; from += flushChunk {
		to := min(from+flushChunk, hi)
		groups = groups[:0]
		for g := from; g < to; g++ {
			groups = append(groups, int32(g))
		}
		if err := fn(o.agg.ResultRange(from, to), groups); err != nil {
			return err
		}
	}
	return nil
}

// passing is which of the groups' rows now pass the HAVING: their
// indices, and a flag per row.
func (o *aggOp) passing(now *exec.Batch) ([]int32, []bool, error) {
	sel, pass, err := exec.PassFlags(o.having, now)
	if err != nil {
		return nil, nil, fmt.Errorf("having: %w", err)
	}
	return sel, pass, nil
}

// dropFinished drops the finished groups' state when there are enough
// of them (finish.drop), between epochs: the groups kept are numbered
// again, their flags with them.
func (o *aggOp) dropFinished() {
	agg, keep := o.fin.drop(o.agg)
	if keep == nil {
		return
	}
	shown := make([]bool, len(keep))
	for n, g := range keep {
		shown[n] = o.shown[g]
	}
	o.agg, o.shown, o.mark = agg, shown, make([]bool, len(keep))
}

// resultColumns are the columns of the aggregation's rows (ResultRows'):
// a partial aggregation's are its partial states'.
func (o *aggOp) resultColumns() []plan.Column {
	var cols []plan.Column
	for _, v := range o.agg.ResultRows(nil).Cols {
		cols = append(cols, plan.Column{Type: v.Type})
	}
	return cols
}

// write writes the open epoch's state (an Engine's snapshot, between
// epochs, has none; an epoch task's, mid-epoch, may): whether one is
// open, the groups before it, those it touched, the rows before of those
// shown (of the aggregation's columns cols).
func (ep *aggEpoch) write(w *snapcodec.Writer, cols []plan.Column) {
	w.Bool(ep.open)
	if !ep.open {
		return
	}
	w.Uvarint(uint64(ep.before))
	w.Uvarint(uint64(len(ep.ids)))
	for _, g := range ep.ids {
		w.Uvarint(uint64(g))
	}
	w.Bytes(exec.AppendRowsState(nil, exec.Concat(cols, ep.was)))
}

// read reads write's state into o's open epoch, marking its touched
// groups; bytes that cannot be o's fail r.
func (ep *aggEpoch) read(r *snapcodec.Reader, o *aggOp) {
	*ep = aggEpoch{open: r.Bool()}
	if r.Err != nil || !ep.open {
		return
	}
	ep.before = int(r.Uvarint())
	n := r.Count(1)
	if r.Err != nil || ep.before > o.agg.Groups() || len(o.mark) < ep.before || n > ep.before {
		r.Fail(nil)
		return
	}
	ep.ids = make([]int32, n)
	for i := range ep.ids {
		g := r.Uvarint()
		if r.Err != nil || g >= uint64(ep.before) || o.mark[g] {
			r.Fail(nil)
			return
		}
		ep.ids[i] = int32(g)
		o.mark[g] = true
	}
	was := readRows(r, o.resultColumns())
	if r.Err != nil {
		return
	}
	if was.N > len(ep.ids) {
		r.Fail(nil)
		return
	}
	if was.N > 0 {
		ep.was = []*exec.Batch{was}
	}
}
