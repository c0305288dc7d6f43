package physical

import (
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
)

// A cross product the binder made for a subquery of an expression (a
// scalar subquery, EXISTS, the counts of [NOT] IN: services/dataflow/sql's
// subquery.go) is a plan.Join on a constant key of the query's rows with
// a subquery's one-row aggregate. Shuffled by that key, every row of the
// query would go to the one shard its hash picks. Instead the one row is
// broadcast (Channel.Broadcast: to every instance of the shard task) and
// the join runs where the query's rows are: on the shards, partitioned
// as they were (rows still being parsed are spread by all their columns
// first), or at the gateway when they are there.

// isCross reports whether n is the cross product of a subquery.
func isCross(n *plan.Node) bool {
	return n.Op == plan.Join && n.Subquery != "" && !n.JoinType.Outer() &&
		n.LeftKey != nil && n.LeftKey.Kind == plan.Const && n.RightKey != nil && n.RightKey.Kind == plan.Const
}

// cross places the cross product n of the query's rows l with the
// subquery's row r.
func (pl *planner) cross(n *plan.Node, l, r stream) stream {
	if l.at == atSource {
		if len(l.cols) == 0 {
			l = pl.toGateway(l)
		} else {
			l = pl.shuffle(l, rewrite.ColRefs(l.cols))
		}
	}
	if l.at == atGateway {
		g, rg := pl.toGateway(l), pl.toGateway(r)
		o := pl.addOp(g.task, plan.Join, n, g.in, rg.in)
		pl.keyed = append(pl.keyed, keyedOp{o, pl.ownClass(o, []*plan.Expr{n.LeftKey})})
		return stream{at: atGateway, task: g.task, in: Input{Op: o.ID}, cols: o.Output()}
	}
	rs := pl.broadcast(r)
	o := pl.addOp(l.task, plan.Join, n, l.in, rs.in)
	pl.keyed = append(pl.keyed, keyedOp{o, pl.ownClass(o, []*plan.Expr{n.LeftKey})})
	return stream{at: atShard, task: o.Task, in: Input{Op: o.ID}, cols: o.Output(), part: l.part, class: l.class}
}

// broadcast sends s's rows to every instance of the shard task.
func (pl *planner) broadcast(s stream) stream {
	if s.at == atSource {
		s = pl.toGateway(s)
	}
	out := pl.exchange(s, nil, pl.p.Shard)
	pl.p.Channel(out.in.Channel).Broadcast = true
	out.at, out.part, out.class = atShard, nil, ""
	return out
}

// everyInstance is, in Check, the partitioning of a broadcast channel's
// rows: every instance has all of them.
var everyInstance = &plan.Expr{Kind: "every instance"}
