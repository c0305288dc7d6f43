package sqlgen

import (
	"math/big"
	"strconv"
	"strings"
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
	switch g.r.IntN(4) {
	case 3: // GREATEST or LEAST of two or three: NULLs skipped
		args := []expr{a, g.number(depth)}
		if g.r.IntN(2) == 0 {
			args = append(args, g.number(depth))
		}
		name, want := "GREATEST", 1
		if g.r.IntN(2) == 0 {
			name, want = "LEAST", -1
		}
		texts := make([]string, len(args))
		for i, x := range args {
			texts[i] = x.sql
		}
		return expr{sql: name + "(" + strings.Join(texts, ", ") + ")", kind: 'n', eval: func(row map[string]val) val {
			vs := make([]val, len(args))
			for i, x := range args {
				vs[i] = x.eval(row)
			}
			return best(vs, want)
		}}
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

// functionPred is a condition over a text function of t's texts:
// CONCAT (NULL as ”), LEFT, RIGHT (a negative length drops from the
// other end) or SPLIT_PART (DuckDB's: a negative field from the end).
// LEFT and RIGHT count characters, and the differential test's DuckDB
// reads the tables as Latin-1 (a byte a character), so they read k,
// whose texts are ASCII or not UTF-8 at all (a byte a character here
// too), never s's UTF-8 "été".
func (g *gen) functionPred() expr {
	g.functions = true
	c, d := column("t", g.pick("k", "s")), column("t", g.pick("k", "s"))
	k := g.r.IntN(5) - 2
	chars := column("t", "k") // LEFT and RIGHT count characters: see below
	var sqlText string
	var f func(a, b string) string
	switch g.r.IntN(4) {
	case 0:
		sqlText = "CONCAT(" + c.sql + ", NULL, " + d.sql + ")"
		f = func(a, b string) string { return a + b }
	case 1:
		c = chars
		sqlText = "LEFT(" + c.sql + ", " + strconv.Itoa(k) + ")"
		f = func(a, _ string) string { return string(leftRight([]rune(a), k, true)) }
	case 2:
		c = chars
		sqlText = "RIGHT(" + c.sql + ", " + strconv.Itoa(k) + ")"
		f = func(a, _ string) string { return string(leftRight([]rune(a), k, false)) }
	default:
		sqlText = "SPLIT_PART(" + c.sql + ", ',', " + strconv.Itoa(k) + ")"
		f = func(a, _ string) string {
			fields := strings.Split(a, ",")
			i := k
			if i < 0 {
				i += len(fields) + 1
			}
			if i < 1 || i > len(fields) {
				return ""
			}
			return fields[i-1]
		}
	}
	lit := g.pick("a", "x", "", "y", "z")
	op := g.pick("=", "<>", ">=")
	return expr{sql: "(" + sqlText + " " + op + " '" + lit + "')", kind: 'b', eval: func(row map[string]val) val {
		x, y := c.eval(row), d.eval(row)
		if x.null { // an outer join's NULL
			return val{null: true, kind: 'b'}
		}
		v := f(x.text, y.text)
		return val{kind: 'b', b: map[string]bool{"=": v == lit, "<>": v != lit, ">=": v >= lit}[op]}
	}}
}

// leftRight is LEFT (left) or RIGHT of the characters s: the first (last)
// k, all but the last (first) -k when k < 0.
func leftRight(s []rune, k int, left bool) []rune {
	if k < 0 {
		k = max(len(s)+k, 0)
	}
	k = min(k, len(s))
	if left {
		return s[:k]
	}
	return s[len(s)-k:]
}

// boolAggs are BOOL_AND and BOOL_OR of a condition: whether every (some)
// value that is not NULL is true, NULL when none is not NULL.
func (g *gen) boolAggs() []aggGen {
	cond := g.pred(1)
	fold := func(and bool) func(rs []map[string]val) val {
		return func(rs []map[string]val) val {
			out := val{null: true, kind: 'b'}
			for _, r := range rs {
				if v := cond.eval(r); !v.null {
					if out.null {
						out = v
					} else if v.b != and {
						out.b = v.b
					}
				}
			}
			return out
		}
	}
	return []aggGen{{"BOOL_AND(" + cond.sql + ")", fold(true)}, {"BOOL_OR(" + cond.sql + ")", fold(false)}}
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
	rows := joinRows(src.rows, uRows, nil, nil, false, false, func(_, _ map[string]val) bool { return true }) // join.go
	return from, rows
}
