package incr

import (
	"fmt"

	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Op is one operator of a maintained plan on its own, outside an Engine:
// what runs a physical plan's operators over epochs (sqlops' epoch task)
// places each on its task and moves the changes between them itself. It
// is the Engine's operator, the same code: Step takes the epoch's
// changes of each of its inputs (batches whose last column is each row's
// weight, +n or -n) and returns its output's; its state between epochs
// is what the Engine keeps for it, and AppendState writes it as an
// Engine's snapshot does. It is not safe for concurrent use.
type Op struct {
	op  op
	top *topOp // an answer's (NewAnswer)
	// cols are the output's columns: a Diff's, an answer's.
	cols []plan.Column
	// shared is the table it keeps its keys in with other operators
	// (shared.go), nil: one of its own.
	shared *exec.KeyTable
}

// NewPartialAggregate returns a physical plan's partial aggregate of the
// Aggregate n (its columns: the keys, then exec.PartialColumns): at each
// epoch, for each group the epoch touched, its partial row before (-1)
// and after (+1). Over rows that only arrive it folds the epoch's rows
// into its groups (exec's partial aggregation); over rows that leave it
// computes each touched group again from its rows.
func NewPartialAggregate(n *plan.Node, grows bool) *Op {
	if grows {
		t := exec.NewKeyTable()
		return &Op{op: newAggOf(n, exec.NewPartialAggregation(t, n.Keys, exec.PartialAggs(n.Aggs)), t, nil), cols: n.Output}
	}
	return &Op{op: newRegroup(n, partial(n)), cols: n.Output}
}

// NewFinalAggregate returns a physical plan's final aggregate of n: its
// input is the shards' partial rows, as changes (NewPartialAggregate's),
// and it keeps each group's (at most one per shard, their counts added
// up), merging those of each group an epoch touches again (exec's
// MergeAggs) into the group's row before and after.
func NewFinalAggregate(n *plan.Node) *Op {
	return &Op{op: newRegroup(n, merging(n)), cols: n.Output}
}

// NewAnswer returns the answer of a plan as one operator: root is the
// top of the plan, the nodes down to its Sort (projections, filters,
// LIMIT, ROW_NUMBER) linked by their Input, and the Sort's input's rows
// are what Step takes (grows: they only arrive). Step returns the
// answer's change; Answer is the answer as of the last Step.
func NewAnswer(root *plan.Node, grows bool) (*Op, error) {
	sort, upper, err := split(root)
	if err != nil {
		return nil, err
	}
	t := newTop(root, sort, upper, grows)
	return &Op{op: subTop{t}, top: t, cols: root.Output}, nil
}

// Grows reports whether the output of an operator of kind k (a logical
// plan's) only grows as rows are appended when each of its inputs' does
// or not (ins): what NewOpIn's grows are told of the operators below.
func Grows(k plan.Op, ins []bool) (bool, error) { return growsOf(k, ins) }

// Step takes the epoch's changes of each input (in[i]: batches of the
// input's columns and a weight column) and returns the output's changes
// (batches of its columns and a weight column), and ends the epoch for
// the operator. The batches given are read until Step returns; none is
// kept (what is kept is copied), but the batches returned may be some of
// them.
func (o *Op) Step(in [][]*exec.Batch) ([]*exec.Batch, error) {
	z := make([]zset, len(in))
	for i, bs := range in {
		z[i] = bs
	}
	out, err := o.op.step(z)
	return out, err
}

// AddScan adds rows of its table to a scan's changes (columns: the
// table's header, the rows text as exec.ReadCSV reads them), each with
// weight +1: the next Step returns them, read as the scan's kinds.
func (o *Op) AddScan(columns []string, b *exec.Batch) error {
	s, ok := o.op.(*scanOp)
	if !ok {
		return fmt.Errorf("incr: rows of a table given to a %T", o.op)
	}
	return s.add(&exec.Table{Columns: columns, Batches: []*exec.Batch{b}})
}

// ScanStats are a scan's counts of the values read as NULL (nil for
// another operator).
func (o *Op) ScanStats() []exec.ColumnStats {
	if s, ok := o.op.(*scanOp); ok {
		return s.stats
	}
	return nil
}

// Answer is an answer's rows (NewAnswer), in its order, as of the last
// Step.
func (o *Op) Answer() (*exec.Result, error) {
	if o.top == nil {
		return nil, fmt.Errorf("incr: the answer of an operator that is not one")
	}
	rows, err := o.top.answer()
	if err != nil {
		return nil, err
	}
	return &exec.Result{Columns: o.cols, Rows: rows}, nil
}

// AnswerCSV is Answer's CSV (exec.Result's), written from the answer's
// rows kept in order with their lines when the nodes above its Sort are
// projections alone: an epoch then sorts and formats its new rows only,
// not the whole answer again.
func (o *Op) AnswerCSV() ([]byte, error) {
	if o.top == nil {
		return nil, fmt.Errorf("incr: the answer of an operator that is not one")
	}
	csv, ok, err := o.top.answerCSV()
	if err != nil || ok {
		return csv, err
	}
	res, err := o.Answer()
	if err != nil {
		return nil, err
	}
	return res.CSV(), nil
}

// Diff is the change an answer's Step returned, its rows once each with
// their weights added up, in Diff's order, as epoch's.
func (o *Op) Diff(epoch int64, changes []*exec.Batch) *Diff {
	return diffOf(epoch, o.cols, changes)
}

// AppendState appends the operator's state to dst, as an Engine's
// snapshot writes it: between Steps (a scan's rows added and not yet
// stepped are an error).
func (o *Op) AppendState(dst []byte) ([]byte, error) {
	if s, ok := o.op.(*scanOp); ok && len(s.pending) > 0 {
		return nil, fmt.Errorf("snapshot: rows of %s added since the last step", s.n.Table)
	}
	w := &snapcodec.Writer{B: dst}
	writeOp(w, o.op)
	return w.B, nil
}

// RestoreState reads AppendState's bytes into a fresh operator of the
// same node: an error wrapping ErrSnapshot when they are not its.
func (o *Op) RestoreState(state []byte) error {
	r := &snapcodec.Reader{B: state, Corrupt: ErrSnapshot}
	readOp(r, o.op)
	if err := r.End(); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

// SnapshotSize is about the bytes AppendState appends (a shared key
// table's not counted: what shares it writes it).
func (o *Op) SnapshotSize() int64 { return snapshotSize(o.op) }

// Bytes is about the memory the operator's state takes (Engine's
// snapshot table lists it), for a job's budget.
// A shared table's keys are not counted: what shares it counts them.
func (o *Op) Bytes() int64 {
	n := opBytes(o.op)
	if o.shared != nil {
		n -= o.shared.Bytes()
	}
	return n
}
