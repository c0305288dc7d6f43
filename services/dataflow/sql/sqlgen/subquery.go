package sqlgen

import (
	"math/rand/v2"
	"strings"
)

// Options choose what a case's query may hold beyond Generate's.
type Options struct {
	// Subqueries lets the query read t through a subquery in FROM or a
	// common table expression (WITH, a CTE reading an earlier one, a CTE
	// read twice), and u's semi-join set through a CTE. Generate leaves
	// them out, so that the cases of a seed stay what they were for the
	// tests that read them (services/dataflow/sql/incr's).
	Subqueries bool
}

// GenerateWith makes the case of a seed with the constructs o allows:
// the same seed and options, the same case; GenerateWith(seed,
// Options{}) is Generate(seed).
func GenerateWith(seed uint64, o Options) Case {
	g := &gen{r: rand.New(rand.NewPCG(seed, 7)), opts: o}
	tText, tRows := g.table("t", tableT)
	uText, uRows := g.table("u", tableU)
	c := Case{Seed: seed, Tables: []Table{{"t", tableT, tText}, {"u", tableU, uText}}}
	c.Query, c.Want = g.query(tRows, uRows)
	c.Subquery = g.subquery
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
