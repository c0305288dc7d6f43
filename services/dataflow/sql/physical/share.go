package physical

import (
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
)

// Shared joins. The queries of a job often join the same two tables on
// the same key, each with filters of its own on either side (13 of the
// 26 analyst queries, queries/analyst, join match_players to matches on
// the match's token): placed one by one, each join holds its own copy of
// its right side's rows and probes its own left rows, and past the
// job's memory each spills both (the analyst job wrote 4.3 GB of spill
// files, the players once per join). An inner join of two inputs that
// are being parsed (filters and projections over a scan: routes of the
// tables' channels) is one relation whatever its conditions: σl(L) ⋈
// σr(R) is σ(l ∧ r)(L ⋈ R), since l reads a left row alone and r a right
// one. So the inner joins of a job over the same two tables and keys are
// one join operator (a shared join): its routes carry the rows any of
// them takes (the OR of their conditions) with the columns any of them
// reads (the scans' columns themselves, which each query's projection
// computes from after the join), and each query reads it through a
// filter of its own conditions, and the projection of its columns, on
// the shard. Each query's rows are its own join's, in the same order: a
// left row is probed once, in the order it came, against the right rows
// of its key in the order they came, and the filter keeps what the
// query's own join would have emitted.
//
// What it costs: the shared join emits the pairs any query's conditions
// let through on each side, which a query's filter then drops when they
// are another query's; for a join on a key one side holds once (a
// match's token), at most one pair per left row. A join of an input that is
// not being parsed (another join's, an aggregate's) is not shared, nor
// the cross product of a subquery's row.

// Outer joins share it too, when the side whose rows they pad with NULLs
// (the non-preserved side: a LEFT join's right, a FULL join's both) takes
// every row of its table: then a row of the other side matches in the
// shared join exactly the rows it matches in the query's own, and is
// unmatched in one exactly when in the other. The shared join keeps the
// unmatched rows of each side that any member keeps (a FULL join when a
// LEFT and a RIGHT member meet), and each of its inputs carries a
// marker, a column TRUE on every row, when the other side's unmatched
// rows are kept: NULL in a row the join padded, it tells a member which
// rows are not its own (a key cannot: a left row whose key is NULL is
// unmatched too). A member reads the rows where both markers hold, or
// one for an outer member (a LEFT member's rows are those with a left
// row, the pairs and the unmatched left rows alike), and its own
// conditions, which an outer member has on its preserved side alone: a
// preserved row that fails them is none of its rows, matched or not.
// The shared join's rows are partitioned as its type says (joinPart); a
// member's as its own join's would be: its rows are the ones its own
// join would have placed on each instance.

// sharedJoin is the one join of a set of queries' joins over the same
// two tables and keys: its two inputs being parsed (the scans' columns
// any member reads, where any member's conditions hold, and the
// markers), its keys over them, its type, and its operator and rows once
// placed.
type sharedJoin struct {
	left, right       stream
	leftKey, rightKey *plan.Expr
	kind              plan.JoinType
	// leftCol and rightCol give each column of the table's scan its
	// column of the join's input (-1: not read).
	leftCol, rightCol []int
	// leftMark and rightMark are the input's marker column (-1: none).
	leftMark, rightMark int
	// op is the join, once placed (at its first query), out its rows,
	// and parts its inputs' partitionings.
	op    *Op
	out   stream
	parts [2][][]*plan.Expr
}

// shareable says whether join n may be one of a shared join's queries:
// an equi-join (not a subquery's cross product) of two inputs that are
// filters and projections over scans.
func shareable(n *plan.Node) bool {
	return n.Op == plan.Join && n.Subquery == "" && !isCross(n) &&
		parsedOnly(n.Input[0]) && parsedOnly(n.Input[1])
}

// parsedOnly says whether n is filters and projections over a scan: rows
// placed where they are parsed, as a route.
func parsedOnly(n *plan.Node) bool {
	for n.Op == plan.Filter || n.Op == plan.Project {
		n = n.Input[0]
	}
	return n.Op == plan.Scan
}

// side is one input of a shareable join: its rows being parsed, and its
// key over its scan's columns.
type side struct {
	s   stream
	key *plan.Expr
}

// label names a side by its table and key.
func (d side) label() string { return d.s.table + "|" + keyString([]*plan.Expr{d.key}) }

// sig names the shared join of sides a and b (sides' order).
func sig(a, b side) string { return a.label() + "|" + b.label() }

// member is one query's join as a member of a shared join: its inputs in
// the shared join's order (swapped: the query's left input is b), its
// type in that order, and, of a join on several keys sharing a join on
// one of them, the equalities of the others (each a's expression and
// b's, over their scans' columns), which it keeps its rows by after the
// shared join.
type member struct {
	a, b    side
	kind    plan.JoinType
	eqs     [][2]*plan.Expr
	swapped bool
}

// memberOf is a join of type kind of l and r on lk = rk (and eqs) as a
// member, its inputs in the order the tables' uploads end, the first to
// end on the right, the side a join holds (a self-join's, or tables the
// arrival does not order, in their labels' order); ok is false for an
// outer join whose padded side takes only some of its table's rows.
func (pl *planner) memberOf(kind plan.JoinType, l, r stream, lk, rk *plan.Expr, eqs [][2]*plan.Expr) (m member, ok bool) {
	m = member{a: side{l, lk}, b: side{r, rk}, kind: kind, eqs: eqs}
	if la, ra := pl.arrival(l.table), pl.arrival(r.table); la < ra || la == ra && m.a.label() > m.b.label() {
		m.a, m.b, m.kind, m.swapped = m.b, m.a, m.kind.Mirrored(), true
		for i, e := range m.eqs {
			m.eqs[i] = [2]*plan.Expr{e[1], e[0]}
		}
	}
	return m, !(m.kind.KeepsLeft() && m.b.s.cond != nil || m.kind.KeepsRight() && m.a.s.cond != nil)
}

// candidates is join n, placed over l and r, as each member of a shared
// join it could be (memberOf), in the order it takes them; none when it
// can be none (not shareable, or an input not being parsed). Its first
// is n on its own key; an inner join on several keys (KEY(a, b) =
// KEY(x, y)) could also be a member of the shared join on any one of
// them, the others' equalities kept after it: a join on a key one side
// holds once (a match's token) makes no more pairs for being joined on
// it alone. An inner join is one relation whichever side is whose, and
// the shared join's columns are each query's again after it.
func (pl *planner) candidates(n *plan.Node) (ms []member, l, r stream) {
	if !shareable(n) {
		return nil, l, r
	}
	var lerr, rerr error
	// Placing a parsed input adds no operator: it is its route's
	// condition and columns (place).
	l, lerr = pl.place(n.Input[0])
	r, rerr = pl.place(n.Input[1])
	if lerr != nil || rerr != nil || l.at != atSource || r.at != atSource {
		return nil, l, r
	}
	kind := n.JoinType
	if kind == "" {
		kind = plan.JoinInner
	}
	lk, rk := rewrite.Subst(n.LeftKey, l.exprs), rewrite.Subst(n.RightKey, r.exprs)
	if m, ok := pl.memberOf(kind, l, r, lk, rk, nil); ok {
		ms = append(ms, m)
	}
	if kind != plan.JoinInner || lk.Kind != plan.Call || lk.Fn != plan.FnKey || rk.Kind != plan.Call || rk.Fn != plan.FnKey || len(lk.Args) != len(rk.Args) {
		return ms, l, r
	}
	for i := range lk.Args {
		var eqs [][2]*plan.Expr
		for j := range lk.Args {
			if j != i {
				eqs = append(eqs, [2]*plan.Expr{lk.Args[j], rk.Args[j]})
			}
		}
		m, _ := pl.memberOf(kind, l, r, lk.Args[i], rk.Args[i], eqs) // an inner join's: always one
		ms = append(ms, m)
	}
	return ms, l, r
}

// findShared finds the shareable joins of every query (their scans
// registered), and makes a sharedJoin of each set of two or more with
// one signature: each join on its own key, then each join on several
// keys that no other join shares whole in the first set on one of its
// keys that other joins have (the order placeShared looks them up in).
func (pl *planner) findShared(queries []Logical) {
	sets := map[string][]member{}
	var order []string
	var several [][]member // the joins on several keys' candidates
	for _, q := range queries {
		walk(q.Plan, func(n *plan.Node) {
			ms, _, _ := pl.candidates(n)
			if len(ms) == 0 {
				return
			}
			k := sig(ms[0].a, ms[0].b)
			if sets[k] == nil {
				order = append(order, k)
			}
			sets[k] = append(sets[k], ms[0])
			if len(ms) > 1 {
				several = append(several, ms)
			}
		})
	}
	for _, ms := range several {
		if whole := sig(ms[0].a, ms[0].b); len(sets[whole]) == 1 {
			for _, m := range ms[1:] {
				if k := sig(m.a, m.b); len(sets[k]) > 0 {
					sets[whole] = nil
					sets[k] = append(sets[k], m)
					break
				}
			}
		}
	}
	pl.shared = map[string]*sharedJoin{}
	for _, k := range order {
		ms := sets[k]
		if len(ms) < 2 {
			continue
		}
		lt, rt := ms[0].a.s.table, ms[0].b.s.table
		lread := make([]bool, len(pl.scans[lt].Node.Output))
		rread := make([]bool, len(pl.scans[rt].Node.Output))
		var lconds, rconds []*plan.Expr
		keepsLeft, keepsRight := false, false
		for _, m := range ms {
			plan.MarkCols(lread, append(slices.Clone(m.a.s.exprs), m.a.s.cond, m.a.key)...)
			plan.MarkCols(rread, append(slices.Clone(m.b.s.exprs), m.b.s.cond, m.b.key)...)
			for _, e := range m.eqs {
				plan.MarkCols(lread, e[0])
				plan.MarkCols(rread, e[1])
			}
			lconds, rconds = append(lconds, m.a.s.cond), append(rconds, m.b.s.cond)
			keepsLeft, keepsRight = keepsLeft || m.kind.KeepsLeft(), keepsRight || m.kind.KeepsRight()
		}
		s := &sharedJoin{kind: plan.JoinKeeping(keepsLeft, keepsRight)}
		s.left, s.leftCol, s.leftMark = pl.parsedCols(lt, lread, anyOf(lconds), keepsRight)
		s.right, s.rightCol, s.rightMark = pl.parsedCols(rt, rread, anyOf(rconds), keepsLeft)
		s.leftKey = rewrite.Subst(ms[0].a.key, colMap(s.leftCol, pl.scans[lt].Node.Output, 0))
		s.rightKey = rewrite.Subst(ms[0].b.key, colMap(s.rightCol, pl.scans[rt].Node.Output, 0))
		pl.shared[k] = s
	}
}

// parsedCols is the input being parsed of table's scan columns read,
// where cond holds, and the column of it each scan column is (-1: none);
// with a marker column after them when marked (its column; -1: none).
func (pl *planner) parsedCols(table string, read []bool, cond *plan.Expr, marked bool) (stream, []int, int) {
	scan := pl.scans[table].Node.Output
	s := stream{at: atSource, table: table, cond: cond}
	at := make([]int, len(scan))
	for i, c := range scan {
		at[i] = -1
		if read[i] {
			at[i] = len(s.cols)
			s.cols = append(s.cols, c)
			s.exprs = append(s.exprs, rewrite.ColRef(i, c))
		}
	}
	mark := -1
	if marked {
		mark = len(s.cols)
		s.cols = append(s.cols, plan.Column{Name: table + ".present", Type: plan.Bool})
		s.exprs = append(s.exprs, &plan.Expr{Kind: plan.Const, Type: plan.Bool, Value: []byte("true")})
	}
	return s, at, mark
}

// colMap is, for each column of a scan (cols), a reference to column
// at[i] + offset of the shared join (its left input's, offset 0; its
// output's right columns, offset the left's width): an expression over
// the scan's columns read over the join's instead.
func colMap(at []int, cols []plan.Column, offset int) []*plan.Expr {
	out := make([]*plan.Expr, len(at))
	for i, c := range cols {
		if at[i] >= 0 {
			out[i] = rewrite.ColRef(at[i]+offset, c)
		}
	}
	return out
}

// present is the condition that a row of the shared join has a row of
// the side whose marker is column mark of its input, the input's columns
// at offset of the join's output (cols); nil (every row has) when that
// side has no marker (mark < 0).
func present(mark, offset int, cols []plan.Column) *plan.Expr {
	if mark < 0 {
		return nil
	}
	return &plan.Expr{Kind: plan.IsNull, Fn: "not", Type: plan.Bool, Args: []*plan.Expr{rewrite.ColRef(offset+mark, cols[offset+mark])}}
}

// placeShared places join n of the query being placed, whose inputs are
// being parsed, through its shared join if it has one (the first of its
// candidates that is one): the shared join (placed at its first query),
// then the query's conditions and its columns over the join's output.
// ok is false when n has none.
func (pl *planner) placeShared(n *plan.Node) (stream, bool) {
	ms, l, r := pl.candidates(n)
	var s *sharedJoin
	var m member
	for _, c := range ms {
		if s = pl.shared[sig(c.a, c.b)]; s != nil {
			m = c
			break
		}
	}
	if s == nil {
		return stream{}, false
	}
	if s.op == nil {
		node := &plan.Node{Op: plan.Join, JoinType: s.kind, LeftKey: s.leftKey, RightKey: s.rightKey, Output: append(slices.Clone(s.left.cols), s.right.cols...)}
		s.op, s.out, s.parts = pl.pair(node, s.left, s.right, s.leftKey, s.rightKey)
	}
	pl.serve(s.op)
	nl := len(s.left.cols)
	lm := colMap(s.leftCol, pl.scans[m.a.s.table].Node.Output, 0)
	rm := colMap(s.rightCol, pl.scans[m.b.s.table].Node.Output, nl)
	// The member's rows: those with a row of each side its join does not
	// pad, where its conditions and its other keys' equalities hold.
	var cond *plan.Expr
	if !m.kind.KeepsRight() {
		cond = present(s.leftMark, 0, s.out.cols)
	}
	if !m.kind.KeepsLeft() {
		cond = rewrite.And(cond, present(s.rightMark, nl, s.out.cols))
	}
	cond = rewrite.And(cond, rewrite.And(rewrite.Subst(m.a.s.cond, lm), rewrite.Subst(m.b.s.cond, rm)))
	for _, e := range m.eqs {
		cond = rewrite.And(cond, &plan.Expr{Kind: plan.Cmp, Fn: "=", Type: plan.Bool, Args: []*plan.Expr{rewrite.Subst(e[0], lm), rewrite.Subst(e[1], rm)}})
	}
	if m.swapped { // the query's left input is the shared join's right
		lm, rm = rm, lm
	}
	out := s.out
	out.part = joinPart(m.kind, s.parts[0], s.parts[1], nl)
	if cond != nil {
		out = pl.chain(out, plan.Filter, &plan.Node{Op: plan.Filter, Cond: cond, Output: out.cols})
	}
	exprs := make([]*plan.Expr, 0, len(l.exprs)+len(r.exprs))
	for _, e := range l.exprs {
		exprs = append(exprs, rewrite.Subst(e, lm))
	}
	for _, e := range r.exprs {
		exprs = append(exprs, rewrite.Subst(e, rm))
	}
	proj := pl.chain(out, plan.Project, &plan.Node{Op: plan.Project, Exprs: exprs, Output: n.Output})
	proj.part = rebaseAll(out.part, exprs)
	return proj, true
}

// anyOf is the OR of conds: nil (every row) when one of them is.
func anyOf(conds []*plan.Expr) *plan.Expr {
	var out *plan.Expr
	for i, c := range conds {
		if c == nil {
			return nil
		}
		if i == 0 {
			out = c
			continue
		}
		if out.String() != c.String() {
			out = &plan.Expr{Kind: plan.Or, Type: plan.Bool, Args: []*plan.Expr{out, c}}
		}
	}
	return out
}

// walk calls f on n and every node under it.
func walk(n *plan.Node, f func(*plan.Node)) {
	f(n)
	for _, in := range n.Input {
		walk(in, f)
	}
}

// arrival is table's place in the order the job's tables' uploads end
// (Shape.Arrival); len(Arrival) when it has none.
func (pl *planner) arrival(table string) int {
	if i := slices.Index(pl.order, table); i >= 0 {
		return i
	}
	return len(pl.order)
}
