package sqlgen

import (
	"slices"
	"strings"
)

// The window functions of Options.Windows (docs/sql.md "Window
// functions"): RANK, DENSE_RANK, COUNT(*), COUNT, SUM, MIN and MAX
// OVER ([PARTITION BY ...] [ORDER BY ...]), several in one SELECT, over
// t's rows or over a GROUP BY's groups (RANK() OVER (ORDER BY COUNT(*)
// DESC), SUM(COUNT(*)) OVER ()), and ROW_NUMBER. Each is computed by the
// naive evaluator as PostgreSQL defines it, with the default frame: with
// ORDER BY, the partition's rows up to the row's last peer; without, the
// whole partition; NULL last in both directions (the engine's and
// DuckDB's order). ROW_NUMBER numbers peers in an order SQL leaves
// arbitrary (DuckDB's is), so its window's ORDER BY here is every other
// column the query selects: rows it cannot tell apart are then the same
// output bytes, whichever number each gets. AVG is left out (the
// division, see the package doc).

// winInput is the rows a query's windows read: its columns' SQL text and
// kinds, and each row's values.
type winInput struct {
	sql  []string
	kind []byte
	rows [][]val
}

// windowQuery is a query of window functions over t's rows where a
// condition holds, or over their groups by t.k.
func (g *gen) windowQuery(tRows []map[string]val) (query, want string) {
	g.windows = true
	p := g.pred(1)
	where := " WHERE " + p.sql + " AND (t.n IS NULL OR t.n * 1 = t.n) AND (t.b IS NULL OR t.b OR NOT t.b)"
	rows := keep(tRows, p)
	x := g.number(1)
	cols := []expr{column("t", "k"), x, column("t", "s"), column("t", "b")}
	in := winInput{}
	for _, c := range cols {
		in.sql, in.kind = append(in.sql, c.sql), append(in.kind, c.kind)
	}
	from := "FROM t" + where
	shown := []int{0, 1, 2} // the columns the query selects
	switch g.r.IntN(4) {
	case 0: // over the groups by t.k
		in.sql = []string{"t.k", "COUNT(*)", "SUM(" + x.sql + ")", "MAX(t.s)"}
		in.kind = []byte{'t', 'n', 'n', 't'}
		groups := map[string][]map[string]val{}
		var keys []string
		for _, r := range rows {
			k := cols[0].eval(r).key()
			if _, ok := groups[k]; !ok {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], r)
		}
		for _, k := range keys {
			rs := groups[k]
			in.rows = append(in.rows, []val{cols[0].eval(rs[0]), intVal(len(rs)), sumVals(values(x, rs)), bestText(values(cols[2], rs), 1)})
		}
		from += " GROUP BY t.k"
		shown = []int{0, 1, 2, 3}
	case 1: // ROW_NUMBER, ordered by the other columns selected
		for _, r := range rows {
			in.rows = append(in.rows, []val{cols[0].eval(r), cols[2].eval(r)})
		}
		in.sql, in.kind = []string{"t.k", "t.s"}, []byte{'t', 't'}
		part, order := []int{}, []int{1, 0}
		if g.r.IntN(2) == 0 {
			part = []int{0}
		}
		desc := []bool{g.r.IntN(2) == 0, g.r.IntN(2) == 0}
		items := []string{"t.k", "t.s", "ROW_NUMBER() OVER (" + in.overSQL(part, order, desc) + ")"}
		out := in.window(part, order, desc, func(frame []int, peers, start, rank int) val { return intVal(start + 1) }, true)
		return g.finish("SELECT "+strings.Join(items, ", ")+" "+from, len(items), out)
	default:
		for _, r := range rows {
			row := make([]val, len(cols))
			for i, c := range cols {
				row[i] = c.eval(r)
			}
			in.rows = append(in.rows, row)
		}
	}
	items := make([]string, len(shown))
	out := make([][]val, len(in.rows))
	for i, c := range shown {
		items[i] = in.sql[c]
	}
	for r, row := range in.rows {
		for _, c := range shown {
			out[r] = append(out[r], row[c])
		}
	}
	for range 1 + g.r.IntN(3) {
		sqlText, vals := g.windowFunc(in)
		items = append(items, sqlText)
		for r := range out {
			out[r] = append(out[r], vals[r])
		}
	}
	return g.finish("SELECT "+strings.Join(items, ", ")+" "+from, len(items), out)
}

// windowFunc draws a window function over in's columns and its OVER
// clause: its SQL and its value at each row of in.
func (g *gen) windowFunc(in winInput) (string, []val) {
	var nums, texts []int
	for i, k := range in.kind {
		switch k {
		case 'n':
			nums = append(nums, i)
		case 't':
			texts = append(texts, i)
		}
	}
	var part, order []int
	var desc []bool
	if g.r.IntN(3) > 0 {
		part = []int{texts[g.r.IntN(len(texts))]}
		if len(in.kind) > 3 && in.kind[3] == 'b' && g.r.IntN(3) == 0 {
			part = append(part, 3) // t.b beside it
		}
	}
	if g.r.IntN(4) > 0 {
		all := append(slices.Clone(nums), texts...)
		for range 1 + g.r.IntN(2) {
			order, desc = append(order, all[g.r.IntN(len(all))]), append(desc, g.r.IntN(2) == 0)
		}
	}
	num, text := nums[g.r.IntN(len(nums))], texts[g.r.IntN(len(texts))]
	col := func(frame []int, c int) []val {
		vs := make([]val, len(frame))
		for i, r := range frame {
			vs[i] = in.rows[r][c]
		}
		return vs
	}
	type fn struct {
		sql string
		f   func(frame []int, peers, start, rank int) val
	}
	fns := []fn{
		{"RANK()", func(_ []int, _, start, _ int) val { return intVal(start + 1) }},
		{"DENSE_RANK()", func(_ []int, _, _, rank int) val { return intVal(rank) }},
		{"COUNT(*)", func(frame []int, _, _, _ int) val { return intVal(len(frame)) }},
		{"COUNT(" + in.sql[text] + ")", func(frame []int, _, _, _ int) val {
			n := 0
			for _, v := range col(frame, text) {
				if !v.null {
					n++
				}
			}
			return intVal(n)
		}},
		{"SUM(" + in.sql[num] + ")", func(frame []int, _, _, _ int) val { return sumVals(col(frame, num)) }},
		{"MIN(" + in.sql[num] + ")", func(frame []int, _, _, _ int) val { return best(col(frame, num), -1) }},
		{"MAX(" + in.sql[num] + ")", func(frame []int, _, _, _ int) val { return best(col(frame, num), 1) }},
		{"MIN(" + in.sql[text] + ")", func(frame []int, _, _, _ int) val { return bestText(col(frame, text), -1) }},
		{"MAX(" + in.sql[text] + ")", func(frame []int, _, _, _ int) val { return bestText(col(frame, text), 1) }},
	}
	f := fns[g.r.IntN(len(fns))]
	sqlText := f.sql + " OVER (" + in.overSQL(part, order, desc) + ")"
	out := in.window(part, order, desc, f.f, false)
	vals := make([]val, len(out))
	for i, row := range out {
		vals[i] = row[len(row)-1]
	}
	return sqlText, vals
}

// overSQL is an OVER clause's text: PARTITION BY part, ORDER BY order
// (desc says which keys descend).
func (in winInput) overSQL(part, order []int, desc []bool) string {
	var b []string
	if len(part) > 0 {
		var ks []string
		for _, c := range part {
			ks = append(ks, in.sql[c])
		}
		b = append(b, "PARTITION BY "+strings.Join(ks, ", "))
	}
	if len(order) > 0 {
		var ks []string
		for i, c := range order {
			k := in.sql[c]
			if desc[i] {
				k += " DESC"
			}
			ks = append(ks, k)
		}
		b = append(b, "ORDER BY "+strings.Join(ks, ", "))
	}
	return strings.Join(b, " ")
}

// window computes a window function f at each row of in, in in's order:
// f is given the row's frame (the indexes of the partition's rows up to
// its last peer; the whole partition without order), its peers' first
// position in the partition (start) and its peer group's (rank, from 1).
// With rowNumber, each row is its own peer group (ROW_NUMBER: start is
// the row's position) and the output rows are the row and the value;
// else the output is the value alone, in a row of its own.
func (in winInput) window(part, order []int, desc []bool, f func(frame []int, peers, start, rank int) val, rowNumber bool) [][]val {
	parts := map[string][]int{}
	var keys []string
	for r, row := range in.rows {
		k := ""
		for _, c := range part {
			k += row[c].key() + "\x01"
		}
		if _, ok := parts[k]; !ok {
			keys = append(keys, k)
		}
		parts[k] = append(parts[k], r)
	}
	cmpOrder := func(a, b int) int {
		for i, c := range order {
			x, y := in.rows[a][c], in.rows[b][c]
			v := compareVals(x, y)
			if desc[i] && !x.null && !y.null {
				v = -v
			}
			if v != 0 {
				return v
			}
		}
		return 0
	}
	vals := make([]val, len(in.rows))
	for _, k := range keys {
		idx := parts[k]
		slices.SortStableFunc(idx, cmpOrder)
		rank := 0
		for start := 0; start < len(idx); {
			end := start + 1
			for end < len(idx) && (rowNumber || cmpOrder(idx[start], idx[end]) == 0) {
				if rowNumber {
					break
				}
				end++
			}
			rank++
			frame := idx[:end]
			if len(order) == 0 && !rowNumber {
				frame, end = idx, len(idx)
			}
			v := f(frame, end-start, start, rank)
			for _, r := range idx[start:end] {
				vals[r] = v
			}
			start = end
		}
	}
	out := make([][]val, len(in.rows))
	for r, row := range in.rows {
		if rowNumber {
			out[r] = append(slices.Clone(row), vals[r])
		} else {
			out[r] = []val{vals[r]}
		}
	}
	return out
}
