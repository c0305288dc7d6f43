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
	x := &node{}
	ins := opInputs(n)
	grows := make([]bool, len(ins))
	for i, in := range ins {
		x.inputs = append(x.inputs, e.build(in))
		grows[i], _ = monotone(in)
	}
	x.op = newOp(n, grows, nil)
	if s, ok := x.op.(*scanOp); ok {
		e.scans[n.Table] = append(e.scans[n.Table], s)
		e.order = append(e.order, s)
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
	return diffOf(e.epoch, e.root.Output, z), nil
}

// diffOf is the Diff of epoch's changes z of an answer of columns cols:
// each row once, its weights added up, in the Diff's order.
func diffOf(epoch int64, cols []plan.Column, z zset) *Diff {
	c := consolidate(z, cols)
	c = exec.Sort(&plan.Node{Op: plan.Sort, Output: withWeight(cols)}, []*exec.Batch{c})[0]
	return &Diff{Epoch: epoch, Columns: cols, Rows: unweighted(c), Weights: weights(c)}
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
