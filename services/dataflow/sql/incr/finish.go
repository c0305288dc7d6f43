package incr

import (
	"math/bits"
	"slices"

	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// Finished groups: over rows that only arrive, a group's counts only
// grow, so a HAVING conjunct that bounds a count from above (q2's
// COUNT(*) = 2) stops holding for good once the count passes the bound:
// the group's row never passes the HAVING again, and the aggregate need
// not keep its accumulators, only that its key is done (a bit per slot
// of the key table), so that the rows of the key that come later are
// dropped unread. A COUNT(*) at its bound whose row does not pass is
// done too: every row to come adds one to it. q2 keeps then, of its
// 3.1M groups of the full dataset, those whose row passes (90k) and the
// matches with one player row so far, where it kept every group's
// accumulators and a copy of its key.
//
// The answer is the same, byte for byte: a done group's row was not
// shown (no -1 to make of it) and would never be (no +1). Its state is
// dropped between epochs (aggOp.flush, exec.Aggregation.Keep) once the
// done groups outnumber the others (with some slack), so that the
// copying is paid once per group.

// countBound is a conjunct of a HAVING that bounds a count from above:
// it holds only while the count (a column of the aggregate's rows) is
// op k (op one of = < <=).
type countBound struct {
	col  int
	op   string
	k    value.Dec
	star bool // COUNT(*): every row adds one
}

// dead reports whether the conjunct is false at count c and at every
// count above it.
func (b countBound) dead(c value.Dec) bool {
	switch x := c.Cmp(b.k); b.op {
	case "<":
		return x >= 0
	default: // = <=
		return x > 0
	}
}

// countBounds is the conjuncts of having (over the rows of the
// aggregate n) that bound a count from above.
func countBounds(n *plan.Node, having *plan.Expr) []countBound {
	if having == nil || len(n.Keys) == 0 {
		return nil // a keyless aggregate's one row is kept: it has no key to be done
	}
	switch having.Kind {
	case plan.And:
		return append(countBounds(n, having.Args[0]), countBounds(n, having.Args[1])...)
	case plan.Cmp:
	default:
		return nil
	}
	l, r, op := having.Args[0], having.Args[1], having.Fn
	if l.Kind == plan.Const {
		l, r = r, l
		op = map[string]string{"=": "=", ">": "<", ">=": "<="}[op]
	}
	if op != "=" && op != "<" && op != "<=" || l.Kind != plan.ColRef || r.Kind != plan.Const || r.Null || r.Type != plan.Number {
		return nil
	}
	a := l.Col - len(n.Keys)
	if a < 0 || a >= len(n.Aggs) || n.Aggs[a].Func != plan.CountStar && n.Aggs[a].Func != plan.Count {
		return nil
	}
	k, ok := value.ReadNumber(r.Value)
	if !ok {
		return nil
	}
	return []countBound{{col: l.Col, op: op, k: k, star: n.Aggs[a].Func == plan.CountStar}}
}

// finish is an aggregate's finished groups: those whose state it still
// holds, and the keys of those it dropped.
type finish struct {
	bounds []countBound
	own    bool     // the key table is the aggregate's own: its snapshot writes it (the dropped keys are not the aggregation's)
	done   []uint64 // a bit per slot of the key table: its group was dropped
	over   []bool   // per group: finished, its state not dropped yet
	n      int      // the groups of over
}

// dropSlack is how many more finished groups than others an aggregate
// holds before it drops them: a few epochs of a small job drop none.
var dropSlack = 1 << 12

func newFinish(n *plan.Node, having *plan.Expr, own bool) *finish {
	bs := countBounds(n, having)
	if len(bs) == 0 {
		return nil
	}
	return &finish{bounds: bs, own: own}
}

// isDone reports whether slot s's group was dropped.
func (f *finish) isDone(s int32) bool {
	return int(s/64) < len(f.done) && f.done[s/64]&(1<<(s%64)) != 0
}

// setDone marks slot s's group dropped.
func (f *finish) setDone(s int32) {
	if w := int(s/64) + 1; w > len(f.done) {
		f.done = append(f.done, make([]uint64, w-len(f.done))...)
	}
	f.done[s/64] |= 1 << (s % 64)
}

// live is b's rows whose keys (their slots sl) are not done, and their
// slots: b and sl themselves when none is.
func (f *finish) live(b *exec.Batch, sl []int32) (*exec.Batch, []int32) {
	if len(f.done) == 0 {
		return b, sl
	}
	var rows, kept []int32
	for i, s := range sl {
		if f.isDone(s) {
			if rows == nil {
				rows = make([]int32, 0, len(sl))
				for j := range int32(i) {
					rows = append(rows, j)
				}
				kept = slices.Clone(sl[:i])
			}
			continue
		}
		if rows != nil {
			rows, kept = append(rows, int32(i)), append(kept, s)
		}
	}
	if rows == nil {
		return b, sl
	}
	return b.Rows(rows), kept
}

// note marks the groups of now's rows (groups, per row) that are
// finished: their row does not pass the HAVING (pass, per row) and no
// later row can make it.
func (f *finish) note(now *exec.Batch, groups []int32, pass []bool) {
	for i, g := range groups {
		if pass[i] || f.over[g] {
			continue
		}
		for _, b := range f.bounds {
			c := now.Cols[b.col].Nums[i]
			if b.dead(c) || b.star && b.dead(c.Add(value.Int(1))) {
				f.over[g] = true
				f.n++
				break
			}
		}
	}
}

// drop moves the finished groups out of agg (their keys done), when they
// outnumber the others by dropSlack, and returns the aggregation kept
// and the groups kept (in their new order: their old numbers), or agg
// and nil.
func (f *finish) drop(agg *exec.Aggregation) (*exec.Aggregation, []int32) {
	return f.dropFrom(agg, 0)
}

// dropFrom is drop of the groups numbered from on alone, counted among
// those: the groups below from keep their numbers, and their flags.
func (f *finish) dropFrom(agg *exec.Aggregation, from int) (*exec.Aggregation, []int32) {
	n := 0
	for _, over := range f.over[min(from, len(f.over)):] {
		if over {
			n++
		}
	}
	if n == 0 || n <= len(f.over)-from-n+dropSlack {
		return agg, nil
	}
	slots := agg.GroupSlots()
	keep := make([]int32, 0, len(f.over)-n)
	for g, over := range f.over {
		if over && g >= from {
			f.setDone(slots[g])
		} else {
			keep = append(keep, int32(g))
		}
	}
	was := f.over
	f.over, f.n = make([]bool, len(keep)), f.n-n
	for i, g := range keep {
		f.over[i] = was[g]
	}
	return agg.Keep(keep), keep
}

// grow makes over n groups long (flush does, before note: the groups
// an epoch adds have none until then).
func (f *finish) grow(n int) {
	if d := n - len(f.over); d > 0 {
		f.over = append(f.over, make([]bool, d)...)
	}
}

// bytes is about the memory of the done keys and the finished flags.
func (f *finish) bytes() int64 {
	if f == nil {
		return 0
	}
	return 8*int64(cap(f.done)) + int64(cap(f.over))
}

// doneSlots is the done slots, ascending.
func (f *finish) doneSlots() []int32 {
	var slots []int32
	for i, d := range f.done {
		for ; d != 0; d &= d - 1 {
			slots = append(slots, int32(i*64+bits.TrailingZeros64(d)))
		}
	}
	return slots
}

// write writes the done slots (ascending, as their gaps) and the groups
// finished.
func (f *finish) write(w *snapcodec.Writer) {
	slots := f.doneSlots()
	w.Uvarint(uint64(len(slots)))
	prev := int32(-1)
	for _, s := range slots {
		w.Uvarint(uint64(s - prev))
		prev = s
	}
	writeFlags(w, f.over)
}

// read reads write's state of an aggregate of groups groups whose key
// table has slots slots.
func (f *finish) read(r *snapcodec.Reader, groups, slots int) {
	n := r.Count(1)
	prev := int64(-1)
	f.done = nil
	for range n {
		s := prev + int64(r.Uvarint())
		if r.Err != nil || s <= prev || s >= int64(slots) {
			r.Fail(nil)
			return
		}
		f.setDone(int32(s))
		prev = s
	}
	f.over = readFlags(r)
	if len(f.over) > groups {
		r.Fail(nil)
		return
	}
	f.n = 0
	for _, o := range f.over {
		if o {
			f.n++
		}
	}
}
