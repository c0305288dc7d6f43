package incr

// unionAllOp is UNION ALL (plan.UnionAll): its output's changes are its
// two inputs' changes, as they are (a row's weight in the union is the
// sum of its weights in the inputs). The set operations that count
// (UNION, INTERSECT, EXCEPT) are a DISTINCT or an aggregate over it,
// which take rows back as they do over any input.
type unionAllOp struct{}

func (unionAllOp) step(in []zset) (zset, error) {
	return append(append(zset(nil), in[0]...), in[1]...), nil
}
