package ops

import (
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
)

// RunRestarting is Run with every operator instance with state restarted
// from its snapshot after the number of its input batches at returns.
func RunRestarting(p *physical.Plan, tables map[string]*exec.Table, at func(op, instance, batches int) int) (*Result, error) {
	return run(p, tables, at)
}
