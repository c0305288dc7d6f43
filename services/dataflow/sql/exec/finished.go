package exec

import (
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/base/snapcodec"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// Finished groups: over rows that only arrive, a group's counts only
// grow, so a HAVING conjunct that bounds a count from above (q2's
// COUNT(*) = 2) stops holding for good once the count passes the bound:
// the group's row never passes the HAVING again, and its aggregate need
// not keep its accumulators, only that its key is done, so that the rows
// of the key that come later are dropped unread. A COUNT(*) at its bound
// whose row does not pass is done too: every row to come adds one to it.
// q2 keeps then, of its 3.1M groups of the full dataset, those whose row
// passes (90k) and the matches with one player row so far, where it kept
// every group's accumulators and a copy of its key.
//
// Finished is the rule and the groups it found, shared by the two
// engines' aggregates (incr's over epochs, sqlops' batch one): each
// keeps the done keys its own way (incr a bit per slot of its table, sqlops
// a KeySet of the task's shared table, whose snapshot names keys, not
// slots), and each decides when to look at which groups (Note) and when
// to let them go (Drop).

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

// Finished is an aggregate's groups found finished whose state it still
// holds (a flag per group), the keys of those it dropped, and the rule
// that finds them.
type Finished struct {
	bounds []countBound
	over   []bool    // per group: finished, its state not dropped yet
	done   *DoneKeys // the keys of the groups dropped, in the aggregate's table
}

// NewFinished is the finished groups of the aggregate n, keyed in table
// keys, under the HAVING having (over n's rows), or nil when having
// bounds no count from above.
func NewFinished(n *plan.Node, having *plan.Expr, keys *KeyTable) *Finished {
	bs := countBounds(n, having)
	if len(bs) == 0 {
		return nil
	}
	return &Finished{bounds: bs, done: NewDoneKeys(keys)}
}

// Done is the keys of the groups dropped.
func (f *Finished) Done() *DoneKeys { return f.done }

// Live is b's rows whose keys (their slots sl) are not done, and their
// slots: b and sl themselves when none is.
func (f *Finished) Live(b *Batch, sl []int32) (*Batch, []int32) {
	if f.done.Len() == 0 {
		return b, sl
	}
	return liveRows(b, sl, f.done.Has)
}

// Grow makes the flags n groups long (before Note: the groups an
// aggregate adds have none until then).
func (f *Finished) Grow(n int) {
	if d := n - len(f.over); d > 0 {
		f.over = append(f.over, make([]bool, d)...)
	}
}

// Note flags the groups of now's rows (groups, per row; Grow has made
// room for them) that are finished: their row does not pass the HAVING
// (pass, per row) and no later row can make it.
func (f *Finished) Note(now *Batch, groups []int32, pass []bool) {
	for i, g := range groups {
		if pass[i] || f.over[g] {
			continue
		}
		for _, b := range f.bounds {
			c := now.Cols[b.col].Nums[i]
			if b.dead(c) || b.star && b.dead(c.Add(value.Int(1))) {
				f.over[g] = true
				break
			}
		}
	}
}

// Drop moves the finished groups numbered from on out of agg when they
// outnumber the others from on by slack, their keys done, and returns
// the aggregation kept and the groups kept (in their new order: their
// old numbers), or agg and nil. The groups below from keep their
// numbers, and their flags. Each group kept is copied, so that a drop
// costs no more than the groups it drops, with the slack.
func (f *Finished) Drop(agg *Aggregation, from, slack int) (*Aggregation, []int32) {
	n := 0
	for _, over := range f.over[min(from, len(f.over)):] {
		if over {
			n++
		}
	}
	if n == 0 || n <= len(f.over)-from-n+slack {
		return agg, nil
	}
	slots := agg.GroupSlots()
	keep := make([]int32, 0, len(f.over)-n)
	for g, over := range f.over {
		if over && g >= from {
			f.done.Add(slots[g])
		} else {
			keep = append(keep, int32(g))
		}
	}
	was := f.over
	f.over = make([]bool, len(keep))
	for i, g := range keep {
		f.over[i] = was[g]
	}
	return agg.Keep(keep), keep
}

// Flags is the per-group flags, for a snapshot.
func (f *Finished) Flags() []bool { return f.over }

// SetFlags sets the flags a snapshot held.
func (f *Finished) SetFlags(over []bool) { f.over = over }

// Reset forgets the flags: the groups are looked at again (after a
// change of their numbers that Drop did not make).
func (f *Finished) Reset() { f.over = nil }

// Bytes is about the memory of the flags and the done keys.
func (f *Finished) Bytes() int64 {
	if f == nil {
		return 0
	}
	return int64(cap(f.over)) + f.done.Bytes()
}

// liveRows is b's rows whose keys (their slots sl) are not done, and
// their slots: b and sl themselves when none is done.
func liveRows(b *Batch, sl []int32, done func(slot int32) bool) (*Batch, []int32) {
	var rows, kept []int32
	for i, s := range sl {
		if done(s) {
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

// DoneKeys is the keys of an aggregate's dropped (finished) groups: a
// bit per slot of the aggregate's table (slotBits). Its state names the
// keys (their bytes, in the order of their slots), so that it restores
// into a table whose slots are others (a task's shared table, whose keys
// its operators put back in their order).
type DoneKeys struct {
	t *KeyTable
	slotBits
}

// NewDoneKeys is an empty set of done keys of table t.
func NewDoneKeys(t *KeyTable) *DoneKeys { return &DoneKeys{t: t} }

// Has reports whether slot s's key is done (s -1, no key: not).
func (d *DoneKeys) Has(s int32) bool { return d.has(s) }

// Add marks slot s's key done.
func (d *DoneKeys) Add(s int32) { d.add(s) }

// Len is the number of done keys.
func (d *DoneKeys) Len() int { return d.n }

// Slots is the done keys' slots, ascending.
func (d *DoneKeys) Slots() []int32 { return d.slots() }

// Bytes is about the memory of the bits.
func (d *DoneKeys) Bytes() int64 { return d.bytes() }

// StateSize is about the bytes AppendState appends.
func (d *DoneKeys) StateSize() int { return d.n * (2 + d.t.meanKey()) }

// AppendState appends the done keys to dst, in the order of their slots.
func (d *DoneKeys) AppendState(dst []byte) []byte {
	w := stateWriter{snapcodec.Writer{B: slices.Grow(dst, d.StateSize())}}
	w.Uvarint(uint64(d.n))
	for _, s := range d.Slots() {
		w.Bytes(d.t.key(s))
	}
	return w.B
}

// RestoreState reads what AppendState wrote into an empty set, the keys
// added to its table when it has them not.
func (d *DoneKeys) RestoreState(state []byte) error {
	r := newStateReader(state)
	n := r.Count(1)
	d.t.reserve(n)
	for range n {
		s := d.t.slot(r.Bytes())
		if d.Has(s) {
			r.Fail(fmt.Errorf("%w: a key twice", errState))
		}
		d.Add(s)
	}
	return r.End()
}
