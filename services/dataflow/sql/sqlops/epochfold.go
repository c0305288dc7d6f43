package sqlops

import (
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
)

// Folding (incr's Op.Fold): a stepped unit whose operator folds an
// input's changes (an aggregate, a join, a semi-join or a DISTINCT over
// rows that only arrive) takes them as they come rather than hold them
// until the epoch's markers, so the task's memory follows the
// operators' state, not an epoch's rows. Only the changes of the unit's
// next epoch (u.epoch+1) are folded: those of a later one (a sender
// ahead of another, whose next epoch's changes come before the other's
// marker of this one) are held apart, as every epoch's were, and folded
// once the epoch before them is stepped (foldNext), so an epoch's
// change is always the state before it and its own changes. The
// changes a fold makes at once (a join's) go on tagged with the epoch,
// before its marker, as a streamed unit's do. What was folded is the
// operator's state (its snapshot's), so a snapshot between two folded
// batches restores exactly.

// fold folds b, changes of epoch e (u's next) on input k, into u's
// operator and hands on what it makes at once; slots, when not nil, are
// its rows' keys' in the operator's shared table.
func (t *EpochTask) fold(u *unit, k int, e int64, b *exec.Batch, slots []int32) error {
	out, err := u.op.FoldSlots(k, b, slots)
	if err != nil {
		return fmt.Errorf("operator #%d (%s): epoch %d: %w", u.top().ID, u.top().Kind, e, err)
	}
	return t.forward(u, e, out)
}

// foldNext folds the changes u's inputs hold of its next epoch, now that
// it is the next (they came while the one before was open), keeping the
// markers of it that came.
func (t *EpochTask) foldNext(u *unit) error {
	if u.done || u.op == nil {
		return nil
	}
	e := u.epoch + 1
	for k, in := range u.ins {
		if len(in.pending) == 0 || in.pending[0].epoch != e || !u.op.Folds(k) {
			continue
		}
		rows := in.pending[0].rows
		in.pending[0].rows = nil
		for _, b := range rows {
			u.heldBytes -= int64(batchBytes(b))
			if err := t.fold(u, k, e, b, nil); err != nil {
				return err
			}
		}
	}
	return nil
}
