package sqlgen

import "strings"

// The constructs of Options.SetOps (docs/sql.md): FILTER on aggregates,
// aggregates of DISTINCT, OFFSET (finish) and the set operations, each
// with its meaning in the naive evaluator.

// aggGen is an aggregate a grouped query may select: its text and its
// value over a group's rows.
type aggGen struct {
	sql string
	f   func(rs []map[string]val) val
}

// values is e over each row.
func values(e expr, rs []map[string]val) []val {
	vs := make([]val, len(rs))
	for i, r := range rs {
		vs[i] = e.eval(r)
	}
	return vs
}

// distinctVals is vs without NULLs and repeated values (equal by value),
// each in its normal form, as the group key of the engine's inner
// aggregate writes it.
func distinctVals(vs []val) []val {
	seen := map[string]bool{}
	var out []val
	for _, v := range vs {
		if v.null || seen[v.key()] {
			continue
		}
		seen[v.key()] = true
		out = append(out, normalRow([]val{v})[0])
	}
	return out
}

// moreAggs are the aggregates of FILTER and DISTINCT over arg (a
// number) and text (a text column): a condition drawn for the FILTERs.
func (g *gen) moreAggs(arg, text expr) []aggGen {
	p := g.pred(1)
	where := " FILTER (WHERE " + p.sql + ")"
	kept := func(rs []map[string]val) []map[string]val { return keep(rs, p) }
	return []aggGen{
		{"COUNT(*)" + where, func(rs []map[string]val) val { return intVal(len(kept(rs))) }},
		{"SUM(" + arg.sql + ")" + where, func(rs []map[string]val) val { return sumVals(values(arg, kept(rs))) }},
		{"MAX(" + text.sql + ")" + where, func(rs []map[string]val) val { return bestText(values(text, kept(rs)), 1) }},
		{"COUNT(DISTINCT " + arg.sql + ")", func(rs []map[string]val) val { return intVal(len(distinctVals(values(arg, rs)))) }},
		{"SUM(DISTINCT " + arg.sql + ")", func(rs []map[string]val) val { return sumVals(distinctVals(values(arg, rs))) }},
		{"COUNT(DISTINCT " + text.sql + ")", func(rs []map[string]val) val { return intVal(len(distinctVals(values(text, rs)))) }},
		{"MIN(DISTINCT " + arg.sql + ")", func(rs []map[string]val) val { return best(values(arg, rs), -1) }},
	}
}

// setOpQuery is a query of two SELECTs joined by UNION [ALL], INTERSECT
// or EXCEPT: t's rows where a condition holds, a text and a number of
// each, then t's rows where another does, or u's.
func (g *gen) setOpQuery(tRows, uRows []map[string]val) (query, want string) {
	g.setops = true
	typing := " AND (t.b IS NULL OR t.b OR NOT t.b) AND (t.n IS NULL OR t.n * 1 = t.n)"
	side := func() (string, [][]val) {
		key, num, p := column("t", g.pick("k", "s")), g.number(1), g.pred(1)
		var rows [][]val
		for _, r := range keep(tRows, p) {
			rows = append(rows, []val{key.eval(r), num.eval(r)})
		}
		return "SELECT " + key.sql + ", " + num.sql + " FROM t WHERE " + p.sql + typing, rows
	}
	left, l := side()
	var right string
	var r [][]val
	if g.r.IntN(2) == 0 {
		right, r = side()
	} else {
		key, num := column("u", "k"), column("u", "m")
		for _, row := range uRows {
			r = append(r, []val{key.eval(row), num.eval(row)})
		}
		right = "SELECT u.k, u.m FROM u WHERE u.m IS NULL OR u.m * 1 = u.m"
	}
	op := g.pick("UNION ALL", "UNION", "INTERSECT", "EXCEPT")
	rowKey := func(row []val) string { return row[0].key() + "\x01" + row[1].key() }
	inR := map[string]bool{}
	for _, row := range r {
		inR[rowKey(row)] = true
	}
	var out [][]val
	seen := map[string]bool{}
	add := func(row []val) { // a row of a set: once, in its normal form
		if k := rowKey(row); !seen[k] {
			seen[k] = true
			out = append(out, normalRow(row))
		}
	}
	switch op {
	case "UNION ALL":
		out = append(append(out, l...), r...)
	case "UNION":
		for _, row := range append(append([][]val(nil), l...), r...) {
			add(row)
		}
	default:
		for _, row := range l {
			if inR[rowKey(row)] == (op == "INTERSECT") {
				add(row)
			}
		}
	}
	return g.finish(strings.Join([]string{left, op, right}, " "), 2, out)
}
