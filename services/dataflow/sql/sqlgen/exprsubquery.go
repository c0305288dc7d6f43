package sqlgen

import "math/big"

// The subqueries of expressions (Options.ExprSubqueries): uncorrelated,
// each reading u as v, so that their values are the same for every row
// of the query and the naive evaluator computes them once from u's rows.

// uThreshold is a drawn condition v.m > C of a subquery's WHERE, its
// text and which of u's rows pass it.
func (g *gen) uThreshold() (string, []map[string]val) {
	c := g.pick("0", "1", "2", "-5", "10")
	lim, _ := new(big.Rat).SetString(c)
	var kept []map[string]val
	for _, r := range g.uRows {
		if m := readNum(r["u.m"].text); !m.null && m.num.Cmp(lim) > 0 {
			kept = append(kept, r)
		}
	}
	return "v.m > " + c, kept
}

// scalarSubquery is a number drawn as (SELECT MAX|MIN|MAX - MIN|COUNT
// ... FROM u v WHERE v.m > C): one row, NULL when no row passes but of
// COUNT. Not SUM: DuckDB types it DECIMAL(38, s), and a COALESCE or CASE
// of it with a number of a larger scale rounds there to fit 38 digits
// (docs/sql.md "Numbers"; tools/duckdb pins it), where ours is exact.
func (g *gen) scalarSubquery() expr {
	g.exprSub = true
	cond, rows := g.uThreshold()
	ms := make([]val, len(rows))
	for i, r := range rows {
		ms[i] = readNum(r["u.m"].text)
	}
	var sqlText string
	var v val
	switch g.r.IntN(4) {
	case 0:
		sqlText, v = "MAX(v.m)", best(ms, 1)
	case 1:
		sqlText, v = "MIN(v.m)", best(ms, -1)
	case 2:
		sqlText = "MAX(v.m) - MIN(v.m)"
		if hi, lo := best(ms, 1), best(ms, -1); !hi.null {
			v = val{kind: 'n', num: new(big.Rat).Sub(hi.num, lo.num), scale: max(hi.scale, lo.scale)}
		} else {
			v = hi
		}
	default:
		sqlText, v = "COUNT(*)", intVal(len(rows))
	}
	return expr{sql: "(SELECT " + sqlText + " FROM u v WHERE " + cond + ")", kind: 'n', eval: func(map[string]val) val { return v }}
}

// subqueryPred is a condition drawn as [NOT] EXISTS (SELECT ...) or x
// [NOT] IN (SELECT ...) of u, in SQL's three-valued logic: x IN S is
// true when x is among S, false when S is empty, NULL when x or a value
// of S is NULL, else false.
func (g *gen) subqueryPred() expr {
	g.exprSub = true
	cond, rows := g.uThreshold()
	not := g.r.IntN(2) == 0
	if g.r.IntN(3) == 0 {
		sqlText := "EXISTS (SELECT 1 FROM u v WHERE " + cond + ")"
		if not {
			sqlText = "NOT " + sqlText
		}
		b := (len(rows) > 0) != not
		return expr{sql: "(" + sqlText + ")", kind: 'b', eval: func(map[string]val) val { return val{kind: 'b', b: b} }}
	}
	var x expr
	var set []val
	sub := "SELECT v.m FROM u v WHERE " + cond
	if g.r.IntN(2) == 0 { // a text key: u's k of the rows that pass
		x = column("t", g.pick("k", "s"))
		sub = "SELECT v.k FROM u v WHERE " + cond
		for _, r := range rows {
			set = append(set, val{kind: 't', text: r["u.k"].text})
		}
	} else {
		x = g.number(1)
		if g.r.IntN(2) == 0 { // every row of u, the NULL m among them
			sub = "SELECT v.m FROM u v"
			rows = g.uRows
		}
		for _, r := range rows {
			set = append(set, readNum(r["u.m"].text))
		}
	}
	word := map[bool]string{false: " IN (", true: " NOT IN ("}[not]
	return expr{sql: "(" + x.sql + word + sub + "))", kind: 'b', eval: func(row map[string]val) val {
		r := inSet(x.eval(row), set)
		if !r.null {
			r.b = r.b != not
		}
		return r
	}}
}

// inSet is x IN set in three-valued logic.
func inSet(x val, set []val) val {
	if len(set) == 0 {
		return val{kind: 'b'}
	}
	sawNull := x.null
	for _, s := range set {
		switch {
		case s.null:
			sawNull = true
		case x.null:
		case x.kind == 'n' && x.num.Cmp(s.num) == 0, x.kind == 't' && x.text == s.text:
			return val{kind: 'b', b: true}
		}
	}
	if sawNull {
		return val{null: true, kind: 'b'}
	}
	return val{kind: 'b'}
}

// PlacedSubqueries are subqueries of expressions in every place a query
// holds one: ORDER BY, a CASE grouped by, a subquery in FROM, a CTE read
// by NOT IN, nested in one another, an aggregate's argument, FILTER,
// under UNION, SELECT DISTINCT: the oracle's tests run them on every
// shape, tools/duckdb holds their values to DuckDB's.
var PlacedSubqueries = []string{
	"SELECT t.k FROM t ORDER BY (SELECT COUNT(*) FROM u) + t.n + 0, 1",
	"SELECT CASE WHEN t.k IN (SELECT u.k FROM u WHERE u.m + 0 > 1) THEN 'y' ELSE 'n' END AS c, COUNT(*) FROM t GROUP BY 1 ORDER BY 1",
	"SELECT x.k FROM (SELECT t.k FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.m + 0 > 4)) x ORDER BY 1",
	"WITH w AS (SELECT u.k FROM u WHERE u.m + 0 > 1) SELECT t.k FROM t WHERE t.k NOT IN (SELECT k FROM w) ORDER BY 1",
	"SELECT t.k FROM t WHERE t.n + 0 > (SELECT MIN(u.m + 0) FROM u WHERE u.k IN (SELECT t.k FROM t WHERE t.n + 0 > (SELECT COUNT(*) FROM u) - 3)) ORDER BY 1",
	"SELECT t.k, SUM(t.n + (SELECT MAX(u.m + 0) FROM u)) FROM t GROUP BY t.k ORDER BY 1",
	"SELECT COUNT(*) FILTER (WHERE t.k IN (SELECT u.k FROM u WHERE u.m + 0 > 1)) FROM t",
	"SELECT COUNT(*) FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.m + 0 > 100)",
	"SELECT t.k FROM t WHERE t.k IN (SELECT u.k FROM u) UNION SELECT u.k FROM u WHERE u.k NOT IN (SELECT t.k FROM t) ORDER BY 1",
	"SELECT DISTINCT t.k IN (SELECT u.k FROM u WHERE u.m + 0 > 1) FROM t ORDER BY 1",
}

// PlacedSubqueryTables are PlacedSubqueries' tables: u's m has a NULL.
var PlacedSubqueryTables = []Table{
	{Name: "t", Columns: []string{"k", "n"}, CSV: "k,n\na,1\na,3\nb,2\nc,\n"},
	{Name: "u", Columns: []string{"k", "m"}, CSV: "k,m\na,1\nb,2\nc,\n,5\n"},
}
