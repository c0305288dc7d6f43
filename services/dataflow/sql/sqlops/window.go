package sqlops

import (
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// newWindow is the operator of a Window node (plan.Window): it holds its
// rows, as a sort does (buffered: bounded by the task's limit on held
// bytes, its rows its snapshot), and computes the window functions over
// them when its input ends (exec.WindowRows). On a shard its rows are
// whole partitions (the physical planner shuffles them by the partition
// key), so each shard's answer is final for its partitions.
func newWindow(n *plan.Node, inputs [][]plan.Column) *buffered {
	return &buffered{ins: make([][]*exec.Batch, 1), cols: inputs, done: func(in [][]*exec.Batch) ([]*exec.Batch, error) {
		b, err := exec.WindowRows(n, in[0])
		if err != nil {
			return nil, err
		}
		return []*exec.Batch{b}, nil
	}}
}
