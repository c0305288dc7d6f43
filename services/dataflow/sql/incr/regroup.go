package incr

import (
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// regroupOp is GROUP BY over an input that retracts rows (a semi-join
// whose subquery has an aggregate): exec's accumulators cannot take a
// value back (a MIN's), so each group an epoch touches is computed again
// from its rows, which it keeps by group (their changes added up): its
// work is the rows of the groups the epoch touches, not the epoch's rows
// alone.
//
// It is also a physical plan's partial aggregate over such an input (its
// aggregation a partial one), and its final aggregate, whose input is
// the shards' partial rows (computed again by merging them: MergeAggs).
type regroupOp struct {
	n     *plan.Node
	in    []plan.Column // the input's columns
	agg   aggregation   // what computes a group's row from its rows
	keys  *exec.KeyTable
	rows  [][]ref // per group's slot: its rows, each once with its count
	st    store
	first bool
}

// aggregation makes the exec.Aggregation of an aggregate's rows, and the
// projection (nil: none) that makes its output of that one's.
type aggregation struct {
	fresh func() *exec.Aggregation
	post  []*plan.Expr
	// window, when not nil, computes the rows instead: a window
	// function's partitions (window.go).
	window func(*exec.Batch) (*exec.Batch, error)
}

// complete is the aggregation of the Aggregate n.
func complete(n *plan.Node) aggregation {
	return aggregation{fresh: func() *exec.Aggregation { return exec.NewAggregation(exec.NewKeyTable(), n.Keys, n.Aggs) }}
}

// partial is the partial aggregation (exec.PartialAggs) of n's.
func partial(n *plan.Node) aggregation {
	aggs := exec.PartialAggs(n.Aggs)
	return aggregation{fresh: func() *exec.Aggregation { return exec.NewPartialAggregation(exec.NewKeyTable(), n.Keys, aggs) }}
}

// merging is the final aggregation of n's partials (exec.MergeAggs).
func merging(n *plan.Node) aggregation {
	aggs, post := exec.MergeAggs(n)
	return aggregation{fresh: func() *exec.Aggregation { return exec.NewAggregation(exec.NewKeyTable(), n.Keys, aggs) }, post: post}
}

func newRegroup(n *plan.Node, agg aggregation) *regroupOp {
	return &regroupOp{n: n, in: n.Input[0].Output, agg: agg, keys: exec.NewKeyTable(), first: true}
}

// slotsOf is the group's slot of each row of b, added when new.
func (o *regroupOp) slotsOf(b *exec.Batch) ([]int32, error) {
	kb, err := exec.Project(o.n.Keys, []*exec.Batch{b})
	if err != nil {
		return nil, fmt.Errorf("aggregate: %w", err)
	}
	sl := o.keys.Slots(kb[0].Cols, b.N, nil, nil)
	if n := o.keys.Len(); n > len(o.rows) {
		o.rows = append(o.rows, make([][]ref, n-len(o.rows))...)
	}
	return sl, nil
}

func (o *regroupOp) step(in []zset) (zset, error) {
	first := o.first
	o.first = false
	var touched []int32
	seen := map[int32]bool{}
	if len(o.n.Keys) == 0 && (first || len(in[0]) > 0) {
		sl, err := o.slotsOf(&exec.Batch{N: 1}) // the one group's
		if err != nil {
			return nil, err
		}
		touched, seen[sl[0]] = sl, true
	}
	for _, b := range in[0] {
		sl, err := o.slotsOf(b)
		if err != nil {
			return nil, err
		}
		for _, s := range sl {
			if !seen[s] {
				seen[s] = true
				touched = append(touched, s)
			}
		}
	}
	if len(touched) == 0 {
		return nil, nil
	}
	var refs []ref
	for _, s := range touched {
		refs = append(refs, o.rows[s]...)
	}
	kept := o.st.gather(o.in, refs, nil)
	var out zset
	if !first {
		old, err := o.compute(kept)
		if err != nil {
			return nil, err
		}
		out = append(out, weighted(old, -1))
	}
	// The touched groups' rows with the epoch's, added up, stored again.
	now := consolidate(append(zset{kept}, in[0]...), o.in)
	for _, s := range touched {
		o.rows[s] = nil
	}
	for _, r := range refs {
		o.st.drop(r)
	}
	if now.N > 0 {
		sl, err := o.slotsOf(now)
		if err != nil {
			return nil, err
		}
		at := o.st.add(now)
		for i, s := range sl {
			o.rows[s] = append(o.rows[s], ref{b: at.b, r: int32(i)})
		}
	}
	rows, err := o.compute(now)
	if err != nil {
		return nil, err
	}
	return append(out, weighted(rows, 1)), nil
}

// compute is the aggregate's rows over the rows of b, each as many
// times as its count.
func (o *regroupOp) compute(b *exec.Batch) (*exec.Batch, error) {
	var rows []int32
	for i, w := range weights(b) {
		if w < 0 {
			return nil, fmt.Errorf("aggregate: a row of its input has %d copies", w)
		}
		for range w {
			rows = append(rows, int32(i))
		}
	}
	if o.agg.window != nil {
		return o.agg.window(b.Rows(rows))
	}
	agg := o.agg.fresh()
	if err := agg.Add(b.Rows(rows)); err != nil {
		return nil, fmt.Errorf("aggregate: %w", err)
	}
	if o.agg.post == nil {
		return agg.Result(), nil
	}
	out, err := exec.Project(o.agg.post, []*exec.Batch{agg.Result()})
	if err != nil {
		return nil, fmt.Errorf("aggregate: %w", err)
	}
	return out[0], nil
}
