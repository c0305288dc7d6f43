package physical

import (
	"errors"
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// A Window node (plan.Window) computes over whole partitions, which it
// sorts: with PARTITION BY, in the shard task, its input shuffled by the
// partition key (not again when it is partitioned by a part of that key
// already: each shard then has whole partitions), each shard computing
// its partitions; without, one partition, at the gateway. Its output
// keeps its input's columns where they were, so it stays partitioned as
// its input; its state is its rows, not a key table.

// window places a Window node.
func (pl *planner) window(n *plan.Node) (stream, error) {
	in, err := pl.place(n.Input[0])
	if err != nil {
		return stream{}, err
	}
	if len(n.Partition) == 0 {
		return pl.chain(pl.toGateway(in), n.Op, n), nil
	}
	if in.at != atShard || covering(in.part, n.Partition) == nil {
		in = pl.colocate(in, n.Partition)
	}
	return pl.chain(in, n.Op, n), nil
}

// checkWindow checks a Window operator over columns in, partitioned as
// part, in a task of replicas instances: it reads its input's columns,
// and sees whole partitions.
func checkWindow(n *plan.Node, in []plan.Column, part [][]*plan.Expr, replicas int) ([][]*plan.Expr, error) {
	exprs := append([]*plan.Expr(nil), n.Partition...)
	for _, k := range n.WinOrder {
		exprs = append(exprs, k.Expr)
	}
	for _, f := range n.WinFuncs {
		exprs = append(exprs, f.Arg)
	}
	for _, e := range exprs {
		if err := reads(e, len(in)); err != nil {
			return nil, fmt.Errorf("window: %w", err)
		}
	}
	if replicas > 1 && (len(n.Partition) == 0 || covering(part, n.Partition) == nil) {
		return nil, errors.New("runs before its input is partitioned by a part of its partition key")
	}
	return part, nil
}
