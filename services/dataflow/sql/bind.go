package sql

import (
	"strings"

	"vitess.io/vitess/go/vt/sqlparser"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// The functions of the subset beyond the aggregates (docs/sql.md).
const (
	fnDuration = "duration_seconds"
	fnPercent  = "percent"
)

// expr binds an expression of the current clause: above the aggregate
// when the query groups (post), else over the FROM clause's row.
func (lv *level) expr(e sqlparser.Expr) (*plan.Expr, *tvar, error) {
	if lv.post {
		return lv.postExpr(e)
	}
	return lv.rowExpr(e)
}

// typed records that x's type is v's, known once the statement is bound.
func (lv *level) typed(x *plan.Expr, v *tvar) (*plan.Expr, *tvar, error) {
	lv.c.typed = append(lv.c.typed, typedExpr{x, v})
	return x, v, nil
}

// postExpr binds an expression above the aggregate: a group key, an
// aggregate, or an expression of them.
func (lv *level) postExpr(e sqlparser.Expr) (*plan.Expr, *tvar, error) {
	if i := lv.keyIndex(e); i >= 0 {
		return lv.typed(&plan.Expr{Kind: plan.ColRef, Col: i, Name: lv.keyNames[i]}, lv.keyVars[i])
	}
	switch x := e.(type) {
	case *sqlparser.ColName:
		s, err := lv.column(x)
		if err != nil {
			if a, ok := lv.aliases[x.Name.String()]; ok && x.Qualifier.IsEmpty() {
				return a.e, a.v, nil // HAVING names a SELECT item by its alias
			}
			return nil, nil, err
		}
		for i, ks := range lv.keySlots {
			if ks == s {
				return lv.typed(&plan.Expr{Kind: plan.ColRef, Col: i, Name: x.Name.String()}, lv.keyVars[i])
			}
		}
		return nil, nil, lv.err(x.Name.String(), "column "+x.Name.String(), "neither grouped by nor inside an aggregate")
	case sqlparser.AggrFunc:
		return lv.aggregate(x)
	}
	return lv.compound(e)
}

// keyIndex is the index of the group key that e is (the same text as
// the parser renders them), or -1. Only an e of a key's size is rendered:
// the nodes of one size on a path from the root are one at most, so
// the texts rendered for one size are of disjoint subtrees, and the work
// is linear in the expression (times the number of distinct key sizes),
// where rendering e at every level of postExpr's descent was quadratic.
func (lv *level) keyIndex(e sqlparser.Expr) int {
	keys := lv.keySizes[lv.c.exprSize(e)]
	if len(keys) == 0 {
		return -1
	}
	text := lv.c.render(e)
	for _, i := range keys {
		if lv.keyText[i] == text {
			return i
		}
	}
	return -1
}

// aggregate binds an aggregate call: its argument over the FROM row, the
// call itself as a column of the aggregate's output (one per distinct call).
func (lv *level) aggregate(a sqlparser.AggrFunc) (*plan.Expr, *tvar, error) {
	name := strings.ToLower(a.AggrName())
	anchor := name
	if over, ok := a.(interface{ GetOverClause() *sqlparser.OverClause }); ok && over.GetOverClause() != nil {
		return nil, nil, lv.err(anchor, "window function", "%s OVER (...) is not supported", strings.ToUpper(name))
	}
	if d, ok := a.(sqlparser.DistinctableAggr); ok && d.IsDistinct() {
		return nil, nil, lv.err(anchor, strings.ToUpper(name)+"(DISTINCT ...)", "not supported")
	}
	lookup := name
	if _, ok := a.(*sqlparser.CountStar); ok {
		lookup = "count(*)"
	}
	spec, ok := exec.LookupAggregate(lookup)
	if !ok {
		return nil, nil, lv.err(anchor, "function "+strings.ToUpper(name), "not supported")
	}
	agg := &plan.Agg{Func: spec.Func}
	result := known(plan.Number)
	if spec.Arg != exec.NoArg {
		args := a.GetArgs()
		if len(args) != 1 {
			return nil, nil, lv.err(anchor, strings.ToUpper(name), "takes one argument")
		}
		lv.post = false
		arg, v, err := lv.rowExpr(args[0])
		lv.post = true
		if err != nil {
			return nil, nil, err
		}
		if spec.Arg == exec.NumberArg {
			if err := lv.unify(v, known(plan.Number), anchor, strings.ToUpper(name)); err != nil {
				return nil, nil, err
			}
		}
		if spec.SameType {
			result = v
		}
		agg.Arg = arg
	}
	text := lv.c.render(a)
	if i, ok := lv.aggIndex[text]; ok {
		return lv.typed(&plan.Expr{Kind: plan.ColRef, Col: len(lv.keys) + i, Name: text}, lv.aggVars[i])
	}
	if lv.aggIndex == nil {
		lv.aggIndex = map[string]int{}
	}
	lv.aggIndex[text] = len(lv.aggs)
	lv.aggs = append(lv.aggs, agg)
	lv.aggText = append(lv.aggText, text)
	lv.aggVars = append(lv.aggVars, result)
	return lv.typed(&plan.Expr{Kind: plan.ColRef, Col: len(lv.keys) + len(lv.aggs) - 1, Name: text}, result)
}

// rowExpr binds an expression over the FROM clause's row.
func (lv *level) rowExpr(e sqlparser.Expr) (*plan.Expr, *tvar, error) {
	switch x := e.(type) {
	case *sqlparser.ColName:
		s, err := lv.column(x)
		if err != nil {
			return nil, nil, err
		}
		ref := &plan.Expr{Kind: plan.ColRef, Name: s.name}
		s.refs = append(s.refs, ref)
		if s.v.root().what == "" {
			s.v.root().what = "column " + s.name
		}
		return lv.typed(ref, s.v)
	case sqlparser.AggrFunc:
		return nil, nil, lv.err(strings.ToLower(x.AggrName()), "aggregate "+strings.ToUpper(x.AggrName()), "not allowed here (WHERE, GROUP BY, JOIN or inside another aggregate)")
	}
	return lv.compound(e)
}

// compound binds the forms that are the same above and below the
// aggregate: literals, operators, CASE, the functions.
func (lv *level) compound(e sqlparser.Expr) (*plan.Expr, *tvar, error) {
	switch x := e.(type) {
	case *sqlparser.Literal:
		return lv.literal(x)
	case sqlparser.BoolVal:
		v := "false"
		if x {
			v = "true"
		}
		return lv.typed(&plan.Expr{Kind: plan.Const, Value: []byte(v)}, known(plan.Bool))
	case *sqlparser.NullVal:
		return lv.typed(&plan.Expr{Kind: plan.Const, Null: true}, &tvar{})
	case *sqlparser.AndExpr:
		return lv.logic(plan.And, "and", x.Left, x.Right)
	case *sqlparser.OrExpr:
		return lv.logic(plan.Or, "or", x.Left, x.Right)
	case *sqlparser.NotExpr:
		return lv.logic(plan.Not, "not", x.Expr)
	case *sqlparser.ComparisonExpr:
		return lv.comparison(x)
	case *sqlparser.IsExpr:
		return lv.isNull(x)
	case *sqlparser.BinaryExpr:
		return lv.arith(x)
	case *sqlparser.UnaryExpr:
		return lv.unary(x)
	case *sqlparser.CaseExpr:
		return lv.caseExpr(x)
	case *sqlparser.FuncExpr:
		return lv.call(x)
	case *sqlparser.Subquery:
		return nil, nil, lv.err("select", "subquery", "a subquery is supported only as a top-level WHERE condition col IN (SELECT ...)")
	case *sqlparser.ArgumentLessWindowExpr:
		return nil, nil, lv.err(firstWord(x), "window function", "only ROW_NUMBER() OVER (ORDER BY ...) as a whole SELECT item")
	}
	w := firstWord(e)
	return nil, nil, lv.err(w, strings.ToUpper(w), "%s is not in the supported subset", sqlparser.String(e))
}

// literal binds a text or number literal; a number is read as the
// engine reads numbers, within its digits.
func (lv *level) literal(x *sqlparser.Literal) (*plan.Expr, *tvar, error) {
	switch x.Type {
	case sqlparser.StrVal:
		return lv.typed(&plan.Expr{Kind: plan.Const, Value: []byte(x.Val)}, known(plan.Text))
	case sqlparser.IntVal, sqlparser.DecimalVal:
		d, ok := value.ReadNumber([]byte(x.Val))
		if !ok && strings.Count(x.Val, ".")+value.MaxDigits < len(x.Val) {
			return nil, nil, lv.err(x.Val, "number", "more than %d digits (the limit of a number, docs/sql.md)", value.MaxDigits)
		}
		if !ok {
			return nil, nil, lv.err(x.Val, "number "+x.Val, "numbers are -?[0-9]+(.[0-9]+)?")
		}
		return lv.typed(&plan.Expr{Kind: plan.Const, Value: []byte(d.String())}, known(plan.Number))
	}
	return nil, nil, lv.err(x.Val, "literal "+x.Val, "floating-point, hexadecimal and bit literals are not supported")
}

// isNull binds x IS [NOT] NULL; IS TRUE/FALSE are refused.
func (lv *level) isNull(x *sqlparser.IsExpr) (*plan.Expr, *tvar, error) {
	fn := ""
	switch x.Right {
	case sqlparser.IsNullOp:
	case sqlparser.IsNotNullOp:
		fn = "not"
	default:
		return nil, nil, lv.err("is", "IS TRUE/FALSE", "use the boolean itself, or NOT")
	}
	arg, _, err := lv.expr(x.Left)
	if err != nil {
		return nil, nil, err
	}
	return lv.typed(&plan.Expr{Kind: plan.IsNull, Fn: fn, Args: []*plan.Expr{arg}}, known(plan.Bool))
}

// arithOps are the binary operators of the subset, as plan.Arith's Fn.
var arithOps = map[sqlparser.BinaryExprOperator]string{
	sqlparser.PlusOp: "+", sqlparser.MinusOp: "-", sqlparser.MultOp: "*", sqlparser.DivOp: "/",
}

// arith binds + - * / over numbers.
func (lv *level) arith(x *sqlparser.BinaryExpr) (*plan.Expr, *tvar, error) {
	op, ok := arithOps[x.Operator]
	if !ok {
		s := x.Operator.ToString()
		return nil, nil, lv.err(s, "operator "+s, "only + - * / are supported")
	}
	l, err := lv.number(x.Left, op)
	if err != nil {
		return nil, nil, err
	}
	r, err := lv.number(x.Right, op)
	if err != nil {
		return nil, nil, err
	}
	return lv.typed(&plan.Expr{Kind: plan.Arith, Fn: op, Args: []*plan.Expr{l, r}}, known(plan.Number))
}

// unary binds -x and +x over a number; a minus before a number literal
// is a negative literal.
func (lv *level) unary(x *sqlparser.UnaryExpr) (*plan.Expr, *tvar, error) {
	switch x.Operator {
	case sqlparser.UMinusOp:
		if lit, ok := x.Expr.(*sqlparser.Literal); ok && (lit.Type == sqlparser.IntVal || lit.Type == sqlparser.DecimalVal) {
			if d, ok := value.ReadNumber([]byte(lit.Val)); ok { // a negative literal
				return lv.typed(&plan.Expr{Kind: plan.Const, Value: []byte(d.Neg().String())}, known(plan.Number))
			}
		}
		a, err := lv.number(x.Expr, "-")
		if err != nil {
			return nil, nil, err
		}
		return lv.typed(&plan.Expr{Kind: plan.Neg, Args: []*plan.Expr{a}}, known(plan.Number))
	case sqlparser.UPlusOp:
		a, err := lv.number(x.Expr, "+")
		if err != nil {
			return nil, nil, err
		}
		return a, known(plan.Number), nil
	}
	s := x.Operator.ToString()
	return nil, nil, lv.err(strings.TrimSpace(s), "operator "+s, "not supported")
}

// number binds an operand that must be a number.
func (lv *level) number(e sqlparser.Expr, op string) (*plan.Expr, error) {
	x, v, err := lv.expr(e)
	if err != nil {
		return nil, err
	}
	return x, lv.unify(v, known(plan.Number), op, "operator "+op)
}

// logic binds AND, OR, NOT over booleans.
func (lv *level) logic(kind plan.ExprKind, word string, args ...sqlparser.Expr) (*plan.Expr, *tvar, error) {
	out := &plan.Expr{Kind: kind}
	for _, a := range args {
		x, v, err := lv.expr(a)
		if err != nil {
			return nil, nil, err
		}
		if err := lv.unify(v, known(plan.Bool), word, strings.ToUpper(word)); err != nil {
			return nil, nil, err
		}
		out.Args = append(out.Args, x)
	}
	return lv.typed(out, known(plan.Bool))
}

var comparisons = map[sqlparser.ComparisonExprOperator]string{
	sqlparser.EqualOp: "=", sqlparser.NotEqualOp: "<>", sqlparser.LessThanOp: "<",
	sqlparser.LessEqualOp: "<=", sqlparser.GreaterThanOp: ">", sqlparser.GreaterEqualOp: ">=",
}

// comparison binds = <> < <= > >= and IN (list): both sides one kind.
func (lv *level) comparison(x *sqlparser.ComparisonExpr) (*plan.Expr, *tvar, error) {
	op := x.Operator.ToString()
	anchor := strings.Fields(op)[0]
	if x.Modifier != sqlparser.Missing {
		return nil, nil, lv.err(anchor, "ANY/ALL", "not supported")
	}
	l, lvar, err := lv.expr(x.Left)
	if err != nil {
		return nil, nil, err
	}
	if fn, ok := comparisons[x.Operator]; ok {
		r, rvar, err := lv.expr(x.Right)
		if err != nil {
			return nil, nil, err
		}
		if err := lv.unify(lvar, rvar, anchor, "comparison "+fn); err != nil {
			return nil, nil, err
		}
		out := &plan.Expr{Kind: plan.Cmp, Fn: fn, Args: []*plan.Expr{l, r}}
		return lv.typed(out, known(plan.Bool))
	}
	if x.Operator != sqlparser.InOp && x.Operator != sqlparser.NotInOp {
		return nil, nil, lv.err(anchor, strings.ToUpper(op), "not supported")
	}
	list, ok := x.Right.(sqlparser.ValTuple)
	if !ok {
		return nil, nil, lv.err("select", "subquery", "col IN (SELECT ...) is supported only as a top-level WHERE condition")
	}
	out := &plan.Expr{Kind: plan.In, Args: []*plan.Expr{l}}
	for _, item := range list {
		c, cv, err := lv.compound(item)
		if err != nil {
			return nil, nil, err
		}
		if c.Kind != plan.Const {
			return nil, nil, lv.err(firstWord(item), "IN list", "an IN list holds literals")
		}
		if err := lv.unify(lvar, cv, "in", "IN list"); err != nil {
			return nil, nil, err
		}
		out.Args = append(out.Args, c)
	}
	lv.typed(out, known(plan.Bool))
	if x.Operator == sqlparser.NotInOp {
		return lv.typed(&plan.Expr{Kind: plan.Not, Args: []*plan.Expr{out}}, known(plan.Bool))
	}
	return out, known(plan.Bool), nil
}

// caseExpr binds CASE [x] WHEN ... THEN ... [ELSE ...] END; the simple
// form compares x with each WHEN value.
func (lv *level) caseExpr(x *sqlparser.CaseExpr) (*plan.Expr, *tvar, error) {
	out := &plan.Expr{Kind: plan.Case}
	result := &tvar{}
	var subject *plan.Expr
	var subjectVar *tvar
	if x.Expr != nil {
		s, v, err := lv.expr(x.Expr)
		if err != nil {
			return nil, nil, err
		}
		subject, subjectVar = s, v
	}
	for _, w := range x.Whens {
		c, cv, err := lv.expr(w.Cond)
		if err != nil {
			return nil, nil, err
		}
		if subject != nil {
			if err := lv.unify(subjectVar, cv, "when", "CASE"); err != nil {
				return nil, nil, err
			}
			c = &plan.Expr{Kind: plan.Cmp, Fn: "=", Type: plan.Bool, Args: []*plan.Expr{subject, c}}
		} else if err := lv.unify(cv, known(plan.Bool), "when", "CASE WHEN"); err != nil {
			return nil, nil, err
		}
		t, tv, err := lv.expr(w.Val)
		if err != nil {
			return nil, nil, err
		}
		if err := lv.unify(result, tv, "then", "CASE"); err != nil {
			return nil, nil, err
		}
		out.Args = append(out.Args, c, t)
	}
	if x.Else != nil {
		el, ev, err := lv.expr(x.Else)
		if err != nil {
			return nil, nil, err
		}
		if err := lv.unify(result, ev, "else", "CASE"); err != nil {
			return nil, nil, err
		}
		out.Args = append(out.Args, el)
	}
	return lv.typed(out, result)
}

// call binds the functions of the subset.
func (lv *level) call(f *sqlparser.FuncExpr) (*plan.Expr, *tvar, error) {
	name := f.Name.Lowered()
	upper := strings.ToUpper(name)
	switch name {
	case fnDuration:
		var col *sqlparser.ColName
		ok := false
		if len(f.Exprs) == 1 {
			col, ok = f.Exprs[0].(*sqlparser.ColName)
		}
		if !ok || lv.post {
			return nil, nil, lv.err(name, upper, "takes one column of the table (not an expression, not above GROUP BY)")
		}
		x, v, err := lv.rowExpr(col)
		if err != nil {
			return nil, nil, err
		}
		if err := lv.unify(v, known(durationKind), name, upper); err != nil {
			return nil, nil, err
		}
		// The scan reads the column as seconds: the reference is the value.
		lv.c.typed = append(lv.c.typed, typedExpr{x, known(plan.Number)})
		return x, known(plan.Number), nil
	case fnPercent:
		if len(f.Exprs) != 2 {
			return nil, nil, lv.err(name, upper, "takes two numbers: PERCENT(part, whole)")
		}
		out := &plan.Expr{Kind: plan.Call, Fn: plan.FnPercent}
		for _, a := range f.Exprs {
			x, err := lv.number(a, name)
			if err != nil {
				return nil, nil, err
			}
			out.Args = append(out.Args, x)
		}
		return lv.typed(out, known(plan.Number))
	}
	return nil, nil, lv.err(name, "function "+upper, "not supported (docs/sql.md lists the functions)")
}
