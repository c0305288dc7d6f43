package sqlgen

import (
	"math/big"
	"strconv"
)

// The constructs of Options.Functions (issue 41's "refused, though
// analysts write them daily"): a % b, casts to INTEGER, BIGINT and
// NUMERIC(p, s), and a CROSS JOIN or comma join of t and u. Their
// meanings are PostgreSQL's and DuckDB's (docs/sql.md): the remainder of
// the dividend's sign at the larger scale, NULL by zero; a cast rounds
// half away from zero, and is NULL out of its type's range, where
// DuckDB fails (an integer cast is guarded by a CASE to its range, which
// DuckDB evaluates lazily, so that the queries compare rows).

// functionNumber is one of the number constructs of Options.Functions
// over numbers of depth.
func (g *gen) functionNumber(depth int) expr {
	g.functions = true
	a := g.number(depth)
	switch g.r.IntN(3) {
	case 0: // a % b
		b := g.number(depth)
		return expr{sql: "(" + a.sql + " % " + b.sql + ")", kind: 'n', eval: func(row map[string]val) val {
			x, y := a.eval(row), b.eval(row)
			if x.null || y.null || y.num.Sign() == 0 {
				return val{null: true, kind: 'n'}
			}
			q := new(big.Rat).Quo(x.num, y.num)
			trunc := new(big.Int).Quo(q.Num(), q.Denom()) // towards zero
			r := new(big.Rat).Sub(x.num, new(big.Rat).Mul(y.num, new(big.Rat).SetInt(trunc)))
			return bounded(val{kind: 'n', num: r, scale: max(x.scale, y.scale)})
		}}
	case 1: // CAST(a AS NUMERIC(p, s))
		p, s := g.pick("38", "30"), g.r.IntN(3)
		return expr{sql: "CAST(" + a.sql + " AS NUMERIC(" + p + ", " + strconv.Itoa(s) + "))", kind: 'n', eval: func(row map[string]val) val {
			x := a.eval(row)
			if x.null {
				return x
			}
			digits, _ := strconv.Atoi(p)
			return castRound(x.num, s, digits)
		}}
	}
	// CASE WHEN a BETWEEN -1000000 AND 1000000 THEN a::int END
	typ := g.pick("INTEGER", "BIGINT", "int")
	return expr{sql: "CASE WHEN (" + a.sql + " BETWEEN -1000000 AND 1000000) THEN (" + a.sql + ")::" + typ + " END", kind: 'n', eval: func(row map[string]val) val {
		x := a.eval(row)
		if x.null || new(big.Rat).Abs(x.num).Cmp(big.NewRat(1000000, 1)) > 0 {
			return val{null: true, kind: 'n'}
		}
		return castRound(x.num, 0, 38)
	}}
}

// castRound is r rounded half away from zero to scale digits after the
// point, NULL when it has more than precision digits in all.
func castRound(r *big.Rat, scale, precision int) val {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	x := new(big.Rat).Mul(r, new(big.Rat).SetInt(p))
	twice := new(big.Rat).Add(new(big.Rat).Abs(x), new(big.Rat).Abs(x))
	twice.Add(twice, big.NewRat(1, 1)) // 2|x| + 1, floored and halved: |x| rounded half up
	n := new(big.Int).Quo(twice.Num(), twice.Denom())
	n.Rsh(n, 1)
	if x.Sign() < 0 {
		n.Neg(n)
	}
	if new(big.Int).Abs(n).Cmp(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(precision)), nil)) >= 0 {
		return val{null: true, kind: 'n'}
	}
	return val{kind: 'n', num: new(big.Rat).SetFrac(n, p), scale: scale}
}

// crossJoin is t CROSS JOIN u (or FROM t, u): every pair of src's rows
// and u's.
func (g *gen) crossJoin(src source, uRows []map[string]val) (string, []map[string]val) {
	g.functions = true
	from := src.from + " CROSS JOIN u"
	if g.r.IntN(2) == 0 {
		from = src.from + ", u"
	}
	var rows []map[string]val
	for _, a := range src.rows {
		for _, b := range uRows {
			row := map[string]val{}
			for k, v := range a {
				row[k] = v
			}
			for k, v := range b {
				row[k] = v
			}
			rows = append(rows, row)
		}
	}
	return from, rows
}
