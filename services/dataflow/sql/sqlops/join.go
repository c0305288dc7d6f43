package sqlops

import (
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// The outer joins (plan.JoinType) on a shard: both inputs come
// shuffled by the join's key, so a key's left and right rows are all on
// one instance, and each instance emits its own unmatched rows: a left
// one as it is probed (exec.Join.ProbeChunks), a right one once every
// left row has been probed (Finish). A row with a NULL key, sent to
// whichever instance its NULL hashes to, matches nothing there, as
// anywhere.

// newTypedJoin is the join of node n: newJoin, of n's type.
func newTypedJoin(n *plan.Node, cols []plan.Column, j *exec.Join, right []plan.Column) *join {
	j.SetType(n.JoinType, cols)
	jo := newJoin(cols, j, right, n.LeftKey, n.RightKey)
	jo.keepsRight, jo.typ = n.JoinType.KeepsRight(), n.JoinType
	return jo
}

// Finish probes what is held, then emits the right rows no left row
// matched (a right or full join's), in chunks counted against the
// budget as the probe's are; then joins what it spilled, partition by
// partition (spilling.go).
func (j *join) Finish(out Out) error {
	if err := j.probing.Finish(out); err != nil {
		return err
	}
	if err := j.j.UnmatchedRight(chunkRows, j.counted(out)); err != nil {
		return err
	}
	return j.finishSpilled(out)
}

// appendMatched writes, for a join that emits its unmatched right rows,
// which right rows have matched (after the rows, in their order); an
// inner or left join's snapshot is as it was.
func (j *join) appendMatched(w *snapWriter) {
	if !j.keepsRight {
		return
	}
	for _, hit := range j.j.Matched() {
		w.Bool(hit)
	}
}

// restoreMatched reads what appendMatched wrote.
func (j *join) restoreMatched(r *snapReader) error {
	if !j.keepsRight || r.Err != nil {
		return r.Err
	}
	hit := make([]bool, j.j.RightRows())
	for i := range hit {
		hit[i] = r.Bool()
	}
	if r.Err != nil {
		return r.Err
	}
	return j.j.SetMatched(hit)
}
