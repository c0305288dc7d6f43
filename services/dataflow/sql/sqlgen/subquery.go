package sqlgen

import (
	"math/rand/v2"
	"strings"
)

// Options choose what a case's query may hold beyond Generate's.
type Options struct {
	// Subqueries lets the query read t through a subquery in FROM or a
	// common table expression (WITH, a CTE reading an earlier one, a CTE
	// read twice), u's semi-join set through a CTE, and a join's u
	// through a subquery that groups it. Generate leaves
	// them out, so that the cases of a seed stay what they were for the
	// tests that read them (services/dataflow/sql/incr's).
	Subqueries bool
	// SetOps lets the query hold the constructs of setop.go: FILTER on
	// aggregates, aggregates of DISTINCT, OFFSET, and UNION [ALL],
	// INTERSECT and EXCEPT. Generate leaves them out (no draw is made
	// for them then, so its cases stay the same).
	SetOps bool
	// Joins makes the query's join one of LEFT, RIGHT, FULL or INNER,
	// on one or two keys or USING, of two tables or three (join.go).
	Joins bool
	// Windows lets the query be one of window functions (window.go).
	// Generate leaves them out (no draw is made for them then).
	Windows bool
	// ExprSubqueries lets the query's conditions and numbers hold
	// uncorrelated subqueries of u (exprsubquery.go): [NOT] EXISTS,
	// x [NOT] IN (SELECT ...) anywhere in a condition (under OR, NOT,
	// CASE), and scalar subqueries of one aggregate.
	ExprSubqueries bool
	// Functions lets the query hold the constructs of functions.go:
	// a % b, casts to INTEGER, BIGINT and NUMERIC(p, s), and a CROSS
	// JOIN or comma join of t and u. Generate leaves them out (no draw
	// is made for them then).
	Functions bool
}

// GenerateWith makes the case of a seed with the constructs o allows:
// the same seed and options, the same case; GenerateWith(seed,
// Options{}) is Generate(seed).
func GenerateWith(seed uint64, o Options) Case {
	g := &gen{r: rand.New(rand.NewPCG(seed, 7)), opts: o}
	tText, tRows := g.table("t", tableT)
	uText, uRows := g.table("u", tableU)
	g.uRows = uRows
	c := Case{Seed: seed, Tables: []Table{{"t", tableT, tText}, {"u", tableU, uText}}}
	c.Query, c.Want = g.query(tRows, uRows)
	c.ExprSubquery = g.exprSub
	c.Subquery = g.subquery
	c.SetOps = g.setops
	c.Windows = g.windows
	c.Functions = g.functions
	if len(g.with) > 0 {
		c.Query = "WITH " + strings.Join(g.with, ", ") + " " + c.Query
	}
	return c
}

// source is how a query reads t: FROM's text for it (named t whatever
// it is, so that the rest of the query reads t.k, t.n, ...), the rows it
// has, and whether it is the CTE w, which a semi-join may read again.
type source struct {
	from string
	rows []map[string]val
	cte  bool
}

// tSource draws how the query reads t: as it is (always, without
// Options.Subqueries: no draw is made then, so Generate's cases stay
// the same), or through a subquery that filters it. Its CTEs go to
// g.with.
func (g *gen) tSource(tRows []map[string]val) source {
	if !g.opts.Subqueries {
		return source{from: "t", rows: tRows}
	}
	mode := g.r.IntN(5)
	if mode == 0 {
		return source{from: "t", rows: tRows}
	}
	g.subquery = true
	where, rows := g.filter(tRows)
	switch mode {
	case 1: // a subquery in FROM, of every column
		return source{from: "(SELECT * FROM t" + where + ") AS t", rows: rows}
	case 2: // a subquery in FROM naming its columns, renamed by its alias's list
		return source{from: "(SELECT t.k AS k1, t.n, t.b AS b1, t.s, t.d FROM t" + where + ") AS t(k, n, b)", rows: rows}
	case 3: // a CTE
		g.with = append(g.with, "w AS (SELECT * FROM t"+where+")")
		return source{from: "w AS t", rows: rows, cte: true}
	}
	// A CTE reading an earlier one, with a column list.
	where2, rows := g.filter(rows)
	g.with = append(g.with, "w0 AS (SELECT * FROM t"+where+")",
		"w(k, n, b, s, d) AS (SELECT t.k, t.n, t.b, t.s, t.d FROM w0 AS t"+where2+")")
	return source{from: "w AS t", rows: rows, cte: true}
}

// filter draws a subquery's WHERE over t's columns (none half the time,
// so that the query above, with its own, still returns rows), and the
// rows it keeps.
func (g *gen) filter(rows []map[string]val) (where string, kept []map[string]val) {
	if g.r.IntN(2) == 0 {
		return "", rows
	}
	p := g.pred(1)
	return " WHERE " + p.sql, keep(rows, p)
}

// uSource draws how a join reads u: as it is, or (Options.Subqueries)
// as a subquery grouping it by k, whose m is an aggregate of u's (a
// COUNT, a SUM of the groups of two rows or more, a MAX): a subquery
// whose rows are not u's, joined as a table. The rows it has hold
// their values as text, as a table's: the aggregate written as the
// engine writes it, read back as the same number.
func (g *gen) uSource(uRows []map[string]val) (string, []map[string]val) {
	if !g.opts.Subqueries || g.r.IntN(2) == 0 {
		return "u", uRows
	}
	g.subquery = true
	var keys []string
	groups := map[string][]val{}
	for _, r := range uRows {
		k := r["u.k"].text
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], readNum(r["u.m"].text))
	}
	mode := g.r.IntN(3)
	var out []map[string]val
	for _, k := range keys {
		vs := groups[k]
		var m val
		switch mode {
		case 0:
			m = intVal(len(vs))
		case 1:
			if len(vs) < 2 {
				continue
			}
			m = sumVals(vs)
		default:
			m = best(vs, 1)
		}
		out = append(out, map[string]val{"u.k": {kind: 't', text: k}, "u.m": {kind: 't', text: m.format()}})
	}
	return [...]string{
		"(SELECT k, COUNT(*) AS m FROM u GROUP BY k) AS u",
		"(SELECT u.k, SUM(u.m) AS m FROM u GROUP BY u.k HAVING COUNT(*) > 1) AS u",
		"(SELECT k, MAX(m) AS m FROM u GROUP BY k) AS u",
	}[mode], out
}

// semiJoinSet is the text of u's semi-join set, SELECT k FROM u WHERE m
// > 0: as it is, or through the CTE v when t is read through a CTE.
func (g *gen) semiJoinSet(src source) string {
	const set = "SELECT k FROM u WHERE m > 0"
	if !src.cte {
		return set
	}
	g.with = append(g.with, "v AS ("+set+")")
	return "SELECT k FROM v"
}

// again is a WHERE conjunct that reads the CTE w a second time when t
// is w (every row of t is in it: k is never NULL), else "".
func (g *gen) again(src source) string {
	if !src.cte || g.r.IntN(2) == 0 {
		return ""
	}
	return "t.k IN (SELECT w.k FROM w) AND "
}

// keep is the rows where p is true.
func keep(rows []map[string]val, p expr) []map[string]val {
	var out []map[string]val
	for _, r := range rows {
		if v := p.eval(r); !v.null && v.b {
			out = append(out, r)
		}
	}
	return out
}
