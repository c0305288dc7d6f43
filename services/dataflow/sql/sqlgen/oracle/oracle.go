// Package oracle runs a logical plan (services/dataflow/sql/plan) whole,
// in one process: each node's batches materialised, one node after the
// other, by the engine's operator logic (services/dataflow/sql/exec's
// state and batch functions, the ones the physical plan's operators
// stream through). It is a test oracle and runs in no job: the tests
// compare it with sqlgen's naive evaluator (so that the engine's logic
// is checked without the physical plan's tasks, channels and snapshots),
// with the physical plan run in process or distributed (sqlops, the
// demo), with the reference's answers (queries) and with DuckDB
// (tools/duckdb): the chain sqlgen, then this, then DuckDB.
//
// It lives beside sqlgen, as a package of its own rather than in sqlgen,
// because sqlgen imports nothing of this module (its evaluator shares no
// code with the engine it checks), while this one is the engine's own
// logic run the simplest way; and outside exec, so that the executor's
// package holds only what runs in jobs.
package oracle

import (
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Execute runs the plan over the tables (by name).
func Execute(root *plan.Node, tables map[string]*exec.Table) (*exec.Result, error) {
	x := &executor{tables: tables}
	out, err := x.run(root)
	if err != nil {
		return nil, err
	}
	return &exec.Result{Columns: root.Output, Rows: exec.Concat(root.Output, out), Stats: x.stats}, nil
}

type executor struct {
	tables map[string]*exec.Table
	stats  []exec.ColumnStats
}

func (x *executor) run(n *plan.Node) ([]*exec.Batch, error) {
	var ins [][]*exec.Batch
	for _, in := range n.Input {
		b, err := x.run(in)
		if err != nil {
			return nil, err
		}
		ins = append(ins, b)
	}
	want := map[plan.Op]int{plan.Scan: 0, plan.Join: 2, plan.SemiJoin: 2, plan.UnionAll: 2}
	if k, ok := want[n.Op]; ok && len(ins) != k || !ok && len(ins) != 1 {
		return nil, fmt.Errorf("%s node with %d inputs", n.Op, len(ins))
	}
	switch n.Op {
	case plan.Scan:
		return x.scan(n)
	case plan.Filter:
		return filter(n.Cond, ins[0])
	case plan.Project:
		return exec.Project(n.Exprs, ins[0])
	case plan.Join:
		return hashJoin(n, ins[0], ins[1])
	case plan.SemiJoin:
		return semiJoin(n.LeftKey, ins[0], ins[1])
	case plan.Aggregate:
		return aggregate(n, ins[0])
	case plan.Distinct:
		return distinct(ins[0], len(n.Output)), nil
	case plan.Sort:
		return exec.Sort(n, ins[0]), nil
	case plan.Limit:
		return exec.LimitNode(n, ins[0]), nil
	case plan.RowNumber:
		return rowNumber(n.Col, 1+n.Offset, ins[0])
	case plan.UnionAll:
		return append(slices.Clone(ins[0]), ins[1]...), nil
	case plan.Window:
		b, err := exec.WindowRows(n, ins[0])
		return []*exec.Batch{b}, err
	}
	return nil, fmt.Errorf("unknown plan node %q", n.Op)
}

// scan reads the table's columns the node names as their kinds.
func (x *executor) scan(n *plan.Node) ([]*exec.Batch, error) {
	t, ok := x.tables[n.Table]
	if !ok {
		return nil, fmt.Errorf("no table %q", n.Table)
	}
	idx, err := exec.ScanIndex(n, t.Columns)
	if err != nil {
		return nil, err
	}
	first := len(x.stats)
	for _, c := range n.Output {
		x.stats = append(x.stats, exec.ColumnStats{Table: n.Table, Column: c.Name, Type: c.Type, Read: c.Read})
	}
	out := make([]*exec.Batch, 0, len(t.Batches))
	for _, b := range t.Batches {
		nb := &exec.Batch{N: b.N, Cols: make([]*exec.Vec, len(idx))}
		for i, j := range idx {
			nb.Cols[i] = exec.ReadAs(b.Cols[j], n.Output[i], &x.stats[first+i])
		}
		out = append(out, nb)
	}
	return out, nil
}

// filter keeps the rows where cond is true (exec.RowFilter).
func filter(cond *plan.Expr, in []*exec.Batch) ([]*exec.Batch, error) {
	return each(in, exec.NewRowFilter(cond).Apply)
}

// semiJoin keeps the rows of in whose key is among the values of column
// 0 of right: each row once, however many times its key is there.
func semiJoin(key *plan.Expr, in, right []*exec.Batch) ([]*exec.Batch, error) {
	set := exec.NewKeySet(exec.NewKeyTable())
	for _, b := range right {
		set.Add(b)
	}
	return each(in, func(b *exec.Batch) (*exec.Batch, error) { return set.Keep(key, b) })
}

// hashJoin is the equi-join n: a hash table of the right rows by key,
// probed with each left row; an outer join's unmatched right rows after
// every left row's.
func hashJoin(n *plan.Node, left, right []*exec.Batch) ([]*exec.Batch, error) {
	j := exec.NewJoin(exec.NewKeyTable(), n.LeftKey, n.RightKey, n.Input[1].Output)
	j.SetType(n.JoinType, n.Input[0].Output)
	for _, b := range right {
		if err := j.AddRight(b); err != nil {
			return nil, err
		}
	}
	out, err := each(left, j.Probe)
	if err != nil {
		return nil, err
	}
	err = j.UnmatchedRight(0, func(b *exec.Batch) error {
		out = append(out, b)
		return nil
	})
	return out, err
}

// each is what f makes of each batch, in order, but for the nil ones (a
// batch none of whose rows f keeps).
func each(in []*exec.Batch, f func(*exec.Batch) (*exec.Batch, error)) ([]*exec.Batch, error) {
	var out []*exec.Batch
	for _, b := range in {
		nb, err := f(b)
		if err != nil {
			return nil, err
		}
		if nb != nil {
			out = append(out, nb)
		}
	}
	return out, nil
}

// aggregate is the hash aggregate: one row per distinct key, the keys then
// the aggregates. Without keys (no GROUP BY) it makes one row, even over
// no input.
func aggregate(n *plan.Node, in []*exec.Batch) ([]*exec.Batch, error) {
	a := exec.NewAggregation(exec.NewKeyTable(), n.Keys, n.Aggs)
	for _, b := range in {
		if err := a.Add(b); err != nil {
			return nil, err
		}
	}
	return []*exec.Batch{a.Result()}, nil
}

// distinct keeps the first row of each distinct row.
func distinct(in []*exec.Batch, cols int) []*exec.Batch {
	var out []*exec.Batch
	d := exec.NewDistinct(exec.NewKeyTable())
	for _, b := range in {
		if nb := d.Add(b, cols); nb != nil {
			out = append(out, nb)
		}
	}
	return out
}

// rowNumber puts 1, 2, ... into column col, in row order.
func rowNumber(col int, next int64, in []*exec.Batch) ([]*exec.Batch, error) {
	out := make([]*exec.Batch, 0, len(in))
	for _, b := range in {
		nb, err := exec.NumberRows(col, next, b)
		if err != nil {
			return nil, err
		}
		next += int64(b.N)
		out = append(out, nb)
	}
	return out, nil
}
