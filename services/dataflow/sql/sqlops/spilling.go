package sqlops

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/spill"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// A join past its task's budget spills to disk (a grace hash join): its
// rows are split into spillParts partitions by a hash of their key,
// and the largest partitions' right rows and held left rows go to files
// (package spill), the in-memory join keeping the others' alone. From
// then on a row of a spilled partition, right or left, is appended to
// its partition's file as it comes; a row of a kept one goes where it
// went before. At the join's end, after its in-memory part has finished
// (its unmatched right rows emitted), each spilled partition is joined
// alone: its right rows loaded into a join of their own, its left rows
// probed against them, its unmatched right rows emitted, in chunks
// counted against the budget as the in-memory join's are; then its
// files are removed. A key's rows are all in one partition, so each
// partition's join is the whole join of its keys, outer joins' unmatched
// rows included; what the join emits is the same rows, in another order
// (the queries' sinks order their rows, or their order is not defined).
//
// A join spills before its right input has ended, and after it too:
// its right rows no longer grow then, but the task's other operators'
// state does (the groups its rows make), and moving its partitions out
// makes room for them. The left rows probed before have made their rows;
// those of a spilled partition that come after are kept in its file and
// probed at the end against all its right rows, which were complete when
// it went out. A join that emits its unmatched right rows (a right or
// full join) writes, with a partition that goes then, which of its right
// rows the left rows probed so far have matched, and marks them again
// when it joins the partition at the end: a right row is unmatched when
// no left row matched it, before the spill or after (a shared outer join
// holds a whole table that way, physical's share.go).
// The partition of a row is a hash of its key (routeKey's bytes, as an
// exchange routes it) mixed apart from stage.Route's (whose low bits
// are the same on one instance), so that an instance's keys spread over
// every partition, and the same batches in the same order spill the
// same way: a restarted process's replay writes the files again. A task
// with spilled rows declines to snapshot (NoSnapshot): a snapshot is
// bytes in memory, and one of the spilled rows would take them back
// there; the job's journal keeps growing instead, and a restart replays
// it, which costs what the work cost.

// spillParts is the number of partitions of a spilling join: each is
// joined alone at the end, so a join of 32 times the budget's state
// still fits.
const spillParts = 32

// spiller is an operator that can move state past the budget to disk.
type spiller interface {
	stateBytes() int64
	// spill moves some of what the operator holds to space, and says
	// whether it did (false: it can move nothing).
	spill(space *spill.Space) (bool, error)
	// spilled says whether the operator has state on disk.
	spilled() bool
}

// partsOuter is a spiller whose rows of spilled partitions go to disk
// by their key alone, before their slot is read (divertRows): the task
// need not look their keys up in the shared table (keyUse.out).
type partsOuter interface {
	// partsOut is the operator's spilled partitions; nil: none.
	partsOut() *[spillParts]bool
}

// partsOut: the join's spilled partitions.
func (j *join) partsOut() *[spillParts]bool {
	if j.gr == nil {
		return nil
	}
	return &j.gr.out
}

// grace is a join's spilled state: which partitions are on disk, and
// their files of right and of left rows; and of which right rows had
// matched a left row when their partition went, written by a join that
// emits its unmatched right rows once its right input had ended (a
// snapcodec Bool per row, in the order of the partition's right rows;
// none for a partition that went before: no left row is probed before
// the right input ends).
type grace struct {
	out               [spillParts]bool
	right, left, hits *spill.Files
}

// partitions is the partition of the key (keys, evaluated over b) of
// each row of b.
func partitions(b *exec.Batch, keys ...*plan.Expr) ([]uint8, error) {
	kb, err := exec.Project(keys, []*exec.Batch{b})
	if err != nil {
		return nil, err
	}
	return keyPartitions(kb[0].Cols, b.N), nil
}

// keyPartitions is the partition of each of the n rows of the key
// columns keys.
func keyPartitions(keys []*exec.Vec, n int) []uint8 {
	out := make([]uint8, n)
	var buf, k []byte
	for i := range n {
		k, buf = routeKey(buf[:0], keys, i)
		out[i] = partitionOf(stage.FNV1a(k))
	}
	return out
}

// partitionOf is the partition of a key's FNV-1a hash h, mixed (the
// finalizer of MurmurHash3) so that its top bits, which pick the
// partition, depend on all of h's.
func partitionOf(h uint64) uint8 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return uint8(h >> (64 - bits.Len(spillParts-1)))
}

// spillLargest marks out, largest first, the partitions not out yet,
// until about half of what they hold (size: bytes, groups) is out, and
// returns those it marked; none when they hold nothing. A join and an
// aggregate pick what they spill by it. (Moving less at a time, what
// brings the task to seven eighths of its bound, wrote about as much and
// cost the analyst job 9% more wall time, paired: each spill goes over
// all an operator keeps, and there were more of them.)
func spillLargest(out *[spillParts]bool, size *[spillParts]int64) []int {
	var in []int
	var total int64
	for p := range spillParts {
		if !out[p] {
			in = append(in, p)
			total += size[p]
		}
	}
	if total == 0 {
		return nil
	}
	slices.SortStableFunc(in, func(a, b int) int { return cmp.Compare(size[b], size[a]) })
	var moved int64
	var marked []int
	for _, p := range in {
		if moved > 0 && 2*moved >= total {
			break
		}
		out[p] = true
		moved += size[p]
		marked = append(marked, p)
	}
	return marked
}

// spilled: whether the join has rows on disk.
func (j *join) spilled() bool { return j.gr != nil }

// spill moves the largest of the join's partitions still in memory to
// disk, until about half of what it holds is there; nothing when every
// partition is out already. A partition that goes once the right input
// of a join that emits its unmatched right rows has ended takes which of
// its right rows have matched a left row with it (grace.hits).
func (j *join) spill(space *spill.Space) (bool, error) {
	if j.gr == nil {
		name := fmt.Sprintf("join%d", j.id)
		j.gr = &grace{right: space.Files(name+"-right", spillParts, j.right), left: space.Files(name+"-left", spillParts, j.left.cols[0]), hits: space.Files(name+"-hits", spillParts, nil)}
	}
	// What each partition holds: its right rows' share of the join's
	// bytes, and its left rows'.
	var size [spillParts]int64
	perRow := j.j.Bytes() / int64(max(j.j.RightRows(), 1))
	var rps [][]uint8 // each chunk's rows' partitions
	if err := j.j.EachRight(func(b *exec.Batch) error {
		p, err := partitions(b, j.rightKey)
		for _, p := range p {
			size[p] += perRow
		}
		rps = append(rps, p)
		return err
	}); err != nil {
		return false, err
	}
	held := j.left.ins[0]
	lps := make([][]uint8, len(held))
	for k, b := range held {
		var err error
		if lps[k], err = partitions(b, j.leftKey); err != nil {
			return false, err
		}
		perRow := int64(batchBytes(b) / max(b.N, 1))
		for _, p := range lps[k] {
			size[p] += perRow
		}
	}
	if len(spillLargest(&j.gr.out, &size)) == 0 { // nothing in memory to move
		return false, nil
	}
	// The right rows: the spilled partitions' to their files, the kept
	// ones' into a join of their own, which replaces the one that held
	// them all, chunk by chunk as the old one lets them go.
	var hits []bool
	if j.keepsRight && j.rightDone {
		hits = j.j.Matched()
	}
	var kept []bool // the kept rows' marks, in the fresh join's order
	fresh, from := j.execJoin(j.table), 0
	var marks [spillParts]snapcodec.Writer
	err := j.j.DrainRight(func(b *exec.Batch) error {
		ps := rps[0]
		rps = rps[1:]
		rows, err := divert(&j.gr.out, j.gr.right, ps, b)
		if err != nil {
			return j.spillErr(err)
		}
		if hits != nil {
			for i, p := range ps {
				if j.gr.out[p] {
					marks[p].Bool(hits[from+i])
				}
			}
			for _, r := range rows {
				kept = append(kept, hits[from+int(r)])
			}
		}
		from += b.N
		return fresh.AddRight(keptRows(b, rows))
	})
	if err != nil {
		return false, err
	}
	for p, w := range marks {
		if len(w.B) > 0 {
			if err := j.gr.hits.AppendBytes(p, w.B); err != nil {
				return false, j.spillErr(err)
			}
		}
	}
	if hits != nil {
		if err := fresh.SetMatched(kept); err != nil {
			return false, err
		}
	}
	j.j = fresh
	// The left rows held: the same.
	j.left.ins[0], j.left.held = nil, 0
	for k, b := range held {
		kept, err := divert(&j.gr.out, j.gr.left, lps[k], b)
		if err != nil {
			return false, j.spillErr(err)
		}
		if len(kept) > 0 {
			j.left.ins[0] = append(j.left.ins[0], keptRows(b, kept))
			j.left.held += int64(batchBytes(j.left.ins[0][len(j.left.ins[0])-1]))
		}
	}
	return true, nil
}

// restoreHits marks the right rows of spilled partition p, loaded into
// pj, that had matched a left row when p went (grace.hits); none when p
// went before the right input ended.
func (j *join) restoreHits(p int, pj *exec.Join) error {
	var r snapcodec.Reader
	if err := j.gr.hits.ReadBytes(p, func(b []byte) error {
		r.B = append(r.B, b...)
		return nil
	}); err != nil || len(r.B) == 0 {
		return err
	}
	hit := make([]bool, pj.RightRows())
	for i := range hit {
		hit[i] = r.Bool()
	}
	if err := r.End(); err != nil {
		return fmt.Errorf("join #%d: spilled partition %d's matched marks: %w", j.id, p, err)
	}
	return pj.SetMatched(hit)
}

// divert appends the rows of b (whose partitions are ps) of the
// partitions out says are spilled to their files, and returns the
// others', in order.
func divert(out *[spillParts]bool, files *spill.Files, ps []uint8, b *exec.Batch) ([]int32, error) {
	var kept []int32
	var rows [spillParts][]int32
	for i, p := range ps {
		if out[p] {
			rows[p] = append(rows[p], int32(i))
		} else {
			kept = append(kept, int32(i))
		}
	}
	for p := range rows {
		if len(rows[p]) == 0 {
			continue
		}
		if err := files.Append(p, b, rows[p]); err != nil {
			return nil, err
		}
	}
	return kept, nil
}

// divertRows appends the rows of b of spilled partitions (out; a row's
// by its key, keys) to their files, and returns the others (nil: none)
// with their slots (of sl, nil when sl is).
func divertRows(out *[spillParts]bool, files *spill.Files, b *exec.Batch, sl []int32, keys ...*plan.Expr) (*exec.Batch, []int32, error) {
	ps, err := partitions(b, keys...)
	if err != nil {
		return nil, nil, err
	}
	kept, err := divert(out, files, ps, b)
	switch {
	case err != nil:
		return nil, nil, err
	case len(kept) == 0:
		return nil, nil, nil
	case len(kept) == b.N:
		return b, sl, nil
	case sl != nil:
		sl = gatherSlots(sl, kept)
	}
	return b.Rows(kept), sl, nil
}

// keptRows is b's rows at kept: b itself when they are all of them.
func keptRows(b *exec.Batch, kept []int32) *exec.Batch {
	if len(kept) == b.N {
		return b
	}
	return b.Rows(kept)
}

// spillErr is err, or the job's budget error when the spill files went
// past their bound.
func (j *join) spillErr(err error) error { return spillErr(err, j.meter, j.where) }

// spillErr is err, or the job's budget error (m's, nil: none) when the
// spill files of the operator (where) went past their bound.
func spillErr(err error, m *meter, where string) error {
	var over *spill.OverLimit
	if errors.As(err, &over) && m != nil {
		return m.pass(&OverBudget{What: "bytes of spilled state", Verb: "wrote", Flag: "--job-max-spill-bytes", Limit: over.Limit, Spent: over.Spent, Where: where})
	}
	return err
}

// spillRows, for a join that has spilled, appends the rows of b (a batch
// of the right input, else the left) of spilled partitions to their
// files, and returns the others (nil: none) with their slots (of sl,
// nil when sl is).
func (j *join) spillRows(right bool, b *exec.Batch, sl []int32) (*exec.Batch, []int32, error) {
	key, files := j.leftKey, j.gr.left
	if right {
		key, files = j.rightKey, j.gr.right
	}
	b, sl, err := divertRows(&j.gr.out, files, b, sl, key)
	return b, sl, j.spillErr(err)
}

// finishSpilled joins each spilled partition alone (see above), and
// removes its files.
func (j *join) finishSpilled(out Out) error {
	if j.gr == nil {
		return nil
	}
	emit := j.counted(out)
	// The in-memory part has finished: its rows go before the spilled
	// partitions' come.
	j.j = exec.NewJoin(j.table, j.leftKey, j.rightKey, j.right)
	for p := range spillParts {
		if !j.gr.out[p] {
			continue
		}
		pj := j.execJoin(exec.NewKeyTable())
		if err := j.gr.right.Read(p, pj.AddRight); err != nil {
			return err
		}
		if err := j.restoreHits(p, pj); err != nil {
			return err
		}
		if err := j.gr.left.Read(p, func(b *exec.Batch) error { return pj.ProbeChunks(b, nil, chunkRows, emit) }); err != nil {
			return err
		}
		if err := pj.UnmatchedRight(chunkRows, emit); err != nil {
			return err
		}
		if err := errors.Join(j.gr.right.Drop(p), j.gr.left.Drop(p), j.gr.hits.Drop(p)); err != nil {
			return err
		}
	}
	return nil
}
