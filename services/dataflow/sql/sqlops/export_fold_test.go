package sqlops

import (
	"math/rand/v2"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
)

// FoldSeen is what RunEpochsFolding saw of the units whose operators
// fold their inputs (an aggregate, a join, a semi-join or a DISTINCT
// over rows that only arrive), before each message.
type FoldSeen struct {
	// HeldNext counts inputs holding changes of their unit's next epoch
	// (which folding takes as they come: none).
	HeldNext int
	// HeldLater counts inputs holding changes of a later epoch: a sender
	// ahead of another, its rows kept apart until their epoch is next.
	HeldLater int
	// RestartsFolding counts restarts of an instance one of whose
	// operators had folded changes of an epoch not yet stepped.
	RestartsFolding int
}

// RunEpochsFolding is RunEpochs with the ready instances taken in a
// random order, and each restarted from its snapshot before a message
// with probability p, or, when one of its operators has folded changes
// of an open epoch, half the time.
func RunEpochsFolding(pl *physical.Plan, epochs []map[string]*exec.Table, r *rand.Rand, p float64) (*EpochResult, FoldSeen, error) {
	var seen FoldSeen
	folding := false
	res, err := runEpochs(pl, epochs, epochOptions{
		pick: r.IntN,
		observe: func(in *epochInstance) error {
			folding = false
			for _, u := range in.t.units {
				if u.op == nil {
					continue
				}
				folding = folding || u.op.Folding()
				for k, x := range u.ins {
					if !u.op.Folds(k) {
						continue
					}
					for _, pe := range x.pending {
						switch {
						case len(pe.rows) == 0:
						case pe.epoch == u.epoch+1:
							seen.HeldNext++
						default:
							seen.HeldLater++
						}
					}
				}
			}
			return nil
		},
		restart: func() bool {
			if folding && r.IntN(2) == 0 {
				seen.RestartsFolding++
				return true
			}
			return r.Float64() < p
		},
	})
	return res, seen, err
}
