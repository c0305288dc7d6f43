package sql

import (
	"strconv"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// intBits are the integer types a cast may name, by their bits.
var intBits = map[string]int{
	"smallint": 16, "int2": 16,
	"integer": 32, "int": 32, "int4": 32,
	"bigint": 64, "int8": 64,
}

// numberCast binds a cast that converts a number (docs/sql.md "Casts"):
// to an integer type (x::int, CAST(x AS bigint)), rounded half away from
// zero as DuckDB rounds a DECIMAL, and to numeric(p, s) or decimal(p, s),
// rounded to scale s; a value outside the type's range is NULL. x is a
// number, a text column of a table or a text literal read as one (as
// ::numeric reads them). ok is false when x.Type is none of those types.
func (lv *level) numberCast(x *parse.Cast) (e *plan.Expr, ok bool, err error) {
	name, params, _ := strings.Cut(x.Type, "(")
	construct := "CAST to " + strings.ToUpper(x.Type)
	var args []*plan.Expr
	fn := plan.FnCastDecimal
	switch bits, isInt := intBits[name]; {
	case isInt && params == "":
		fn = plan.FnCastInt
		args = []*plan.Expr{numConst(strconv.Itoa(bits))}
	case (name == "numeric" || name == "decimal") && params != "":
		ps := strings.Split(strings.TrimSuffix(params, ")"), ",")
		p, err := strconv.Atoi(ps[0])
		s := 0
		if err == nil && len(ps) == 2 {
			s, err = strconv.Atoi(ps[1])
		}
		if err != nil || len(ps) > 2 || p < 1 || p > 38 || s < 0 || s > p {
			return nil, true, lv.err(x.Pos, construct, "a decimal's precision is 1 to 38 and its scale 0 to the precision")
		}
		args = []*plan.Expr{numConst(strconv.Itoa(p)), numConst(strconv.Itoa(s))}
	default:
		return nil, false, nil
	}
	v, _, err := lv.cast(&parse.Cast{Pos: x.Pos, X: x.X, Type: "numeric"})
	if err != nil {
		return nil, true, err
	}
	out := &plan.Expr{Kind: plan.Call, Fn: fn, Args: append([]*plan.Expr{v}, args...)}
	lv.typed(out, known(plan.Number))
	return out, true, nil
}
