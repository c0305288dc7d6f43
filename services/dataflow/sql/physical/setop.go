package physical

import (
	"errors"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
)

// UNION ALL (plan.UnionAll), the one operator of the set operations
// (services/dataflow/sql binds UNION, INTERSECT and EXCEPT as a DISTINCT
// or an aggregate over one): it passes the rows of both its inputs on,
// and is placed where they are, with no shuffle of its own:
//
//   - under a keyed operator (UNION's DISTINCT, INTERSECT's and EXCEPT's
//     aggregate by the whole row, a GROUP BY of a UNION ALL subquery),
//     each input is shuffled by that operator's key to the shards, as the
//     operator's own input would be, and the UNION ALL runs there with
//     its output partitioned by the key: the operator runs complete on
//     each shard (groupedInput);
//   - else in the shard task when both inputs are there, partitioned by
//     what partitions both alike; else at the gateway, where each input
//     is sent (a table's rows on the route of its channel to the
//     gateway, as a filter's are).

// groupedInput places the input of an aggregate or a DISTINCT n: a
// UNION ALL's inputs each shuffled by n's key, when it is one and has a
// key.
func (pl *planner) groupedInput(n *plan.Node) (stream, error) {
	in := n.Input[0]
	if in.Op != plan.UnionAll {
		return pl.place(in)
	}
	keys := n.Keys
	if n.Op == plan.Distinct {
		keys = rewrite.ColRefs(in.Output)
	}
	if len(keys) == 0 {
		return pl.unionAll(in, nil)
	}
	return pl.unionAll(in, keys)
}

// unionAll places the UNION ALL n: its inputs shuffled by key to the
// shards (key nil: where they are, see the comment above).
func (pl *planner) unionAll(n *plan.Node, key []*plan.Expr) (stream, error) {
	var ins []stream
	for _, x := range n.Input {
		s, err := pl.place(x)
		if err != nil {
			return stream{}, err
		}
		ins = append(ins, s)
	}
	if key != nil {
		for i := range ins {
			ins[i] = pl.colocate(ins[i], key)
		}
	}
	if ins[0].at == atShard && ins[1].at == atShard && ins[0].task == ins[1].task {
		o := pl.addOp(ins[0].task, plan.UnionAll, n, ins[0].in, ins[1].in)
		out := stream{at: atShard, task: o.Task, in: Input{Op: o.ID}, cols: o.Output(), part: commonParts(ins[0].part, ins[1].part)}
		if len(out.part) > 0 {
			pl.union(ins[0].class, ins[1].class)
			out.class = ins[0].class
		} else {
			out.class = pl.ownClass(o, nil)
		}
		return out, nil
	}
	g0, g1 := pl.toGateway(ins[0]), pl.toGateway(ins[1])
	o := pl.addOp(g0.task, plan.UnionAll, n, g0.in, g1.in)
	return stream{at: atGateway, task: o.Task, in: Input{Op: o.ID}, cols: o.Output()}, nil
}

// commonParts are the partitioning keys both a and b have.
func commonParts(a, b [][]*plan.Expr) [][]*plan.Expr {
	var out [][]*plan.Expr
	for _, alt := range a {
		if slices.ContainsFunc(b, func(x []*plan.Expr) bool { return keyString(x) == keyString(alt) }) {
			out = append(out, alt)
		}
	}
	return out
}

// checkUnionAll checks a UNION ALL's inputs (the same number of columns,
// of the same types) and returns how its output is partitioned: by what
// partitions both.
func checkUnionAll(ins [][]plan.Column, inParts [][][]*plan.Expr) ([][]*plan.Expr, error) {
	if len(ins[0]) != len(ins[1]) {
		return nil, errors.New("UNION ALL of inputs of different numbers of columns")
	}
	for i := range ins[0] {
		if ins[0][i].Type != ins[1][i].Type {
			return nil, errors.New("UNION ALL of inputs of different types")
		}
	}
	return commonParts(inParts[0], inParts[1]), nil
}
