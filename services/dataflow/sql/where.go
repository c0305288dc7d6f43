package sql

import (
	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// whereClause is a bound WHERE: its conjuncts that are conditions over
// the FROM row, and those that are col IN (SELECT ...), each a semi-join.
type whereClause struct {
	filters []*plan.Expr
	semis   []semiJoin
}

// semiJoin is a WHERE conjunct key IN (SELECT ...): the key over the FROM
// row and the subquery's plan, of one column.
type semiJoin struct {
	key *plan.Expr
	sub *plan.Node
}

// whereClause binds WHERE (none when there is none), conjunct by conjunct.
func (lv *level) whereClause(sel *parse.Select) (whereClause, error) {
	var w whereClause
	if sel.Where == nil {
		return w, nil
	}
	for _, conj := range conjuncts(sel.Where) {
		if in, ok := conj.(*parse.In); ok && in.Sub != nil && !in.Not {
			s, err := lv.inSubquery(in)
			if err != nil {
				return w, err
			}
			w.semis = append(w.semis, s)
			continue
		}
		e, v, err := lv.expr(conj)
		if err != nil {
			return w, err
		}
		if err := lv.unify(v, known(plan.Bool), sel.WherePos, "WHERE"); err != nil {
			return w, err
		}
		w.filters = append(w.filters, e)
	}
	return w, nil
}

// inSubquery binds the WHERE conjunct x IN (SELECT ...): the subquery
// compiled as a SELECT of its own, of one column of x's kind.
func (lv *level) inSubquery(in *parse.In) (semiJoin, error) {
	key, kv, err := lv.expr(in.X)
	if err != nil {
		return semiJoin{}, err
	}
	sub, err := lv.subSelect(in.Sub)
	if err != nil {
		return semiJoin{}, err
	}
	if len(sub.Output) != 1 {
		return semiJoin{}, lv.err(in.Sub.Pos, "subquery", "an IN subquery selects one column, not %d", len(sub.Output))
	}
	if err := lv.unify(kv, lv.c.outVar(sub), in.InPos, "IN (SELECT ...)"); err != nil {
		return semiJoin{}, err
	}
	return semiJoin{key, sub}, nil
}

func andAll(es []*plan.Expr) *plan.Expr {
	e := es[0]
	for _, x := range es[1:] {
		e = &plan.Expr{Kind: plan.And, Type: plan.Bool, Args: []*plan.Expr{e, x}}
	}
	return e
}

func conjuncts(e parse.Expr) []parse.Expr { return appendConjuncts(nil, e) }

// appendConjuncts appends e's conjuncts to dst: one slice for the whole
// chain, where concatenating each side's would copy a chain of n ANDs
// n times.
func appendConjuncts(dst []parse.Expr, e parse.Expr) []parse.Expr {
	if a, ok := e.(*parse.Binary); ok && a.Op == "and" {
		return appendConjuncts(appendConjuncts(dst, a.L), a.R)
	}
	return append(dst, e)
}
