package sql

import (
	"fmt"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// The functions of the subset beyond the aggregates (docs/sql.md).
const (
	fnDuration = "duration_seconds"
	fnPercent  = "percent"
	fnDatePart = "date_part" // DATE_PART('field', d): EXTRACT(field FROM d)
)

// expr binds an expression of the current clause: above the aggregate
// when the query groups (post), else over the FROM clause's row.
func (lv *level) expr(e parse.Expr) (*plan.Expr, *tvar, error) {
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
func (lv *level) postExpr(e parse.Expr) (*plan.Expr, *tvar, error) {
	if i := lv.keyIndex(e); i >= 0 {
		return lv.typed(&plan.Expr{Kind: plan.ColRef, Col: i, Name: lv.keyNames[i]}, lv.keyVars[i])
	}
	switch x := e.(type) {
	case *parse.Column:
		s, err := lv.column(x)
		if err != nil {
			if a, ok := lv.aliases[x.Name]; ok && x.Table == "" {
				return a.e, a.v, nil // HAVING names a SELECT item by its alias
			}
			return nil, nil, err
		}
		for i, ks := range lv.keySlots {
			if ks == s {
				return lv.typed(&plan.Expr{Kind: plan.ColRef, Col: i, Name: x.Name}, lv.keyVars[i])
			}
		}
		return nil, nil, lv.err(x.Pos, "column "+x.Name, "neither grouped by nor inside an aggregate")
	case *parse.Call:
		if x.Over != nil {
			return lv.window(x)
		}
		if isAggregate(x) {
			return lv.aggregate(x)
		}
	}
	return lv.compound(e)
}

// keyIndex is the index of the group key that e is (the same text as
// the parser renders them), or -1. Only an e of a key's size is rendered:
// the nodes of one size on a path from the root are one at most, so
// the texts rendered for one size are of disjoint subtrees, and the work
// is linear in the expression (times the number of distinct key sizes),
// where rendering e at every level of postExpr's descent was quadratic.
func (lv *level) keyIndex(e parse.Expr) int {
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
func (lv *level) aggregate(a *parse.Call) (*plan.Expr, *tvar, error) {
	name := a.Name
	upper := strings.ToUpper(name)
	switch {
	case a.Over != nil:
		return nil, nil, lv.err(a.Pos, "window function", "%s OVER (...) is not supported", upper)
	case a.Filter != nil:
		if err := lv.filterCond(a); err != nil {
			return nil, nil, err
		}
		return lv.aggregate(filtered(a))
	case a.Distinct && (name == "min" || name == "max"):
		plain := *a
		plain.Distinct = false
		return lv.aggregate(&plain)
	}
	lookup := name
	if a.Star {
		lookup = name + "(*)"
	}
	spec, ok := exec.LookupAggregate(lookup)
	if !ok {
		return nil, nil, lv.err(a.Pos, "function "+upper, "not supported")
	}
	agg := &plan.Agg{Func: spec.Func}
	result := known(plan.Number)
	if spec.Arg != exec.NoArg {
		if len(a.Args) != 1 {
			return nil, nil, lv.err(a.Pos, upper, "takes one argument")
		}
		lv.post = false
		arg, v, err := lv.rowExpr(a.Args[0])
		lv.post = true
		if err != nil {
			return nil, nil, err
		}
		switch spec.Arg {
		case exec.NumberArg:
			if err := lv.unify(v, known(plan.Number), a.Pos, upper); err != nil {
				return nil, nil, err
			}
		case exec.BoolArg:
			if err := lv.unify(v, known(plan.Bool), a.Pos, upper); err != nil {
				return nil, nil, err
			}
		}
		if spec.SameType {
			result = v
		}
		agg.Arg = arg
	} else if len(a.Args) > 0 {
		return nil, nil, lv.err(a.Pos, upper, "takes no argument")
	}
	text := lv.c.render(a)
	if i, ok := lv.aggIndex[text]; ok {
		return lv.typed(&plan.Expr{Kind: plan.ColRef, Col: len(lv.keys) + i, Name: text}, lv.aggVars[i])
	}
	if err := lv.noteAggregate(a, agg, upper); err != nil {
		return nil, nil, err
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
func (lv *level) rowExpr(e parse.Expr) (*plan.Expr, *tvar, error) {
	switch x := e.(type) {
	case *parse.Column:
		if sub, ok := lv.usingColumn(x).(*parse.Call); ok { // a FULL JOIN's USING column (join.go)
			return lv.compound(sub)
		}
		s, err := lv.column(x)
		if err != nil {
			return nil, nil, err
		}
		return lv.colRef(s)
	case *parse.Call:
		if isAggregate(x) && x.Over == nil {
			return nil, nil, lv.err(x.Pos, "aggregate "+strings.ToUpper(x.Name), "not allowed here (WHERE, GROUP BY, JOIN or inside another aggregate)")
		}
	}
	return lv.compound(e)
}

// colRef is a reference to the column of slot s, numbered once the
// scans' columns are (finishScans).
func (lv *level) colRef(s *slot) (*plan.Expr, *tvar, error) {
	ref := &plan.Expr{Kind: plan.ColRef, Name: s.name}
	s.refs = append(s.refs, ref)
	if s.v.root().what == "" {
		s.v.root().what = "column " + s.name
	}
	return lv.typed(ref, s.v)
}

// comparisons are the comparison operators, as plan.Cmp's Fn.
var comparisons = map[string]bool{"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}

// compound binds the forms that are the same above and below the
// aggregate: literals, operators, CASE, casts, the functions.
func (lv *level) compound(e parse.Expr) (*plan.Expr, *tvar, error) {
	switch x := e.(type) {
	case *parse.Literal:
		return lv.literal(x)
	case *parse.Unary:
		if x.Op == "not" {
			return lv.logic(plan.Not, x.Pos, "NOT", x.X)
		}
		return lv.unary(x)
	case *parse.Binary:
		switch {
		case x.Op == "and":
			return lv.logic(plan.And, x.OpPos, "AND", x.L, x.R)
		case x.Op == "or":
			return lv.logic(plan.Or, x.OpPos, "OR", x.L, x.R)
		case comparisons[x.Op]:
			return lv.comparison(x)
		case strings.HasSuffix(x.Op, "like"):
			return lv.like(x)
		case x.Op == plan.FnConcat:
			return lv.concat(x)
		}
		return lv.arith(x)
	case *parse.Is:
		return lv.isNull(x)
	case *parse.In:
		return lv.inList(x)
	case *parse.Between:
		return lv.between(x)
	case *parse.Case:
		return lv.caseExpr(x)
	case *parse.Call:
		return lv.call(x)
	case *parse.Cast:
		return lv.cast(x)
	case *parse.Subquery:
		return lv.scalarSubquery(x)
	case *parse.Exists:
		return lv.existsSubquery(x)
	}
	return nil, nil, lv.err(e.Position(), "expression", "%s is not in the supported subset", parse.String(e))
}

// literal binds a text, number, boolean or NULL literal; a number is
// read as the engine reads numbers, within its digits.
func (lv *level) literal(x *parse.Literal) (*plan.Expr, *tvar, error) {
	switch x.Kind {
	case parse.StringLit:
		return lv.typed(&plan.Expr{Kind: plan.Const, Value: []byte(x.Text)}, known(plan.Text))
	case parse.BoolLit:
		return lv.typed(&plan.Expr{Kind: plan.Const, Value: []byte(x.Text)}, known(plan.Bool))
	case parse.NullLit:
		return lv.typed(&plan.Expr{Kind: plan.Const, Null: true}, &tvar{})
	}
	if strings.ContainsAny(x.Text, "eE") {
		return nil, nil, lv.err(x.Pos, "literal "+x.Text, "floating-point literals are not supported: write the digits")
	}
	return lv.number(x.Pos, x.Text, false)
}

// number binds the number text as a constant (negated when neg).
func (lv *level) number(pos int, text string, neg bool) (*plan.Expr, *tvar, error) {
	d, ok := value.ReadNumber([]byte(text))
	if !ok && strings.Count(text, ".")+value.MaxDigits < len(text) {
		return nil, nil, lv.err(pos, "number", "more than %d digits (the limit of a number, docs/sql.md)", value.MaxDigits)
	}
	if !ok {
		return nil, nil, lv.err(pos, "number "+text, "numbers are -?[0-9]+(.[0-9]+)?")
	}
	if neg {
		d = d.Neg()
	}
	return lv.typed(&plan.Expr{Kind: plan.Const, Value: []byte(d.String())}, known(plan.Number))
}

// isNull binds x IS [NOT] NULL; IS TRUE/FALSE are refused.
func (lv *level) isNull(x *parse.Is) (*plan.Expr, *tvar, error) {
	if x.What != "null" {
		if x.What == "distinct from" {
			return nil, nil, lv.err(x.IsPos, "IS DISTINCT FROM", "not supported")
		}
		return nil, nil, lv.err(x.IsPos, "IS TRUE/FALSE", "use the boolean itself, or NOT")
	}
	fn := ""
	if x.Not {
		fn = "not"
	}
	arg, _, err := lv.expr(x.X)
	if err != nil {
		return nil, nil, err
	}
	return lv.typed(&plan.Expr{Kind: plan.IsNull, Fn: fn, Args: []*plan.Expr{arg}}, known(plan.Bool))
}

// arithOps are the binary operators of the subset, as plan.Arith's Fn.
var arithOps = map[string]bool{"+": true, "-": true, "*": true, "/": true, "%": true}

// arith binds + - * / % over numbers.
func (lv *level) arith(x *parse.Binary) (*plan.Expr, *tvar, error) {
	if !arithOps[x.Op] {
		return nil, nil, lv.err(x.OpPos, "operator "+x.Op, "only + - * / %% are supported")
	}
	l, err := lv.numberArg(x.L, x.OpPos, x.Op)
	if err != nil {
		return nil, nil, err
	}
	r, err := lv.numberArg(x.R, x.OpPos, x.Op)
	if err != nil {
		return nil, nil, err
	}
	return lv.typed(&plan.Expr{Kind: plan.Arith, Fn: x.Op, Args: []*plan.Expr{l, r}}, known(plan.Number))
}

// unary binds -x and +x over a number; a minus before a number literal
// is a negative literal.
func (lv *level) unary(x *parse.Unary) (*plan.Expr, *tvar, error) {
	if lit, ok := x.X.(*parse.Literal); ok && x.Op == "-" && lit.Kind == parse.NumberLit && !strings.ContainsAny(lit.Text, "eE") {
		if _, ok := value.ReadNumber([]byte(lit.Text)); ok { // a negative literal
			return lv.number(lit.Pos, lit.Text, true)
		}
	}
	a, err := lv.numberArg(x.X, x.Pos, x.Op)
	if err != nil {
		return nil, nil, err
	}
	if x.Op == "+" {
		return a, known(plan.Number), nil
	}
	return lv.typed(&plan.Expr{Kind: plan.Neg, Args: []*plan.Expr{a}}, known(plan.Number))
}

// numberArg binds an operand of op (at pos) that must be a number.
func (lv *level) numberArg(e parse.Expr, pos int, op string) (*plan.Expr, error) {
	x, v, err := lv.expr(e)
	if err != nil {
		return nil, err
	}
	return x, lv.unify(v, known(plan.Number), pos, "operator "+op)
}

// logic binds AND, OR, NOT (word, at pos) over booleans.
func (lv *level) logic(kind plan.ExprKind, pos int, word string, args ...parse.Expr) (*plan.Expr, *tvar, error) {
	out := &plan.Expr{Kind: kind}
	for _, a := range args {
		x, v, err := lv.expr(a)
		if err != nil {
			return nil, nil, err
		}
		if err := lv.unify(v, known(plan.Bool), pos, word); err != nil {
			return nil, nil, err
		}
		out.Args = append(out.Args, x)
	}
	return lv.typed(out, known(plan.Bool))
}

// comparison binds = <> < <= > >=: both sides one kind.
func (lv *level) comparison(x *parse.Binary) (*plan.Expr, *tvar, error) {
	l, lvar, err := lv.expr(x.L)
	if err != nil {
		return nil, nil, err
	}
	r, rvar, err := lv.expr(x.R)
	if err != nil {
		return nil, nil, err
	}
	if ok, lt, rt := unify(lvar, rvar); !ok {
		return nil, nil, lv.err(x.OpPos, "comparison "+x.Op, "%s is %s and %s is %s: a comparison is of two values of one kind%s",
			lv.c.render(x.L), kindName(lt), lv.c.render(x.R), kindName(rt), castHint(lt, rt))
	}
	return lv.typed(&plan.Expr{Kind: plan.Cmp, Fn: x.Op, Args: []*plan.Expr{l, r}}, known(plan.Bool))
}

// inList binds x [NOT] IN (literals): x and the literals one kind.
func (lv *level) inList(x *parse.In) (*plan.Expr, *tvar, error) {
	if x.Sub != nil {
		return lv.inSubqueryValue(x)
	}
	l, lvar, err := lv.expr(x.X)
	if err != nil {
		return nil, nil, err
	}
	out := &plan.Expr{Kind: plan.In, Args: []*plan.Expr{l}}
	for _, item := range x.List {
		c, cv, err := lv.compound(item)
		if err != nil {
			return nil, nil, err
		}
		if c.Kind != plan.Const {
			return nil, nil, lv.err(item.Position(), "IN list", "an IN list holds literals")
		}
		if err := lv.unify(lvar, cv, x.InPos, "IN list"); err != nil {
			return nil, nil, err
		}
		out.Args = append(out.Args, c)
	}
	lv.typed(out, known(plan.Bool))
	if x.Not {
		return lv.typed(&plan.Expr{Kind: plan.Not, Args: []*plan.Expr{out}}, known(plan.Bool))
	}
	return out, known(plan.Bool), nil
}

// between binds x [NOT] BETWEEN lo AND hi as PostgreSQL defines it:
// x >= lo AND x <= hi (NOT of it for NOT BETWEEN, which is x < lo OR
// x > hi under three-valued logic). x is bound twice, to the same
// value: expressions have no side effects. SYMMETRIC is refused by the
// parser.
func (lv *level) between(x *parse.Between) (*plan.Expr, *tvar, error) {
	in := &parse.Binary{Pos: x.Pos, OpPos: x.OpPos, Op: "and",
		L: &parse.Binary{Pos: x.Pos, OpPos: x.OpPos, Op: ">=", L: x.X, R: x.Lo},
		R: &parse.Binary{Pos: x.Pos, OpPos: x.OpPos, Op: "<=", L: x.X, R: x.Hi}}
	if x.Not {
		return lv.compound(&parse.Unary{Pos: x.Pos, Op: "not", X: in})
	}
	return lv.compound(in)
}

// caseExpr binds CASE [x] WHEN ... THEN ... [ELSE ...] END; the simple
// form compares x with each WHEN value.
func (lv *level) caseExpr(x *parse.Case) (*plan.Expr, *tvar, error) {
	out := &plan.Expr{Kind: plan.Case}
	result := &tvar{}
	var subject *plan.Expr
	var subjectVar *tvar
	if x.Subject != nil {
		s, v, err := lv.expr(x.Subject)
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
			if err := lv.unify(subjectVar, cv, w.Cond.Position(), "CASE"); err != nil {
				return nil, nil, err
			}
			c = &plan.Expr{Kind: plan.Cmp, Fn: "=", Type: plan.Bool, Args: []*plan.Expr{subject, c}}
		} else if err := lv.unify(cv, known(plan.Bool), w.Cond.Position(), "CASE WHEN"); err != nil {
			return nil, nil, err
		}
		t, tv, err := lv.expr(w.Val)
		if err != nil {
			return nil, nil, err
		}
		if err := lv.unify(result, tv, w.Val.Position(), "CASE"); err != nil {
			return nil, nil, err
		}
		out.Args = append(out.Args, c, t)
	}
	if x.Else != nil {
		el, ev, err := lv.expr(x.Else)
		if err != nil {
			return nil, nil, err
		}
		if err := lv.unify(result, ev, x.Else.Position(), "CASE"); err != nil {
			return nil, nil, err
		}
		out.Args = append(out.Args, el)
	}
	return lv.typed(out, result)
}

// castKinds are the types a cast may name, by the kind they are.
var castKinds = map[string]plan.Type{
	"numeric": plan.Number, "decimal": plan.Number,
	"text": plan.Text, "varchar": plan.Text,
	"boolean": plan.Bool, "bool": plan.Bool,
}

// cast binds CAST(x AS type) and x::type. A text literal becomes a
// constant of type's kind; a text column of a table is read as that
// kind by its scan, by the kind's value rules (a value that does not
// read is NULL, and counted: castColumn); an expression of that kind
// already, or of none yet (NULL, or a column whose uses infer its kind),
// is that kind. Anything else would convert a computed value, which the
// subset does not: refused.
func (lv *level) cast(x *parse.Cast) (*plan.Expr, *tvar, error) {
	if conv, ok, err := lv.numberCast(x); ok || err != nil {
		return conv, known(plan.Number), err
	}
	kind, ok := castKinds[x.Type]
	if !ok {
		return nil, nil, lv.err(x.Pos, "CAST to "+strings.ToUpper(x.Type), "not supported: a cast names numeric, decimal(p, s), integer, bigint, smallint, text or boolean")
	}
	if lit, ok := x.X.(*parse.Literal); ok && lit.Kind == parse.StringLit && kind != plan.Text {
		text := strings.TrimSpace(lit.Text)
		if kind == plan.Number {
			return lv.number(lit.Pos, text, false)
		}
		switch strings.ToLower(text) {
		case "true", "t", "yes", "on", "1":
			return lv.typed(&plan.Expr{Kind: plan.Const, Value: []byte("true")}, known(plan.Bool))
		case "false", "f", "no", "off", "0":
			return lv.typed(&plan.Expr{Kind: plan.Const, Value: []byte("false")}, known(plan.Bool))
		}
		return nil, nil, lv.err(lit.Pos, "CAST", "%s is not a boolean", parse.String(lit))
	}
	if col, ok := x.X.(*parse.Column); ok && !lv.post {
		return lv.castColumn(col, kind, x.Pos, "CAST")
	}
	e, v, err := lv.expr(x.X)
	if err != nil {
		return nil, nil, err
	}
	if ok, from, _ := unify(v, known(kind)); !ok {
		hint := ""
		if _, col := x.X.(*parse.Column); col && lv.post {
			hint = fmt.Sprintf(" (above GROUP BY, group by the cast itself: GROUP BY %s)", lv.c.render(x))
		}
		return nil, nil, lv.err(x.Pos, "CAST", "%s is %s: a cast reads a text column of a table, or a text literal, as a number or a boolean; it converts no computed value%s", lv.c.render(x.X), kindName(from), hint)
	}
	return e, v, nil
}

// castColumn binds column col read as kind (by construct, at pos): the
// column itself when it is of that kind or of none yet (its uses infer
// it), a column of the scan of its own when it is a text column of a
// table; refused otherwise (a number is not read as a text, nor a
// subquery's computed text as a number).
func (lv *level) castColumn(col *parse.Column, kind plan.Type, pos int, construct string) (*plan.Expr, *tvar, error) {
	src, err := lv.resolve(col)
	if err != nil {
		return nil, nil, err
	}
	from := lv.kindOf(src, col.Name).root().t
	if from == "" || from == kind {
		x, v, err := lv.colRef(lv.slot(src, col.Name, ""))
		if err != nil {
			return nil, nil, err
		}
		return x, v, lv.unify(v, known(kind), pos, construct)
	}
	if from != plan.Text || src.derived {
		why := "a cast reads a text column of a table as a number or a boolean"
		if src.derived {
			why = "a cast reads a text column of a table, not one a subquery computes"
		}
		return nil, nil, lv.err(pos, construct, "%s is %s: %s", lv.c.render(col), kindName(from), why)
	}
	return lv.colRef(lv.slot(src, col.Name, kind))
}

// castHint is what an error of a comparison of kinds a and b suggests.
func castHint(a, b plan.Type) string {
	if a == plan.Text && (b == plan.Number || b == plan.Bool) || b == plan.Text && (a == plan.Number || a == plan.Bool) {
		return " (a text column is read as a number with ::numeric, as a boolean with ::boolean)"
	}
	if a == durationKind || b == durationKind {
		return " (a duration's seconds are DURATION_SECONDS(column))"
	}
	return ""
}

// call binds the functions of the subset.
func (lv *level) call(f *parse.Call) (*plan.Expr, *tvar, error) {
	name := f.Name
	upper := strings.ToUpper(name)
	switch {
	case f.Over != nil:
		return lv.window(f)
	case f.Star || f.Distinct || f.Filter != nil:
		return nil, nil, lv.err(f.Pos, upper, "* , DISTINCT and FILTER are for aggregates")
	}
	switch name {
	case fnDuration:
		if len(f.Args) != 1 {
			return nil, nil, lv.err(f.Pos, upper, "takes one column of the table (not an expression, not above GROUP BY)")
		}
		x, err := lv.durationArg(f.Args[0], f.Pos, upper)
		if err != nil {
			return nil, nil, err
		}
		return x, known(plan.Number), nil
	case plan.FnExtract, fnDatePart:
		return lv.extract(f, upper)
	case fnPercent:
		if len(f.Args) != 2 {
			return nil, nil, lv.err(f.Pos, upper, "takes two numbers: PERCENT(part, whole)")
		}
		out := &plan.Expr{Kind: plan.Call, Fn: plan.FnPercent}
		for _, a := range f.Args {
			x, err := lv.numberArg(a, f.Pos, name)
			if err != nil {
				return nil, nil, err
			}
			out.Args = append(out.Args, x)
		}
		return lv.typed(out, known(plan.Number))
	case plan.FnCoalesce, plan.FnNullIf, plan.FnGreatest, plan.FnLeast:
		return lv.coalesce(f, upper)
	case plan.FnConcatAll:
		return lv.concatAll(f, upper)
	case plan.FnLeft, plan.FnRight:
		return lv.typedCall(f, upper, plan.Text, plan.Text, plan.Number)
	case plan.FnSplitPart:
		return lv.typedCall(f, upper, plan.Text, plan.Text, plan.Text, plan.Number)
	case plan.FnStarts:
		return lv.typedCall(f, upper, plan.Bool, plan.Text, plan.Text)
	case plan.FnLower, plan.FnUpper, plan.FnTrim:
		return lv.typedCall(f, upper, plan.Text, plan.Text)
	case plan.FnLength:
		return lv.typedCall(f, upper, plan.Number, plan.Text)
	case plan.FnReplace:
		return lv.typedCall(f, upper, plan.Text, plan.Text, plan.Text, plan.Text)
	case plan.FnAbs, plan.FnFloor, plan.FnCeil:
		return lv.typedCall(f, upper, plan.Number, plan.Number)
	case plan.FnRound:
		return lv.round(f, upper)
	case plan.FnSubstr:
		if len(f.Args) == 2 {
			return lv.typedCall(f, upper, plan.Text, plan.Text, plan.Number)
		}
		return lv.typedCall(f, upper, plan.Text, plan.Text, plan.Number, plan.Number)
	}
	return nil, nil, lv.err(f.Pos, "function "+upper, "not supported (docs/sql.md lists the functions)")
}

// durationArg binds the argument a of construct (at pos), a duration
// column of the table (or a text column, read as one), as its seconds.
func (lv *level) durationArg(a parse.Expr, pos int, construct string) (*plan.Expr, error) {
	col, ok := a.(*parse.Column)
	if !ok || lv.post {
		return nil, lv.err(pos, construct, "takes one column of the table (not an expression, not above GROUP BY)")
	}
	x, _, err := lv.castColumn(col, durationKind, pos, construct)
	if err != nil {
		return nil, err
	}
	// The scan reads the column as seconds: the reference is the value.
	lv.c.typed = append(lv.c.typed, typedExpr{x, known(plan.Number)})
	return x, nil
}

// extractFields are the fields EXTRACT takes of a duration.
var extractFields = map[string]bool{"epoch": true, "day": true, "hour": true, "minute": true, "second": true}

// extract binds EXTRACT(field FROM d) and DATE_PART('field', d) of a
// duration column d: its seconds (epoch), or its days, hours (of the
// day), minutes (of the hour) or seconds (of the minute).
func (lv *level) extract(f *parse.Call, upper string) (*plan.Expr, *tvar, error) {
	var field string
	if len(f.Args) == 2 {
		if lit, ok := f.Args[0].(*parse.Literal); ok && lit.Kind == parse.StringLit {
			field = strings.ToLower(lit.Text)
		}
	}
	if !extractFields[field] {
		return nil, nil, lv.err(f.Pos, upper, "takes a field (epoch, day, hour, minute or second) of a duration column: EXTRACT(epoch FROM duration); dates and timestamps are not in the subset")
	}
	x, err := lv.durationArg(f.Args[1], f.Pos, upper)
	if err != nil {
		return nil, nil, err
	}
	fc := &plan.Expr{Kind: plan.Const, Type: plan.Text, Value: []byte(field)}
	return lv.typed(&plan.Expr{Kind: plan.Call, Fn: plan.FnExtract, Args: []*plan.Expr{x, fc}}, known(plan.Number))
}

// coalesce binds COALESCE(a, ...), GREATEST(a, ...), LEAST(a, ...) and
// NULLIF(a, b): their arguments one kind, as a CASE's values are, which
// is the result's.
func (lv *level) coalesce(f *parse.Call, upper string) (*plan.Expr, *tvar, error) {
	switch {
	case f.Name != plan.FnNullIf && len(f.Args) == 0:
		return nil, nil, lv.err(f.Pos, upper, "takes one argument or more")
	case f.Name == plan.FnNullIf && len(f.Args) != 2:
		return nil, nil, lv.err(f.Pos, upper, "takes two arguments: NULLIF(value, null_when)")
	}
	out := &plan.Expr{Kind: plan.Call, Fn: f.Name}
	result := &tvar{}
	for _, a := range f.Args {
		x, v, err := lv.expr(a)
		if err != nil {
			return nil, nil, err
		}
		if err := lv.unify(result, v, a.Position(), upper); err != nil {
			return nil, nil, err
		}
		out.Args = append(out.Args, x)
	}
	return lv.typed(out, result)
}
