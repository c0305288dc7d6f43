package sqlops

import (
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Finished groups of a batch aggregate (exec.Finished has the rule): a
// complete aggregate whose rows only a HAVING reads, a HAVING that
// bounds a count from above (q2's COUNT(*) = 2), drops the state of a
// group once its row can never pass it, and keeps its key done, so that
// the key's later rows are dropped unread. Of q2's 1.55M groups per shard
// of the full dataset it keeps the 45k that pass and those still young,
// where it kept all and, at twice the data, spilled them past its
// budget. The HAVING's filter still runs after it: what the aggregate
// emits is what it did, less groups the filter drops anyway.
//
// When: a group is looked at once, when finishLag more groups came after
// it (q2's player rows come a match at a time, so by then its match is
// whole), and the groups found finished are dropped once they outnumber
// the others by finishSlack, so that each drop (which copies the groups
// kept, exec.Aggregation.Keep) costs no more than the groups it drops.
//
// The done keys stay in the table, and a row of one is dropped by its
// slot: the task looks up the keys of the rows of a spilled partition,
// which it does not add (keyUse.find), so that a done key's rows do not
// go to disk with its partition's, to make a group again at the end.
//
// A snapshot holds the done keys (an exec.DoneKeys of the task's table,
// a bit per slot, whose state names keys, not slots: the task's restore puts them back in
// another order) and the groups; the flags of groups found finished but
// not dropped are not in it, and a restored aggregate looks at every
// group again, which finds what it found. A spill renumbers the groups
// in memory; they are looked at again too.

// finishLag is how many groups come after one before the aggregate
// looks at it, and how many it looks at, at least, at a time.
var finishLag = 1 << 16

// finishSlack is how many more finished groups than others an aggregate
// holds before it drops them.
var finishSlack = 1 << 12

// aggFinish is an aggregate's finished groups.
type aggFinish struct {
	*exec.Finished
	having  *exec.Conds
	checked int // the groups below it have been looked at
	// read and types: the aggregate's columns the HAVING reads, and the
	// types of all, for the rows of the groups looked at
	// (ResultRangeOf): the others are not made.
	read  []bool
	types []plan.Type
}

// havingOf is the condition of the HAVING over the complete aggregate o:
// the filter that alone reads o's rows, or nil.
func havingOf(p *physical.Plan, o *physical.Op) *plan.Expr {
	if o.Kind != plan.Aggregate {
		return nil // a partial aggregate's counts are a part of its groups'; a final one's rows are projected
	}
	rs := p.Readers(o)
	if len(rs) != 1 || rs[0].Op.Kind != plan.Filter || rs[0].Op.Node == nil {
		return nil
	}
	return rs[0].Op.Node.Cond
}

// finishIn gives the aggregate, of the node n in the table keys, its
// finished groups under having (nil: none).
func (a *aggregate) finishIn(n *plan.Node, having *plan.Expr, keys *exec.KeyTable) {
	f := exec.NewFinished(n, having, keys)
	if f == nil {
		return
	}
	fin := &aggFinish{Finished: f, having: exec.NewConds([]*plan.Expr{having}), read: plan.MarkCols(make([]bool, len(n.Output)), having)}
	for _, c := range n.Output {
		fin.types = append(fin.types, c.Type)
	}
	a.fin = fin
}

// live is b's rows of keys not done, and their slots (sl; nil: none
// given, and none returned: the keys are looked up here, not added, the
// rows' partitions on disk may not add theirs).
func (a *aggregate) live(b *exec.Batch, sl []int32) (*exec.Batch, []int32, error) {
	if sl != nil || a.fin.Done().Len() == 0 {
		b, sl = a.fin.Live(b, sl)
		return b, sl, nil
	}
	found, err := a.agg.FindSlots(b)
	if err != nil {
		return nil, nil, err
	}
	b, _ = a.fin.Live(b, found)
	return b, nil, nil
}

// dropFinished looks at the groups finishLag groups old (their rows
// against the HAVING) and drops the finished ones' state when there are
// enough of them.
func (a *aggregate) dropFinished() error {
	f := a.fin
	after := a.agg.Groups()
	to := after - finishLag
	if to-f.checked < finishLag {
		return nil
	}
	f.Grow(after)
	groups := make([]int32, 0, min(to-f.checked, finishRows))
	for from := f.checked; from < to; from += finishRows {
		end := min(from+finishRows, to)
		now := a.agg.ResultRangeOf(from, end, f.read, f.types)
		_, pass, err := exec.PassFlags(f.having, now)
		if err != nil {
			return fmt.Errorf("aggregate #%d: having: %w", a.id, err)
		}
		groups = groups[:0]
		for g := from; g < end; g++ {
			groups = append(groups, int32(g))
		}
		f.Note(now, groups, pass)
	}
	f.checked = to
	agg, keep := f.Drop(a.agg, 0, finishSlack)
	if keep != nil {
		a.agg = agg
		f.checked, _ = slices.BinarySearch(keep, int32(to))
	}
	return nil
}

// renumbered is told that the groups in memory were numbered again (a
// spill kept some): they are looked at again.
func (f *aggFinish) renumbered() {
	if f != nil {
		f.Reset()
		f.checked = 0
	}
}

// finished is the aggregate's finished groups, or nil.
func (a *aggregate) finished() *exec.Finished {
	if a.fin == nil {
		return nil
	}
	return a.fin.Finished
}
