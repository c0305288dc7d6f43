package sql

import (
	"vitess.io/vitess/go/vt/sqlparser"

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

// whereClause binds WHERE (none when where is nil), conjunct by conjunct.
func (lv *level) whereClause(where *sqlparser.Where) (whereClause, error) {
	var w whereClause
	if where == nil {
		return w, nil
	}
	lv.at("where")
	for _, conj := range conjuncts(where.Expr) {
		if cmp, ok := conj.(*sqlparser.ComparisonExpr); ok && cmp.Operator == sqlparser.InOp {
			if sq, ok := cmp.Right.(*sqlparser.Subquery); ok {
				s, err := lv.inSubquery(cmp.Left, sq)
				if err != nil {
					return w, err
				}
				w.semis = append(w.semis, s)
				continue
			}
		}
		e, v, err := lv.expr(conj)
		if err != nil {
			return w, err
		}
		if err := lv.unify(v, known(plan.Bool), "where", "WHERE"); err != nil {
			return w, err
		}
		w.filters = append(w.filters, e)
	}
	return w, nil
}

// inSubquery binds the WHERE conjunct left IN (sq): the subquery compiled
// as a SELECT of its own, of one column of left's kind.
func (lv *level) inSubquery(left sqlparser.Expr, sq *sqlparser.Subquery) (semiJoin, error) {
	key, kv, err := lv.expr(left)
	if err != nil {
		return semiJoin{}, err
	}
	inner, ok := sq.Select.(*sqlparser.Select)
	if !ok {
		return semiJoin{}, lv.err("select", "subquery", "an IN subquery is one SELECT")
	}
	sub, err := lv.c.selectPlan(inner, true)
	if err != nil {
		return semiJoin{}, err
	}
	if len(sub.Output) != 1 {
		return semiJoin{}, lv.err("select", "subquery", "an IN subquery selects one column, not %d", len(sub.Output))
	}
	if err := lv.unify(kv, lv.c.outVar(sub), "in", "IN (SELECT ...)"); err != nil {
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

func conjuncts(e sqlparser.Expr) []sqlparser.Expr { return appendConjuncts(nil, e) }

// appendConjuncts appends e's conjuncts to dst: one slice for the whole
// chain, where concatenating each side's would copy a chain of n ANDs
// n times.
func appendConjuncts(dst []sqlparser.Expr, e sqlparser.Expr) []sqlparser.Expr {
	if a, ok := e.(*sqlparser.AndExpr); ok {
		return appendConjuncts(appendConjuncts(dst, a.Left), a.Right)
	}
	return append(dst, e)
}
