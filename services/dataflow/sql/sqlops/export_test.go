package sqlops

import (
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
)

// RunRestarting is Run with every operator instance with state restarted
// from its snapshot after the number of its input batches at returns.
func RunRestarting(p *physical.Plan, tables map[string]*exec.Table, at func(op, instance, batches int) int) (*Result, error) {
	return run(p, tables, at)
}

// RunKeys runs p and returns the number of keys in its keyed operators'
// tables at the end; own: a table per operator, not per Plan.Tables entry.
func RunKeys(p *physical.Plan, tables map[string]*exec.Table, own bool) (*Result, int, error) {
	return runKeys(p, tables, nil, own)
}
