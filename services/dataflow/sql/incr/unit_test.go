package incr_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/incr/incrtest"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// nodeOf is the first node of kind op of a plan, depth first; nil when
// it has none.
func nodeOf(n *plan.Node, op plan.Op) *plan.Node {
	if n.Op == op {
		return n
	}
	for _, in := range n.Input {
		if a := nodeOf(in, op); a != nil {
			return a
		}
	}
	return nil
}

// aggregateOf is the Aggregate node of a plan.
func aggregateOf(n *plan.Node) *plan.Node { return nodeOf(n, plan.Aggregate) }

// withWeights is b's rows, each with weight w.
func withWeights(b *exec.Batch, w int64) *exec.Batch {
	v := &exec.Vec{Type: plan.Number, N: b.N, Nums: make([]value.Dec, b.N)}
	for i := range v.Nums {
		v.Nums[i] = value.Int(w)
	}
	return &exec.Batch{N: b.N, Cols: append(slices.Clone(b.Cols), v)}
}

// TestPartialAndFinalAggregate runs an aggregate of every function as a
// physical plan does, one operator at a time (incr.Op): two shards'
// partial aggregates over the rows each is given, their changes merged by
// the final aggregate, epoch by epoch, with rows that arrive and (over
// an input said not to only grow) rows that leave, the operators
// restored from their state at a random epoch (over rows that only
// arrive, between two batches a partial folded too). The final's changes add
// up, every epoch, to the aggregate computed whole over the rows there
// are.
func TestPartialAndFinalAggregate(t *testing.T) {
	q := "SELECT k, COUNT(*), SUM(n), MIN(n), MAX(s), AVG(n), STDDEV_SAMP(n), COUNT(d), MIN(b) FROM t GROUP BY k"
	for _, keyless := range []bool{false, true} {
		text := q
		if keyless {
			text = "SELECT COUNT(*), SUM(n), MIN(n), MAX(s), AVG(n) FROM t WHERE n > 0"
		}
		for seed := range uint64(40) {
			root, tables, _ := seedPlan(t, seed*2, text)
			agg := aggregateOf(root)
			in, err := oracle.Execute(agg.Input[0], tables)
			if err != nil {
				t.Fatal(err)
			}
			grows := seed%2 == 0
			label := fmt.Sprintf("seed %d, grows %v: %s", seed, grows, text)
			checkAggregate(t, label, agg, in.Rows, grows, rand.New(rand.NewPCG(seed, 46)))
		}
	}
}

func checkAggregate(t *testing.T, label string, agg *plan.Node, rows *exec.Batch, grows bool, r *rand.Rand) {
	t.Helper()
	const shards = 2
	newOps := func() ([]*incr.Op, *incr.Op) {
		var partials []*incr.Op
		for range shards {
			partials = append(partials, incr.NewPartialAggregate(agg, grows))
		}
		// The final groups by the partials' first columns, their keys.
		keys := make([]*plan.Expr, len(agg.Keys))
		for i, k := range agg.Keys {
			keys[i] = &plan.Expr{Kind: plan.ColRef, Col: i, Type: k.Type, Name: agg.Output[i].Name}
		}
		partialCols := exec.PartialColumns(agg.Output, len(agg.Keys), agg.Aggs)
		return partials, incr.NewFinalAggregate(&plan.Node{Op: agg.Op, Keys: keys, Aggs: agg.Aggs, Output: agg.Output, Input: []*plan.Node{{Output: partialCols}}})
	}
	partials, final := newOps()
	var there []int32 // the rows there are, by index into rows (a row may be there twice)
	restoreAt := r.IntN(6)
	sum := map[string]int64{}
	for epoch := range 6 {
		if epoch == restoreAt {
			fresh, freshFinal := newOps()
			for i, p := range append(slices.Clone(partials), final) {
				state, err := p.AppendState(nil)
				if err != nil {
					t.Fatal(err)
				}
				to := freshFinal
				if i < shards {
					to = fresh[i]
				}
				if err := to.RestoreState(state); err != nil {
					t.Fatalf("%s: restore: %v", label, err)
				}
			}
			partials, final = fresh, freshFinal
		}
		// Each shard's changes: rows that arrive, and, over an input
		// that does not only grow, some of the rows there leave.
		changes := make([][]*exec.Batch, shards)
		var come, gone []int32
		for range r.IntN(rows.N + 1) {
			come = append(come, int32(r.IntN(max(rows.N, 1))))
		}
		if rows.N == 0 {
			come = nil
		}
		if !grows {
			r.Shuffle(len(there), func(i, j int) { there[i], there[j] = there[j], there[i] })
			k := r.IntN(len(there) + 1)
			gone, there = there[:k:k], there[k:]
		}
		there = append(there, come...)
		for _, c := range []struct {
			rows []int32
			w    int64
		}{{come, 1}, {gone, -1}} {
			for _, i := range c.rows {
				s := int(i) % shards // where the row went, it leaves from
				changes[s] = append(changes[s], withWeights(rows.Rows([]int32{i}), c.w))
			}
		}
		var merged []*exec.Batch
		for s, p := range partials {
			out, again, err := foldAndStep(p, changes[s], r, func() *incr.Op { return incr.NewPartialAggregate(agg, grows) })
			if err != nil {
				t.Fatalf("%s: epoch %d: partial: %v", label, epoch+1, err)
			}
			partials[s] = again
			merged = append(merged, out...)
		}
		out, err := final.Step([][]*exec.Batch{merged})
		if err != nil {
			t.Fatalf("%s: epoch %d: final: %v", label, epoch+1, err)
		}
		if err := incrtest.AddChange(sum, final.Diff(int64(epoch+1), out).Result().CSV()); err != nil {
			t.Fatalf("%s: epoch %d: %v", label, epoch+1, err)
		}
		whole := exec.NewAggregation(exec.NewKeyTable(), agg.Keys, agg.Aggs)
		if err := whole.Add(rows.Rows(there)); err != nil {
			t.Fatal(err)
		}
		want := incrtest.Rows((&exec.Result{Columns: agg.Output, Rows: whole.Result()}).CSV())
		if !maps.Equal(sum, want) {
			t.Fatalf("%s: epoch %d: the final's changes add up to\n%v\nthe aggregate is\n%v", label, epoch+1, sum, want)
		}
	}
}

// foldAndStep gives op the epoch's changes of its one input as an epoch
// task does: over rows that only arrive, some of the batches folded as
// they come (Fold), the operator sometimes restored from its state
// between two of them into a fresh one (fresh), the rest given to Step.
// It returns the changes made and the operator, restored or not.
func foldAndStep(op *incr.Op, in []*exec.Batch, r *rand.Rand, fresh func() *incr.Op) ([]*exec.Batch, *incr.Op, error) {
	var out []*exec.Batch
	k := 0
	if op.Folds(0) {
		k = r.IntN(len(in) + 1)
	}
	for i, b := range in[:k] {
		o, err := op.Fold(0, b)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, o...)
		if i < k-1 && r.IntN(3) == 0 {
			state, err := op.AppendState(nil)
			if err != nil {
				return nil, nil, err
			}
			op = fresh()
			if err := op.RestoreState(state); err != nil {
				return nil, nil, fmt.Errorf("restored between two folds: %w", err)
			}
		}
	}
	o, err := op.Step([][]*exec.Batch{in[k:]})
	return append(out, o...), op, err
}
