package sql

import (
	"strconv"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// like binds x [NOT] LIKE / ILIKE 'pattern': x a text, the pattern a
// text literal (% any characters, _ one, \ the next one literally).
func (lv *level) like(x *parse.Binary) (*plan.Expr, *tvar, error) {
	op := strings.TrimPrefix(x.Op, "not ")
	word := strings.ToUpper(x.Op)
	lit, ok := x.R.(*parse.Literal)
	if !ok || lit.Kind != parse.StringLit {
		return nil, nil, lv.err(x.R.Position(), word, "the pattern must be a text literal")
	}
	if escapedEnd(lit.Text) {
		return nil, nil, lv.err(lit.Pos, word, "the pattern must not end with the escape character \\")
	}
	l, v, err := lv.expr(x.L)
	if err != nil {
		return nil, nil, err
	}
	if err := lv.unify(v, known(plan.Text), x.OpPos, word); err != nil {
		return nil, nil, err
	}
	pattern, _, err := lv.literal(lit)
	if err != nil {
		return nil, nil, err
	}
	fn := plan.FnLike
	if op == "ilike" {
		fn = plan.FnILike
	}
	out, _, _ := lv.typed(&plan.Expr{Kind: plan.Call, Fn: fn, Args: []*plan.Expr{l, pattern}}, known(plan.Bool))
	if op == x.Op {
		return out, known(plan.Bool), nil
	}
	return lv.typed(&plan.Expr{Kind: plan.Not, Args: []*plan.Expr{out}}, known(plan.Bool))
}

// escapedEnd reports whether pattern ends with an escape character that
// escapes nothing (an odd run of backslashes at its end).
func escapedEnd(pattern string) bool {
	n := 0
	for i := len(pattern) - 1; i >= 0 && pattern[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// typedCall binds the function f whose arguments are of the kinds args,
// as many, and whose result is of kind result.
func (lv *level) typedCall(f *parse.Call, upper string, result plan.Type, args ...plan.Type) (*plan.Expr, *tvar, error) {
	if len(f.Args) != len(args) {
		return nil, nil, lv.err(f.Pos, upper, "takes %d argument(s) here, not %d (docs/sql.md lists the functions)", len(args), len(f.Args))
	}
	out := &plan.Expr{Kind: plan.Call, Fn: f.Name}
	for i, a := range f.Args {
		x, v, err := lv.expr(a)
		if err != nil {
			return nil, nil, err
		}
		if err := lv.unify(v, known(args[i]), a.Position(), upper); err != nil {
			return nil, nil, err
		}
		out.Args = append(out.Args, x)
	}
	return lv.typed(out, known(result))
}

// concatAll binds CONCAT(a, ...): texts, one after the other, a NULL
// as the empty text.
func (lv *level) concatAll(f *parse.Call, upper string) (*plan.Expr, *tvar, error) {
	if len(f.Args) == 0 {
		return nil, nil, lv.err(f.Pos, upper, "takes one argument or more")
	}
	kinds := make([]plan.Type, len(f.Args))
	for i := range kinds {
		kinds[i] = plan.Text
	}
	return lv.typedCall(f, upper, plan.Text, kinds...)
}

// concat binds a || b: two texts (PostgreSQL also writes a number or a
// boolean as text there; the subset asks for texts).
func (lv *level) concat(x *parse.Binary) (*plan.Expr, *tvar, error) {
	out := &plan.Expr{Kind: plan.Call, Fn: plan.FnConcat}
	for _, a := range []parse.Expr{x.L, x.R} {
		e, v, err := lv.expr(a)
		if err != nil {
			return nil, nil, err
		}
		if err := lv.unify(v, known(plan.Text), x.OpPos, "operator ||"); err != nil {
			return nil, nil, err
		}
		out.Args = append(out.Args, e)
	}
	return lv.typed(out, known(plan.Text))
}

// round binds ROUND(x [, digits]): digits a whole number literal, as
// DuckDB asks of a decimal's.
func (lv *level) round(f *parse.Call, upper string) (*plan.Expr, *tvar, error) {
	if len(f.Args) == 1 {
		return lv.typedCall(f, upper, plan.Number, plan.Number)
	}
	if len(f.Args) != 2 {
		return nil, nil, lv.err(f.Pos, upper, "takes a number and, maybe, the digits to keep: ROUND(x [, digits])")
	}
	arg := f.Args[1]
	if u, ok := arg.(*parse.Unary); ok && (u.Op == "-" || u.Op == "+") {
		arg = u.X
	}
	lit, ok := arg.(*parse.Literal)
	n := value.MaxDigits + 1
	if ok && lit.Kind == parse.NumberLit {
		if i, err := strconv.Atoi(lit.Text); err == nil {
			n = i
		}
	}
	if n > value.MaxDigits {
		return nil, nil, lv.err(f.Args[1].Position(), upper, "the digits must be a whole number literal from -%d to %d", value.MaxDigits, value.MaxDigits)
	}
	return lv.typedCall(f, upper, plan.Number, plan.Number, plan.Number)
}
