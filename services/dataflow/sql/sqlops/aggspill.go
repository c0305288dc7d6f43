package sqlops

import (
	"errors"
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/spill"
)

// An aggregate (complete, partial or final) past its task's budget
// spills as a join does (spilling.go): its groups are split into
// spillParts partitions by the same hash of their key, and the largest
// partitions' groups go to disk, each partition's state written once
// (exec.Aggregation.AppendStateOf, a file of the partition's), the
// aggregate keeping the others' alone (Keep). From then on an input row
// of a spilled partition is appended to the partition's file of rows as
// it comes; a row of a kept one is added as before. At the end, after
// the groups in memory have been emitted, each spilled partition's
// state is restored into an Aggregation of its own, its rows added, and
// its groups emitted as the others were (a final aggregate's projection
// included); then its files are removed. A key's groups and rows are
// all in one partition, so each partition's groups are whole; the
// aggregate emits the same rows, in another order.
//
// The groups of a spilled partition keep their keys in the aggregate's
// table when other operators share it (physical.Plan.Tables); their state
// is what goes. An aggregate alone in its table (the aggregate by group
// and argument of a COUNT(DISTINCT x), keyed by millions of match
// tokens) compacts it to its kept groups' keys (exec.KeyTable.Compact),
// so its spilled groups' keys go too, and the spill ranks it by its
// state and its table's keys together (movable); not one that drops its
// finished groups, whose done keys are slots of the table. The keys of a
// spilled partition's later rows are not added (keyUse.out). An
// aggregate without keys, one group, does not spill. Like a join's, an
// aggregate with spilled groups declines to snapshot.
//
// Why a shared table keeps its keys. q2's aggregate by match shares its
// table with q1's distinct and q3's and q4's semi-joins, and at twice
// the full dataset the table is most of a shard's state when q2 first
// spills (84 of 120 MB, nine keys in ten the done keys of finished
// groups); moving half of the groups' state frees little, and the spills
// that follow move half of what is left each time, until nearly every
// later row goes to disk. Letting the table's keys go at a spill was
// built and measured: every operator of the table marking the slots it
// holds, the table keeping those alone (renumbered, every operator told),
// and the done keys of the spilled partitions written with them so that
// their later rows are dropped at the end. It wrote a quarter fewer bytes
// and spilled twice where it had spilled nine times, but took 5% more
// wall time at twice the data and 10% more at four times (three
// interleaved pairs each, wololo demo): the done keys' later rows went to
// disk where a lookup had dropped them, the table was built again at
// each compaction and grew back, and more groups stayed to be looked at
// in memory. So the rule stays: keys go only with a table one aggregate
// alone keys in.

// aggSpill is an aggregate's spilled groups: which partitions are on
// disk, their groups' state (written once, when they went), and the rows
// of theirs that came after.
type aggSpill struct {
	out         [spillParts]bool
	state, rows *spill.Files
}

// spilled: whether the aggregate has groups on disk.
func (a *aggregate) spilled() bool { return a.sp != nil }

// partsOut: the aggregate's spilled partitions.
func (a *aggregate) partsOut() *[spillParts]bool {
	if a.sp == nil {
		return nil
	}
	return &a.sp.out
}

// compacts says whether the aggregate's spill lets its spilled groups'
// keys go from its table: when no other operator keys in it, and no
// finished group's done key names one of its slots.
func (a *aggregate) compacts() bool { return a.alone && a.fin == nil }

// spill moves the groups of the partitions still in memory with the
// most groups to disk, until about half of them are there; nothing when
// the aggregate has no keys, or no groups in memory.
func (a *aggregate) spill(space *spill.Space) (bool, error) {
	n := a.agg.Groups()
	if len(a.keys) == 0 || n == 0 {
		return false, nil
	}
	ps := keyPartitions(a.agg.KeyCols(), n)
	var ids [spillParts][]int32
	for g, p := range ps {
		ids[p] = append(ids[p], int32(g))
	}
	if a.sp == nil {
		name := fmt.Sprintf("agg%d", a.id)
		a.sp = &aggSpill{state: space.Files(name+"-state", spillParts, nil), rows: space.Files(name+"-rows", spillParts, a.cols)}
	}
	var size [spillParts]int64
	for p := range spillParts {
		size[p] = int64(len(ids[p]))
	}
	moved := 0
	var buf []byte
	for _, p := range spillLargest(&a.sp.out, &size) {
		moved += len(ids[p])
		if len(ids[p]) == 0 {
			continue
		}
		buf = a.agg.AppendStateOf(buf[:0], ids[p])
		if err := a.sp.state.AppendBytes(p, buf); err != nil {
			return false, spillErr(err, a.meter, a.where)
		}
	}
	kept := make([]int32, 0, n-moved)
	for g, p := range ps {
		if !a.sp.out[p] {
			kept = append(kept, int32(g))
		}
	}
	a.agg = a.agg.Keep(kept)
	a.fin.renumbered()
	if a.compacts() {
		a.agg.CompactTable()
	}
	return true, nil
}

// finishSpilled emits each spilled partition's groups (see above), and
// removes its files.
func (a *aggregate) finishSpilled(out Out) error {
	if a.sp == nil {
		return nil
	}
	// The groups in memory have been emitted: their state goes before
	// a partition's comes.
	a.agg = a.newAgg(exec.NewKeyTable())
	for p := range spillParts {
		if !a.sp.out[p] {
			continue
		}
		pa := a.newAgg(exec.NewKeyTable())
		if err := a.sp.state.ReadBytes(p, pa.RestoreState); err != nil {
			return fmt.Errorf("aggregate #%d: spilled groups: %w", a.id, err)
		}
		if err := a.sp.rows.Read(p, pa.Add); err != nil {
			return fmt.Errorf("aggregate #%d: spilled rows: %w", a.id, err)
		}
		if err := a.emit(pa, out); err != nil {
			return err
		}
		if err := errors.Join(a.sp.state.Drop(p), a.sp.rows.Drop(p)); err != nil {
			return err
		}
	}
	return nil
}
