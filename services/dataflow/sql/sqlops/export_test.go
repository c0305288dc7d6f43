package sqlops

import (
	"math/rand/v2"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
)

// RunShuffled is Run with the ready instances taken in a random order,
// and each instance of an operator with state restarted from its snapshot
// before an arrival when restart says so.
func RunShuffled(p *physical.Plan, tables map[string]*exec.Table, r *rand.Rand, restart func(op, instance int) bool) (*Result, error) {
	res, _, err := run(p, tableFeeds(p, tables, nil), options{pick: r.IntN, restart: restart})
	return res, err
}

// RunBudget is Run with every instance held to budget b.
func RunBudget(p *physical.Plan, tables map[string]*exec.Table, b Budget, order ...string) (*Result, error) {
	res, _, err := run(p, tableFeeds(p, tables, order), options{budget: b})
	return res, err
}

// RunKeys runs p and returns the number of keys in its keyed operators'
// tables at the end; own: a table per operator, not per Plan.Tables entry.
func RunKeys(p *physical.Plan, tables map[string]*exec.Table, own bool) (*Result, int, error) {
	return run(p, tableFeeds(p, tables, nil), options{own: own})
}

// ChunkRanges is chunkRanges, for its test.
var ChunkRanges = chunkRanges

// SourceSpent is what the Source's task has counted of its budget: the
// bytes its last batch (step) sent, and the most one batch sent.
func SourceSpent(s *Source) (step, most int64) { return s.t.meter.stepBytes, s.t.meter.mostStep }

// RunEpochsRestarting is RunEpochs with the ready instances taken in a
// random order, each restarted from its snapshot before a message with
// probability p; it returns the number of restarts too.
func RunEpochsRestarting(pl *physical.Plan, epochs []map[string]*exec.Table, r *rand.Rand, p float64) (*EpochResult, int, error) {
	n := 0
	res, err := runEpochs(pl, epochs, epochOptions{pick: r.IntN, restart: func() bool {
		if r.Float64() < p {
			n++
			return true
		}
		return false
	}})
	return res, n, err
}

// RunEpochsBudget is RunEpochs with every instance held to budget b.
func RunEpochsBudget(p *physical.Plan, epochs []map[string]*exec.Table, b Budget) (*EpochResult, error) {
	return runEpochs(p, epochs, epochOptions{budget: b})
}

// RunEpochsScanned is RunEpochs with the gateway given its tables' rows
// read as their scans' columns (EpochTask.Scanned).
func RunEpochsScanned(p *physical.Plan, epochs []map[string]*exec.Table) (*EpochResult, error) {
	return runEpochs(p, epochs, epochOptions{scanned: true})
}

// RunEpochsUnmarked is RunEpochs with the last epoch's rows given no
// marker: the tables end after them.
func RunEpochsUnmarked(p *physical.Plan, epochs []map[string]*exec.Table) (*EpochResult, error) {
	return runEpochs(p, epochs, epochOptions{unmarked: true})
}

// EpochSnapshots runs p over the epochs as RunEpochs does, and returns a
// snapshot of an instance taken before each of about every n-th
// message, with the config of the task it is of.
func EpochSnapshots(p *physical.Plan, epochs []map[string]*exec.Table, n int) ([][]byte, []EpochConfig, error) {
	var snaps [][]byte
	var cfgs []EpochConfig
	i := 0
	_, err := runEpochs(p, epochs, epochOptions{observe: func(in *epochInstance) error {
		if i++; i%n != 0 {
			return nil
		}
		s, err := in.t.AppendSnapshot(nil)
		snaps, cfgs = append(snaps, s), append(cfgs, in.cfg)
		return err
	}})
	return snaps, cfgs, err
}

// RestoreEpochTask makes the task of cfg and restores it from snap.
func RestoreEpochTask(cfg EpochConfig, snap []byte) error {
	t, err := NewEpochTask(cfg)
	if err != nil {
		return err
	}
	return t.Restore(snap)
}

// RunEpochsLookups is RunEpochs, and the keys looked up in each shared
// key table of its epoch tasks (by Plan.Tables ID, over every instance).
func RunEpochsLookups(p *physical.Plan, epochs []map[string]*exec.Table) (*EpochResult, map[int]int, error) {
	var tasks []*EpochTask
	res, err := runEpochs(p, epochs, epochOptions{observe: func(in *epochInstance) error {
		if !slices.Contains(tasks, in.t) {
			tasks = append(tasks, in.t)
		}
		return nil
	}})
	lookups := map[int]int{}
	for _, t := range tasks {
		for _, s := range t.tables {
			lookups[s.id] += s.t.Lookups()
		}
	}
	return res, lookups, err
}

// RunSpilling is Run with every instance held to budget b, each instance
// of an operator with state restarted from its snapshot before an
// arrival when restart says so.
func RunSpilling(p *physical.Plan, tables map[string]*exec.Table, b Budget, restart func(op, instance int) bool) (*Result, error) {
	res, _, err := run(p, tableFeeds(p, tables, nil), options{budget: b, restart: restart})
	return res, err
}

// RunSpillingKeys is RunSpilling without restarts, and returns the
// number of keys in its keyed operators' tables at the end too.
func RunSpillingKeys(p *physical.Plan, tables map[string]*exec.Table, b Budget) (*Result, int, error) {
	return run(p, tableFeeds(p, tables, nil), options{budget: b})
}

// RoutesAsRead reports whether s routes its rows for their instance as
// it reads them (a field's hash), not through its exchange afterwards.
func RoutesAsRead(s *Source) bool { return s.x != nil }

// SetFinishSteps sets how many groups come after one before an aggregate
// looks whether it is finished, and the slack of its drops
// (aggfinish.go), until the returned func restores them.
func SetFinishSteps(lag, slack int) (restore func()) {
	l, s := finishLag, finishSlack
	finishLag, finishSlack = lag, slack
	return func() { finishLag, finishSlack = l, s }
}

// ReadCols is readCols: which of o's output columns its readers read.
func ReadCols(p *physical.Plan, o *physical.Op) []bool { return readCols(p, o) }

// SetBetweenRows sets how many rows a join emits in one step between two
// of its task's checks (betweenRows), and returns what restores it.
func SetBetweenRows(n int) (restore func()) {
	was := betweenRows
	betweenRows = n
	return func() { betweenRows = was }
}
