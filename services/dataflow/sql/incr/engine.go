package incr

import (
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Engine maintains one query's answer over epochs: Append adds rows to
// the epoch, Commit ends it and returns the answer's change, Answer is
// the answer as of the last Commit. It is not safe for concurrent use.
// An error of Append or Commit leaves it unusable (every later call
// returns that error): its state may hold part of an epoch.
type Engine struct {
	root  *plan.Node
	scans map[string][]*scanOp
	order []*scanOp // in oracle.Execute's order (its Stats)
	below *node     // the plan below the answer's Sort
	top   *topOp
	epoch int64
	err   error
}

// New returns the engine of a plan (services/dataflow/sql's Compile's,
// optionally rewrite.Optimize's) at epoch 0: no rows. The plan is read,
// never modified; Check's error when the engine does not maintain it.
func New(root *plan.Node) (*Engine, error) {
	if err := Check(root); err != nil {
		return nil, err
	}
	sort, upper, err := split(root)
	if err != nil {
		return nil, err
	}
	e := &Engine{root: root, scans: map[string][]*scanOp{}}
	e.below = e.build(sort.Input[0])
	mono, err := monotone(sort.Input[0])
	if err != nil {
		return nil, err
	}
	e.top = newTop(root, sort, upper, mono)
	return e, nil
}

// build makes the operators of the subtree (Check has passed it).
func (e *Engine) build(n *plan.Node) *node {
	if n.Op == plan.Limit || n.Op == plan.RowNumber {
		// A subquery's LIMIT or ROW_NUMBER: the nodes down to its Sort
		// are one operator, as the answer's are.
		sort, upper, _ := split(n)
		grows, _ := monotone(sort.Input[0])
		return &node{op: subTop{newTop(n, sort, upper, grows)}, inputs: []*node{e.build(sort.Input[0])}}
	}
	if n.Op == plan.Filter && n.Input[0].Op == plan.Aggregate {
		// HAVING, fused with its aggregate when that is an aggOp.
		agg := n.Input[0]
		if grows, _ := monotone(agg.Input[0]); grows {
			return &node{op: newAgg(agg, n.Cond), inputs: []*node{e.build(agg.Input[0])}}
		}
	}
	x := &node{}
	for _, in := range n.Input {
		x.inputs = append(x.inputs, e.build(in))
	}
	switch n.Op {
	case plan.Scan:
		s := newScan(n)
		e.scans[n.Table] = append(e.scans[n.Table], s)
		e.order = append(e.order, s)
		x.op = s
	case plan.Filter:
		x.op = filterOp{exec.NewRowFilter(n.Cond)}
	case plan.Project:
		x.op = projectOp{n.Exprs}
	case plan.Sort:
		x.op = passOp{}
	case plan.Join:
		x.op = newJoin(n)
	case plan.SemiJoin:
		grows, _ := monotone(n.Input[1])
		x.op = newSemi(n, grows)
	case plan.Aggregate:
		if grows, _ := monotone(n.Input[0]); grows {
			x.op = newAgg(n, nil)
		} else {
			x.op = newRegroup(n)
		}
	case plan.Distinct:
		mono, _ := monotone(n.Input[0])
		x.op = newDistinct(n, mono)
	}
	return x
}

// Append adds rows of a table (its text, as exec.ReadCSV reads a file:
// columns by name) to the current epoch. A table the query does not read
// is ignored. The engine reads the rows until Commit returns, and keeps
// none of their memory after.
func (e *Engine) Append(table string, rows *exec.Table) error {
	if e.err != nil {
		return e.err
	}
	for _, s := range e.scans[table] {
		if err := s.add(rows); err != nil {
			e.err = fmt.Errorf("append to %s: %w", table, err)
			return e.err
		}
	}
	return nil
}

// Diff is the change of the answer an epoch made: rows and, for each,
// how many copies of it the epoch added (+n) or took away (-n); a row
// once, in the order of its columns then its weight (-n first).
// Materialize's SUBSCRIBE shows a change so, its count as mz_diff.
type Diff struct {
	Epoch   int64
	Columns []plan.Column
	Rows    *exec.Batch
	Weights []int64
}

// Result is the change as a result of one more column, "diff", the
// weight: its CSV is the change as exec writes a result.
func (d *Diff) Result() *exec.Result {
	rows := weighted(d.Rows, 0)
	rows.Cols[len(rows.Cols)-1] = weightVec(d.Weights)
	return &exec.Result{Columns: withWeight(d.Columns), Rows: rows}
}

// Commit ends the epoch: its rows are now part of the answer, whose
// change it returns. The first Commit's change is the whole first
// version (over no rows, a query without GROUP BY has a row).
func (e *Engine) Commit() (*Diff, error) {
	if e.err != nil {
		return nil, e.err
	}
	d, err := e.commit()
	if err != nil {
		e.err = fmt.Errorf("epoch %d: %w", e.epoch+1, err)
		return nil, e.err
	}
	return d, nil
}

func (e *Engine) commit() (*Diff, error) {
	z, err := e.below.step()
	if err != nil {
		return nil, err
	}
	if z, err = e.top.step(z); err != nil {
		return nil, err
	}
	e.epoch++
	cols := e.root.Output
	c := consolidate(z, cols)
	c = exec.Sort(&plan.Node{Op: plan.Sort, Output: withWeight(cols)}, []*exec.Batch{c})[0]
	return &Diff{Epoch: e.epoch, Columns: cols, Rows: unweighted(c), Weights: weights(c)}, nil
}

// Epoch is the number of epochs committed.
func (e *Engine) Epoch() int64 { return e.epoch }

// Answer is the answer over the rows of every committed epoch, as
// oracle.Execute gives it over them: its CSV is the batch job's file, byte
// for byte. Before the first Commit there is no version: no rows. Its Stats count the values read as NULL over every epoch
// (those appended since the last Commit included).
func (e *Engine) Answer() (*exec.Result, error) {
	if e.err != nil {
		return nil, e.err
	}
	rows, err := e.top.answer()
	if err != nil {
		return nil, err
	}
	var stats []exec.ColumnStats
	for _, s := range e.order {
		stats = append(stats, s.stats...)
	}
	return &exec.Result{Columns: slices.Clone(e.root.Output), Rows: rows, Stats: stats}, nil
}
