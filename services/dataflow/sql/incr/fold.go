package incr

import (
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
)

// Folding: an operator over rows that only arrive can take an epoch's
// changes a batch at a time, as they arrive, rather than all at its end,
// so what runs it (sqlops' EpochTask) need not hold the epoch's rows
// until the epoch's end: its memory then follows the operator's state,
// not the epoch. A join, a semi-join on a subquery that only grows and
// a DISTINCT over rows that only arrive are bilinear or monotone: a
// batch's change is its rows against the state so far, which Fold emits
// at once (the pairs of a join's two sides are each made once, by the
// later of the two rows). An aggregate folds the batch into its groups
// and emits at the epoch's end (Step), remembering meanwhile only its
// touched groups and their rows before. Operators over rows that leave
// (a semi-join on an aggregated subquery, a regroup, a counted DISTINCT,
// the answer) do not fold: their epoch's changes are Step's.
//
// Fold takes only the changes of the epoch the operator steps next:
// the caller keeps the rows of a later epoch apart (a shard ahead of
// another sends the next epoch's before the other's marker) and folds
// them once the epoch before is stepped.

// folder is an operator that folds its inputs' changes as they arrive.
type folder interface {
	// folds reports whether fold takes input k's changes.
	folds(k int) bool
	// fold takes a batch of changes of input k of the open epoch, and
	// returns the changes of the output it makes now.
	fold(k int, b *exec.Batch) (zset, error)
	// folding reports whether it holds changes folded since the last
	// step, which the next step emits.
	folding() bool
}

// Folds reports whether Fold takes the changes of input k.
func (o *Op) Folds(k int) bool {
	f, ok := o.op.(folder)
	return ok && f.folds(k)
}

// Fold takes a batch of changes of input k of the epoch the next Step
// ends, as it arrives, and returns the changes of the output it makes
// at once (a join's, a semi-join's: rows of the same epoch); the rest,
// an aggregate's, the next Step returns, with the changes of the
// batches Step is given. b is read until Fold returns, not kept.
func (o *Op) Fold(k int, b *exec.Batch) ([]*exec.Batch, error) {
	f, ok := o.op.(folder)
	if !ok || !f.folds(k) {
		return nil, fmt.Errorf("incr: a %T does not fold its input %d", o.op, k)
	}
	return f.fold(k, b)
}

// Folding reports whether the operator has folded changes the next
// Step emits: an epoch to step even when no more changes of it come.
func (o *Op) Folding() bool {
	f, ok := o.op.(folder)
	return ok && f.folding()
}

// only is the inputs of an operator of n inputs with batch b on input
// k alone: a step of the one batch, a fold for an operator whose step
// keeps nothing of the epoch between its inputs' changes.
func only(n, k int, b *exec.Batch) []zset {
	in := make([]zset, n)
	in[k] = zset{b}
	return in
}

func (o *joinOp) folds(int) bool { return true }
func (o *joinOp) folding() bool  { return false }

// fold is ΔL ⋈ R or L ⋈ ΔR of the batch against the other side so far:
// the pair of two rows of the epoch is made by the later one's batch.
func (o *joinOp) fold(k int, b *exec.Batch) (zset, error) { return o.step(only(2, k, b)) }

func (o *semiOp) folds(int) bool { return o.grows }
func (o *semiOp) folding() bool  { return false }

// fold passes the left rows whose key is there and keeps the others; a
// key that comes releases the rows that waited for it.
func (o *semiOp) fold(k int, b *exec.Batch) (zset, error) { return o.step(only(2, k, b)) }

func (o *distinctOp) folds(int) bool { return o.grow != nil }
func (o *distinctOp) folding() bool  { return false }

func (o *distinctOp) fold(k int, b *exec.Batch) (zset, error) { return o.step(only(1, k, b)) }
