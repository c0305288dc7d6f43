package sqlops

import "github.com/wololo/wololo/services/dataflow/sql/exec"

// unionAll is UNION ALL (plan.UnionAll): the batches of both its inputs
// passed on as they come (the physical plan gives both the same
// columns). It holds nothing, so it has no snapshot.
type unionAll struct{}

func (unionAll) Apply(_ int, b *exec.Batch, out Out) error {
	emit([]*exec.Batch{b}, out)
	return nil
}

func (unionAll) Finish(Out) error { return nil }
