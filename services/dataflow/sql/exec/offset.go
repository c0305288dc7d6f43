package exec

import "github.com/wololo/wololo/services/dataflow/sql/plan"

// LimitNode is a Limit node's rows of in: the first n.Offset skipped,
// then the first n.N of the rest (all of them when n.N is -1).
func LimitNode(n *plan.Node, in []*Batch) []*Batch {
	in = Skip(n.Offset, in)
	if n.N < 0 {
		return in
	}
	return limit(n.N, in)
}

// Skip is in without its first n rows.
func Skip(n int64, in []*Batch) []*Batch {
	var out []*Batch
	for _, b := range in {
		if n >= int64(b.N) {
			n -= int64(b.N)
			continue
		}
		if n > 0 {
			rows := make([]int32, 0, b.N-int(n))
			for i := int32(n); i < int32(b.N); i++ {
				rows = append(rows, i)
			}
			b, n = gatherBatch(b, rows), 0
		}
		out = append(out, b)
	}
	return out
}
