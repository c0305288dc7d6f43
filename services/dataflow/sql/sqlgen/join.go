package sqlgen

// The joins of Options.Joins: INNER, LEFT, RIGHT and FULL joins of t and
// u on k, on k and a number (t.n = u.m, equal by value: 1 = 1.0), or
// USING (k), an inner join's other ON condition, and a third table (u
// again, as v) joined on another key. The naive evaluator joins row by
// row (joinRows): every pair of rows the condition holds for, then the
// unmatched rows the join keeps, the other side's columns NULL.

// joinKinds are the join keywords drawn, and which unmatched rows each
// keeps (left, right).
var joinKinds = []struct {
	sql         string
	left, right bool
}{
	{"JOIN", false, false},
	{"LEFT JOIN", true, false},
	{"RIGHT JOIN", false, true},
	{"FULL JOIN", true, true},
	{"LEFT OUTER JOIN", true, false},
	{"FULL OUTER JOIN", true, true},
}

// joins draws the FROM clause of t (as src reads it) joined with u, and
// a third table half the time, and returns it with the joined rows. The
// query's SELECT list (without GROUP BY) reads g.joinItems too.
func (g *gen) joins(src source, uRows []map[string]val) (string, []map[string]val) {
	kind := joinKinds[g.r.IntN(len(joinKinds))]
	tCols := []string{"t.k", "t.n", "t.b", "t.s", "t.d"}
	uCols := []string{"u.k", "u.m"}
	var on string
	var match func(a, b map[string]val) bool
	switch g.r.IntN(4) {
	case 0:
		on, match = " ON t.k = u.k", sameKey("t.k", "u.k")
	case 1:
		on = " ON t.k = u.k AND t.n = u.m"
		k, n := sameKey("t.k", "u.k"), sameNumber("t.n", "u.m")
		match = func(a, b map[string]val) bool { return k(a, b) && n(a, b) }
	case 2:
		on, match = " USING (k)", sameKey("t.k", "u.k")
		using := expr{sql: "k", kind: 't', eval: func(row map[string]val) val {
			tk, uk := column("t", "k").eval(row), column("u", "k").eval(row)
			if kind.right && (!kind.left || tk.null) { // RIGHT: u's; FULL: the first not NULL
				return uk
			}
			return tk
		}}
		g.joinItems = append(g.joinItems, using)
	default:
		if kind.left || kind.right { // an outer join's ON is equalities only
			on, match = " ON t.k = u.k", sameKey("t.k", "u.k")
			break
		}
		on = " ON t.k = u.k AND t.n < u.m"
		k := sameKey("t.k", "u.k")
		match = func(a, b map[string]val) bool {
			x, y := column("t", "n").eval(a), column("u", "m").eval(b)
			return k(a, b) && !x.null && !y.null && x.num.Cmp(y.num) < 0
		}
	}
	from := src.from + " " + kind.sql + " u" + on
	rows := joinRows(src.rows, uRows, tCols, uCols, kind.left, kind.right, match)
	if g.r.IntN(2) == 0 || len(g.joinItems) > 0 { // a USING's k and v.k: SELECT k would be ambiguous
		return from, rows
	}
	// A third table, u again as v, on another key: a shuffle from shard
	// to shard.
	third := joinKinds[g.r.IntN(len(joinKinds))]
	vRows := make([]map[string]val, len(uRows))
	for i, r := range uRows {
		vRows[i] = map[string]val{"v.k": r["u.k"], "v.m": r["u.m"]}
	}
	on, match = " ON u.m = v.m", sameNumber("u.m", "v.m")
	if g.r.IntN(2) == 0 {
		on, match = " ON v.k = t.k", sameKey("t.k", "v.k")
	}
	g.joinItems = append(g.joinItems, column("v", "k"), column("v", "m"))
	return from + " " + third.sql + " u AS v" + on, joinRows(rows, vRows, append(tCols, uCols...), []string{"v.k", "v.m"}, third.left, third.right, match)
}

// sameKey is the condition a.l = b.r of two text columns.
func sameKey(l, r string) func(a, b map[string]val) bool {
	return func(a, b map[string]val) bool {
		x, y := a[l], b[r]
		return !x.null && !y.null && x.text == y.text
	}
}

// sameNumber is the condition a.l = b.r of two number columns: equal by
// value, whatever their texts (1 = 1.0).
func sameNumber(l, r string) func(a, b map[string]val) bool {
	return func(a, b map[string]val) bool {
		if a[l].null || b[r].null {
			return false
		}
		x, y := readNum(a[l].text), readNum(b[r].text)
		return !x.null && !y.null && x.num.Cmp(y.num) == 0
	}
}

// joinRows is the join of the rows left and right (of the columns lCols
// and rCols) where match holds: each pair, in left's order, then, when
// keepLeft, each left row no right row matched, and when keepRight each
// right row no left row matched, the other side's columns NULL.
func joinRows(left, right []map[string]val, lCols, rCols []string, keepLeft, keepRight bool, match func(a, b map[string]val) bool) []map[string]val {
	var out []map[string]val
	hit := make([]bool, len(right))
	merged := func(a, b map[string]val) map[string]val {
		row := map[string]val{}
		for _, c := range lCols {
			row[c] = val{null: true}
		}
		for _, c := range rCols {
			row[c] = val{null: true}
		}
		for k, v := range a {
			row[k] = v
		}
		for k, v := range b {
			row[k] = v
		}
		return row
	}
	for _, a := range left {
		found := false
		for i, b := range right {
			if match(a, b) {
				out = append(out, merged(a, b))
				found, hit[i] = true, true
			}
		}
		if !found && keepLeft {
			out = append(out, merged(a, nil))
		}
	}
	if keepRight {
		for i, b := range right {
			if !hit[i] {
				out = append(out, merged(nil, b))
			}
		}
	}
	return out
}
