package incr

import (
	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Finished groups (exec.Finished has the rule): the incremental
// aggregate keeps the keys of the groups it dropped as a bit per slot of
// its key table, so that the rows of the key that come later are dropped
// unread.
//
// The answer is the same, byte for byte: a done group's row was not
// shown (no -1 to make of it) and would never be (no +1). Its state is
// dropped between epochs (aggOp.flush, exec.Aggregation.Keep) once the
// done groups outnumber the others (with some slack), so that the
// copying is paid once per group.

// finish is an aggregate's finished groups: those whose state it still
// holds, and the keys of those it dropped (a bit per slot of its table).
type finish struct {
	*exec.Finished
	own bool // the key table is the aggregate's own: its snapshot writes it (the dropped keys are not the aggregation's)
}

// dropSlack is how many more finished groups than others an aggregate
// holds before it drops them: a few epochs of a small job drop none.
var dropSlack = 1 << 12

func newFinish(n *plan.Node, having *plan.Expr, keys *exec.KeyTable, own bool) *finish {
	f := exec.NewFinished(n, having, keys)
	if f == nil {
		return nil
	}
	return &finish{Finished: f, own: own}
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
	return f.Drop(agg, from, dropSlack)
}

// bytes is about the memory of the done keys and the finished flags.
func (f *finish) bytes() int64 {
	if f == nil {
		return 0
	}
	return f.Bytes()
}

// write writes the done slots (ascending, as their gaps) and the groups
// finished.
func (f *finish) write(w *snapcodec.Writer) {
	slots := f.Done().Slots()
	w.Uvarint(uint64(len(slots)))
	prev := int32(-1)
	for _, s := range slots {
		w.Uvarint(uint64(s - prev))
		prev = s
	}
	writeFlags(w, f.Flags())
}

// read reads write's state of an aggregate of groups groups whose key
// table has slots slots.
func (f *finish) read(r *snapcodec.Reader, groups, slots int) {
	n := r.Count(1)
	prev := int64(-1)
	for range n {
		s := prev + int64(r.Uvarint())
		if r.Err != nil || s <= prev || s >= int64(slots) {
			r.Fail(nil)
			return
		}
		f.Done().Add(int32(s))
		prev = s
	}
	over := readFlags(r)
	if len(over) > groups {
		r.Fail(nil)
		return
	}
	f.SetFlags(over)
}
