package sqlops

import (
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// A join emits the columns of both its inputs, the keys it joined on
// among them, and most of its readers read few of them (an aggregate of
// the civilizations after a self-join on the match): the columns no
// reader reads it does not gather (exec.Join.SetRead). readCols says
// which those are, from the physical plan: the columns the expressions
// of its readers name, through the filters and joins that pass its
// columns on. A reader whose reads it cannot list (a sort, a distinct, a
// sink: every column) makes it say that every column is read.

// readCols is which of o's output columns the operators that read it
// read; nil when every one is, or when a reader may read any.
func readCols(p *physical.Plan, o *physical.Op) []bool {
	read := make([]bool, len(o.Output()))
	if !markReads(p, o, read) || !slices.Contains(read, false) {
		return nil
	}
	return read
}

// markReads marks in read the columns of o's output that the operators
// chained to it read, and says whether it could tell (false: one may
// read any).
func markReads(p *physical.Plan, o *physical.Op, read []bool) bool {
	for _, r := range p.Readers(o) {
		if !markReader(p, r.Op, r.Input, read) {
			return false
		}
	}
	return true
}

// markReader marks in read the columns of its input k that r reads, and
// says whether it could tell.
func markReader(p *physical.Plan, r *physical.Op, k int, read []bool) bool {
	n := r.Node
	switch r.Kind {
	case physical.Exchange:
		ch := p.Channel(r.Channel)
		if ch == nil {
			return false
		}
		plan.MarkCols(read, ch.Exprs...)
		for _, rt := range ch.Routes {
			plan.MarkCols(read, rt.Cond)
		}
		return true
	case plan.Filter: // its columns are its input's
		plan.MarkCols(read, n.Cond)
		return markReads(p, r, read)
	case plan.Project:
		plan.MarkCols(read, n.Exprs...)
		return true
	case plan.Aggregate, physical.PartialAggregate:
		plan.MarkCols(read, n.Keys...)
		for _, a := range n.Aggs {
			plan.MarkCols(read, a.Arg)
		}
		return true
	case plan.Join:
		return markJoinReads(p, r, k, read)
	case plan.SemiJoin: // its columns are its left input's; the right's first is its set
		if k == 0 {
			plan.MarkCols(read, n.LeftKey)
			return markReads(p, r, read)
		}
		read[0] = true
		return true
	}
	return false
}

// markJoinReads marks in read the columns of input k of the join r
// that r reads: its key, and those its own readers read.
func markJoinReads(p *physical.Plan, r *physical.Op, k int, read []bool) bool {
	out := make([]bool, len(r.Output()))
	if !markReads(p, r, out) {
		return false
	}
	at := 0 // where input k's columns are in r's
	if k == 0 {
		plan.MarkCols(read, r.Node.LeftKey)
	} else {
		plan.MarkCols(read, r.Node.RightKey)
		at = len(out) - len(read)
	}
	if at < 0 || at+len(read) > len(out) {
		return false
	}
	for i, o := range out[at : at+len(read)] {
		read[i] = read[i] || o
	}
	return true
}
