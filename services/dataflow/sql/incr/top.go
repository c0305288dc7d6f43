package incr

import (
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// topOp is the answer: the rows of the plan's Sort (its input's, as a
// multiset), and the nodes above it, which present them (LIMIT,
// ROW_NUMBER, the projection that drops the sort's hidden columns).
//
// Without LIMIT or ROW_NUMBER above the Sort, the answer's changes are
// the Sort input's, through the projections and filters above it: the
// order is the rendering's alone. With them, a change moves rows in and
// out of the first N, or renumbers them: the change is the new rendering
// against the one before, which costs the rendering (N rows with a
// LIMIT N; the whole answer for a ROW_NUMBER without LIMIT).
//
// With a LIMIT N over a Sort input that only grows, only the first N
// rows are kept: a row pushed out can never come back. Over one that
// retracts rows (ORDER BY an aggregate, q4), every input row is kept, and
// the first N are found again by sorting them all each epoch that
// changes them: work in the number of the Sort's input rows (q4: its
// groups), not in the epoch's changes.
type topOp struct {
	root      *plan.Node
	sort      *plan.Node
	upper     []*plan.Node // the nodes above the Sort, the lowest first
	limit     int64        // the LIMIT's N and OFFSET, when the rows between it and the Sort are projections alone; else -1
	prune     bool         // keep only the first limit rows: the Sort input only grows
	nonlinear bool         // a LIMIT or ROW_NUMBER above the Sort
	set       *rowSet      // the Sort's input rows
	shown     *exec.Batch  // nonlinear: the last version's rendering
	cache     *exec.Batch  // the current rendering, nil when it changed
	lines     *sortedLines // linear: the answer's rows in order, with their CSV lines; nil until asked
	first     bool
}

func newTop(root, sort *plan.Node, upper []*plan.Node, monotone bool) *topOp {
	t := &topOp{root: root, sort: sort, upper: upper, limit: -1, set: newRowSet(sort.Output, true), first: true}
	for _, n := range upper {
		if n.Op == plan.Limit || n.Op == plan.RowNumber {
			t.nonlinear = true
		}
	}
	for _, n := range upper {
		if n.Op == plan.Limit {
			if n.N >= 0 { // its first N rows after the OFFSET's: the first N + OFFSET
				t.limit = n.N + n.Offset
				t.prune = monotone
			}
			break
		}
		if n.Op != plan.Project {
			break
		}
	}
	t.shown = exec.Concat(root.Output, nil)
	return t
}

// step takes the Sort input's changes and returns the answer's.
func (t *topOp) step(in zset) (zset, error) {
	first := t.first
	t.first = false
	changes := t.set.apply(in)
	changed := len(changes) > 0
	if t.lines != nil {
		if err := t.lines.update(t, changes); err != nil {
			return nil, err
		}
	}
	t.set.release()
	if !changed && !first {
		return nil, nil
	}
	t.cache = nil
	if t.prune && t.set.total > t.limit {
		if err := t.cut(); err != nil {
			return nil, err
		}
	}
	if !t.nonlinear {
		return t.through(in)
	}
	now, err := t.render()
	if err != nil {
		return nil, err
	}
	out := zset{weighted(t.shown, -1), weighted(now, 1)}
	t.shown = now
	return out, nil
}

// cut keeps the first limit rows of the set alone.
func (t *topOp) cut() error {
	sorted := exec.Limit(t.limit, exec.Sort(t.sort, []*exec.Batch{t.set.rows(t.limit)}))
	t.set = newRowSet(t.sort.Output, true)
	t.lines = nil
	var z zset
	for _, b := range sorted {
		z = append(z, weighted(b, 1))
	}
	t.set.apply(z)
	return nil
}

// through passes the Sort input's changes through the nodes above it,
// projections and filters.
func (t *topOp) through(z zset) (zset, error) {
	var err error
	for _, n := range t.upper {
		switch n.Op {
		case plan.Project:
			z, err = projectZ(n.Exprs, z)
		case plan.Filter:
			z, err = filterOp{exec.NewRowFilter(n.Cond)}.step([]zset{z})
		}
		if err != nil {
			return nil, err
		}
	}
	return z, nil
}

// answer is the current answer's rows, in its order.
func (t *topOp) answer() (*exec.Batch, error) {
	if t.nonlinear {
		return t.shown, nil
	}
	if t.cache == nil {
		b, err := t.render()
		if err != nil {
			return nil, err
		}
		t.cache = b
	}
	return t.cache, nil
}

// render sorts the set's rows and runs the nodes above the Sort over
// them, as oracle.Execute runs them.
func (t *topOp) render() (*exec.Batch, error) {
	bs := exec.Sort(t.sort, []*exec.Batch{t.set.rows(-1)})
	var err error
	for _, n := range t.upper {
		switch n.Op {
		case plan.Limit:
			bs = exec.LimitNode(n, bs)
		case plan.RowNumber:
			next := 1 + n.Offset
			for i, b := range bs {
				if bs[i], err = exec.NumberRows(n.Col, next, b); err != nil {
					return nil, err
				}
				next += int64(b.N)
			}
		case plan.Project:
			bs, err = exec.Project(n.Exprs, bs)
		case plan.Filter:
			bs, err = filterOp{exec.NewRowFilter(n.Cond)}.step([]zset{bs})
		}
		if err != nil {
			return nil, err
		}
	}
	return exec.Concat(t.root.Output, bs), nil
}

// subTop is a subquery's ORDER BY ... LIMIT (or ROW_NUMBER) as an
// operator: its changes are those of its first rows.
type subTop struct{ t *topOp }

func (o subTop) step(in []zset) (zset, error) { return o.t.step(in[0]) }
