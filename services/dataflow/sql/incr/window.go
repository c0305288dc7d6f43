package incr

import (
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// A window function (plan.Window) over rows that arrive: a new row
// changes the values of every row of its partition (a rank, a running
// sum), so the operator is regroupOp keyed by the partition: each
// partition an epoch touches is computed again from its rows
// (exec.WindowRows), its old rows retracted and its new ones added. Its
// work per epoch is the rows of the partitions the epoch touches; a
// window without PARTITION BY is one partition, computed again whole in
// each epoch that adds rows. Its state is its input's rows, kept by
// partition (their snapshot is regroupOp's).

// newWindow is the operator of the Window node n.
func newWindow(n *plan.Node) *regroupOp {
	keyed := *n
	keyed.Keys = n.Partition
	nin := len(n.Output) - len(n.WinFuncs)
	return newRegroup(&keyed, aggregation{window: func(b *exec.Batch) (*exec.Batch, error) {
		rows, err := exec.WindowRows(n, []*exec.Batch{{N: b.N, Cols: b.Cols[:nin]}})
		if err != nil {
			return nil, fmt.Errorf("window: %w", err)
		}
		return rows, nil
	}})
}
