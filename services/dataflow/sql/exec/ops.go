package exec

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

func types(cols []plan.Column) []plan.Type {
	t := make([]plan.Type, len(cols))
	for i, c := range cols {
		t[i] = c.Type
	}
	return t
}

// RowFilter keeps the rows of batch after batch where a condition is
// true: compiled once (NewConds), its memory reused from one batch to the
// next.
type RowFilter struct {
	c    *Conds
	read []bool // the columns read after it (SetRead; nil: all)
}

// SetRead says which of the filter's columns the operators after it
// read: the others it makes unread Vecs (unread.go), their rows not
// gathered, as a join's (Join.SetRead). nil: every one. A job's queries
// that read one shared join each keep their rows with a filter over all
// its columns, and read few of them.
func (f *RowFilter) SetRead(read []bool) { f.read = read }

// NewRowFilter compiles cond.
func NewRowFilter(cond *plan.Expr) *RowFilter { return &RowFilter{c: NewConds([]*plan.Expr{cond})} }

// Apply is the rows of b where the condition is true: b itself when they
// all are (a Vec is not modified once built), nil when none is, else a
// batch of those rows.
func (f *RowFilter) Apply(b *Batch) (*Batch, error) {
	sels, err := f.c.TrueRows(b)
	if err != nil {
		return nil, err
	}
	switch rows := sels[0]; len(rows) {
	case 0:
		return nil, nil
	case b.N:
		return b, nil
	default:
		return gatherReadCols(b, rows, f.read, 0), nil
	}
}

// trueMask is, for each row of b, whether cond is true there: the
// condition's own Bools when it has no NULL (a boolean column is read as
// it is), else a new slice.
func trueMask(cond *plan.Expr, b *Batch) ([]bool, error) {
	c, err := eval(cond, b)
	switch {
	case err != nil:
		return nil, err
	case c.Null == nil:
		return c.Bools, nil
	}
	mask := make([]bool, b.N)
	for i := range mask {
		mask[i] = !c.Null[i] && c.Bools[i]
	}
	return mask, nil
}

// project computes exprs over each batch.
func project(exprs []*plan.Expr, in []*Batch) ([]*Batch, error) {
	out := make([]*Batch, 0, len(in))
	for _, b := range in {
		nb := &Batch{N: b.N, Cols: make([]*Vec, len(exprs))}
		for i, e := range exprs {
			v, err := eval(e, b)
			if err != nil {
				return nil, err
			}
			nb.Cols[i] = v
		}
		out = append(out, nb)
	}
	return out, nil
}

// groups are the groups of an aggregate: its view of a (shared)
// KeyTable, each key's group numbered in the order first seen, and each
// group's key values as first seen, numbers without trailing zeros.
type groups struct {
	v     slots
	n     int32
	keys  []*builder
	slots []int32 // scratch: the slots of a batch's keys
	// keySlots, of groups of one text key (inTable), is each group's
	// slot, whose key in the table is the group's text (KeyText; NULL: a
	// key that is not one): keys[0] holds nothing, and its values are
	// made from the table when they are read (keyRows, keyRange). A group's text is
	// held once, in the table, 4 bytes for its slot where it took its
	// length again and its 4 bytes of end (the 1.5M match tokens of q2
	// on a shard: 24 MB).
	keySlots []int32
	inTable  bool
}

func newGroups(t *KeyTable, keyTypes []plan.Type) *groups {
	g := &groups{v: slots{t: t}}
	for _, t := range keyTypes {
		g.keys = append(g.keys, newBuilder(t, 0))
	}
	g.inTable = len(keyTypes) == 1 && keyTypes[0] == plan.Text
	return g
}

// keyRows is key column c of the groups rows, made from the table when
// the groups' text is held there.
func (g *groups) keyRows(c int, rows []int32) *Vec {
	if !g.inTable {
		return gather(g.keys[c].v, rows)
	}
	return g.tableText(len(rows), func(i int) int32 { return g.keySlots[rows[i]] })
}

// keyRange is key column c of groups from..to-1, as keyRows.
func (g *groups) keyRange(c int, from, to int) *Vec {
	if v := g.keys[c].v; !g.inTable {
		if from > 0 || to < v.N {
			v = slice(v, from, to)
		}
		return v
	}
	return g.tableText(to-from, func(i int) int32 { return g.keySlots[from+i] })
}

// tableText is the text keys of n slots (slot(i) the i-th), NULL where a
// key is not a text value.
func (g *groups) tableText(n int, slot func(i int) int32) *Vec {
	bl := newBuilder(plan.Text, n)
	for i := range n {
		if t, ok := g.v.t.KeyText(slot(i)); ok {
			bl.text(t)
		} else {
			bl.null()
		}
	}
	return bl.v
}

// ids returns the group of each row of the key columns, adding new ones:
// sl are the rows' slots (Slots, every key added; nil: looked up here).
func (g *groups) ids(keys []*Vec, n int, sl []int32) []int32 {
	if sl == nil {
		g.slots = g.v.t.Slots(keys, n, nil, g.slots)
		sl = g.slots
	}
	ids := make([]int32, n)
	for i, s := range sl[:n] {
		id := g.v.get(s)
		if id < 0 {
			id = g.n
			g.n++
			g.v.set(s, id)
			if g.inTable {
				g.keySlots = appendDoubling(g.keySlots, s)
			}
			for c, kv := range keys {
				switch {
				case g.inTable:
				case kv.Type == plan.Number && !kv.IsNull(i):
					g.keys[c].num(kv.Nums[i].Normal())
				default:
					g.keys[c].from(kv, i)
				}
			}
		}
		ids[i] = id
	}
	return ids
}

// acc is one aggregate's state, one slot per group, as its function's
// entry of aggFuncs says (aggfunc.go): only the slices its function uses
// are kept (the others stay nil and read as zero, see the
// accessors below), so that an aggregate of many groups costs the bytes
// of its function's state alone. A count takes 4 bytes of a group (and a
// map entry past 2^32-1, see counts). A sum, and the minimum or maximum of
// numbers, is kept in place per group as decs (an int64 and a scale while
// it fits: no pointer for the garbage collector to scan in millions of
// groups' state, half a Dec's bytes); the minimum or maximum of text or
// booleans, as the rows of a Vec that grows with each improvement (best,
// bestN).
type acc struct {
	agg     *plan.Agg
	fn      *aggFunc
	u       accState // the slices it keeps (uses)
	partial bool     // a partial aggregate's: its sums are kept whole (see boundedSum)
	in      aggInput // what it reads of each row
	count   counts   // the values counted (count(*): the rows)
	sums    []decs   // running sums (sum and avg: of the values)
	has     []bool   // a value was seen
	nums    decs     // min, max of numbers: group g's value so far
	best    *Vec     // min, max of text or booleans: the values so far, grown as groups come
	bestN   []int32  // min, max of text or booleans: which row of best holds group g's value
}

// newAcc is the empty state of the aggregate ag.
func newAcc(ag *plan.Agg, conds *[]*plan.Expr) *acc {
	fn := aggFuncs[ag.Func]
	if fn == nil {
		fn = unknownAgg
	}
	a := &acc{agg: ag, fn: fn, in: newAggInput(ag, conds), u: fn.state}
	if a.u.best && a.agg.Arg != nil && a.agg.Arg.Type == plan.Number {
		a.u.best, a.u.nums = false, true
	}
	a.sums = make([]decs, a.u.sums)
	return a
}

// unknownAgg is the state of a function the table does not have (a
// plan the binder did not make): NULL for every group.
var unknownAgg = &aggFunc{
	update: func(*acc, []int32, *Vec, []bool, *Vec) {},
	read:   func(*acc, int) (value.Dec, bool) { return value.Dec{}, false },
}

// decs are a number per group, without pointers: group g's is i[g]
// unscaled at scale s[g] while that fits an int64 and the scale a byte,
// else (s[g] == -1) big[g]. A group's number starts at zero. (9 bytes a
// group where they were 12: an aggregate of millions of groups holds
// one per MIN, MAX, SUM, AVG.)
type decs struct {
	i   []int64
	s   []int8
	big map[int32]value.Dec
}

// grow makes room for n groups.
func (d *decs) grow(n int) {
	d.i = extend(d.i, n)
	d.s = extend(d.s, n)
}

// used reports whether d keeps numbers (grow was called).
func (d *decs) used() bool { return d.s != nil }

// get is group g's number.
func (d *decs) get(g int32) value.Dec {
	if s := d.s[g]; s >= 0 {
		return value.FromUnscaled(d.i[g], int32(s))
	}
	return d.big[g]
}

// set makes v group g's number.
func (d *decs) set(g int32, v value.Dec) {
	if d.s[g] < 0 {
		delete(d.big, g)
	}
	if i, s, ok := v.Unscaled(); ok && s <= math.MaxInt8 {
		d.i[g], d.s[g] = i, int8(s)
		return
	}
	if d.big == nil {
		d.big = map[int32]value.Dec{}
	}
	d.s[g] = -1
	d.big[g] = v
}

// add adds v to group g's number: in place when both are int64s of one
// scale and their sum does not overflow, else through Dec.Add.
func (d *decs) add(g int32, v value.Dec) {
	if s := d.s[g]; s >= 0 {
		if vi, vs, ok := v.Unscaled(); ok && vs == int32(s) {
			sum := d.i[g] + vi
			if (d.i[g] >= 0) != (vi >= 0) || (sum >= 0) == (vi >= 0) {
				d.i[g] = sum
				return
			}
		}
	}
	d.set(g, d.get(g).Add(v))
}

// window is d's numbers of groups from..to-1 alone, as groups 0..: the
// slices cut (not copied), big renumbered.
func (d decs) window(from, to int) decs {
	return decs{i: cut(d.i, from, to), s: cut(d.s, from, to), big: renumber(d.big, from, to)}
}

// aggInput is what an aggregate reads of a row: its argument; or, when
// the argument is CASE WHEN cond THEN then [ELSE k] END with k a
// constant, then where cond is true and k (NULL without an ELSE)
// elsewhere. The second is the CASE's value without its column: COUNT(CASE
// WHEN c THEN 1 END) counts the rows where c is true, and the aggregates of
// an Aggregation evaluate each distinct condition once per batch.
type aggInput struct {
	arg  *plan.Expr // the argument, or the THEN; nil for count(*)
	cond int        // the WHEN's index among the Aggregation's conditions; -1: none
	els  *Vec       // the ELSE as one value, when cond >= 0; nil: NULL
}

// newAggInput is how ag reads its argument; conds are the conditions
// of the aggregates before it, to which it adds its own when it is new.
func newAggInput(ag *plan.Agg, conds *[]*plan.Expr) aggInput {
	in := aggInput{arg: ag.Arg, cond: -1}
	e := ag.Arg
	if e == nil || e.Kind != plan.Case || len(e.Args) != 2 && len(e.Args) != 3 {
		return in
	}
	for _, x := range e.Args[1:] {
		if x.Type != e.Type {
			return in
		}
	}
	var els *Vec
	if len(e.Args) == 3 {
		k := e.Args[2]
		if k.Kind != plan.Const {
			return in
		}
		v, err := constVec(k, 1)
		if err != nil {
			return in
		}
		if !k.Null {
			els = v
		}
	}
	cond := slices.IndexFunc(*conds, func(c *plan.Expr) bool { return reflect.DeepEqual(c, e.Args[0]) })
	if cond < 0 {
		cond = len(*conds)
		*conds = append(*conds, e.Args[0])
	}
	return aggInput{arg: e.Args[1], cond: cond, els: els}
}

// pick is the Vec and index of row i's value for an aggregate that reads
// arg, or, with a condition, arg where when is true and els (nil: NULL)
// elsewhere; ok is false for a NULL.
func pick(arg *Vec, when []bool, els *Vec, i int) (v *Vec, j int, ok bool) {
	v, j = arg, at(arg, i)
	if when != nil && !when[i] {
		if els == nil {
			return nil, 0, false
		}
		v, j = els, 0
	}
	return v, j, !v.IsNull(j)
}

// accState names the slices of an acc that a function keeps: a count,
// sums running sums, a seen flag, and the best value so far (a function's
// entry says best; its acc keeps it as nums when the argument is a
// number).
type accState struct {
	count, has, nums, best bool
	sums                   int
}

// grow makes room for groups 0..n-1.
func (a *acc) grow(n int) {
	u := a.u
	if u.count {
		a.count.lo = extend(a.count.lo, n)
	}
	for i := range a.sums {
		a.sums[i].grow(n)
	}
	if u.has {
		a.has = extend(a.has, n)
	}
	if u.nums {
		a.nums.grow(n)
	}
	if u.best && len(a.bestN) < n {
		from := len(a.bestN)
		a.bestN = extend(a.bestN, n)
		for i := from; i < n; i++ {
			a.bestN[i] = -1
		}
	}
}

// extend returns s at length n at least, the new elements zero. Its
// capacity doubles when it must grow (append grows a large slice by a
// quarter, which copies the state of many groups many times over).
func extend[T any](s []T, n int) []T {
	from := len(s)
	if n <= from {
		return s
	}
	if n > cap(s) {
		t := make([]T, from, max(n, 2*cap(s), 64))
		copy(t, s)
		s = t
	}
	s = s[:n]
	clear(s[from:])
	return s
}

// counts are the count of each group, exact whatever its size in a byte
// a group and no pointer: its low 8 bits in lo, and, of the counts of 256
// or more (or below 0), the rest (count >> 8) in hi. The rows counted
// bound the entries of hi (one per 256 of them at the most), and a
// group's carries cost a map's update every 256 rows; an aggregate of
// millions of groups of a few rows each (q2's, by match) holds a byte
// for each of its counts where it held four.
type counts struct {
	lo []uint8
	hi map[int32]int64
}

// inc adds 1 to group g's count.
func (c *counts) inc(g int32) {
	c.lo[g]++
	if c.lo[g] == 0 {
		c.carry(g, 1)
	}
}

// carry adds d to group g's count >> 8.
func (c *counts) carry(g int32, d int64) {
	if c.hi == nil {
		c.hi = map[int32]int64{}
	}
	if c.hi[g] += d; c.hi[g] == 0 {
		delete(c.hi, g)
	}
}

// get is group g's count.
func (c *counts) get(g int) int64 { return int64(c.lo[g]) + c.hi[int32(g)]<<8 }

// set makes n group g's count.
func (c *counts) set(g int, n int64) {
	c.lo[g] = uint8(n)
	delete(c.hi, int32(g))
	if n>>8 != 0 {
		c.carry(int32(g), n>>8)
	}
}

// countOf, hasOf and sumOf are group g's state, zero where the function
// keeps none.
func (a *acc) countOf(g int) int64 {
	if a.count.lo == nil {
		return 0
	}
	return a.count.get(g)
}

func (a *acc) hasOf(g int) bool { return a.has != nil && a.has[g] }

func (a *acc) sumOf(g int) value.Dec {
	if len(a.sums) == 0 {
		return value.Dec{}
	}
	return a.sums[0].get(int32(g))
}

// update folds the values of a batch's rows into their groups: arg's
// (a Vec of the batch's rows, or a constant's one value, see at), or,
// when when is not nil, arg's where it is true and els's (nil: NULL)
// elsewhere (see aggInput).
func (a *acc) update(ids []int32, arg *Vec, when []bool, els *Vec, groups int) {
	a.grow(groups)
	a.fn.update(a, ids, arg, when, els)
}

// countAll counts the rows.
func (a *acc) countAll(ids []int32) {
	for _, g := range ids {
		a.count.inc(g)
	}
}

// updateSum counts and adds up the values that are not NULL (see update).
func (a *acc) updateSum(ids []int32, arg *Vec, when []bool, els *Vec) {
	sum := &a.sums[0]
	for i, g := range ids {
		if v, j, ok := pick(arg, when, els, i); ok {
			a.count.inc(g)
			sum.add(g, v.Nums[j])
			a.has[g] = true
		}
	}
}

// updateExtreme folds the values into the minimum (want -1) or maximum
// (+1) of their groups.
func (a *acc) updateExtreme(ids []int32, arg *Vec, when []bool, els *Vec, want int) {
	if a.u.nums {
		a.updateNums(ids, arg, when, els, want)
	} else {
		a.updateBest(ids, arg, when, els, want)
	}
}

// updateCount counts the values that are not NULL (see update). The
// common forms count in one test per row, or none: a column without
// NULL, and a constant that is not NULL under a condition without ELSE
// (COUNT(CASE WHEN c THEN 1 END)).
func (a *acc) updateCount(ids []int32, arg *Vec, when []bool, els *Vec) {
	switch {
	case when == nil && arg.Null == nil:
		for _, g := range ids {
			a.count.inc(g)
		}
	case when == nil && arg.N == len(ids):
		for i, g := range ids {
			if !arg.Null[i] {
				a.count.inc(g)
			}
		}
	case when != nil && els == nil && arg.N == 1 && !arg.IsNull(0):
		for i, g := range ids {
			if when[i] {
				a.count.inc(g)
			}
		}
	default:
		for i, g := range ids {
			if _, _, ok := pick(arg, when, els, i); ok {
				a.count.inc(g)
			}
		}
	}
}

// updateNums folds numbers into the minimum (want -1) or maximum (+1) of
// their groups. Equal numbers of different scales: the larger scale
// wins, so the result does not depend on the order.
func (a *acc) updateNums(ids []int32, arg *Vec, when []bool, els *Vec, want int) {
	for i, g := range ids {
		v, j, ok := pick(arg, when, els, i)
		if !ok {
			continue
		}
		d := v.Nums[j]
		if a.has[g] {
			cur := a.nums.get(g)
			c := d.Cmp(cur)
			if c != want && (c != 0 || d.Scale() <= cur.Scale()) {
				continue
			}
		}
		a.nums.set(g, d)
		a.has[g] = true
	}
}

// updateBest folds text or booleans into the minimum (want -1) or
// maximum (+1) of their groups: an improvement appends its value to best.
func (a *acc) updateBest(ids []int32, arg *Vec, when []bool, els *Vec, want int) {
	if a.best == nil {
		a.best = newBuilder(arg.Type, 0).v
	}
	bl := &builder{v: a.best}
	for i, g := range ids {
		v, j, ok := pick(arg, when, els, i)
		if !ok {
			continue
		}
		if b := a.bestN[g]; b >= 0 && compare(v, j, a.best, int(b)) != want {
			continue
		}
		bl.from(v, j)
		a.bestN[g] = int32(a.best.N - 1)
		a.has[g] = true
	}
}

// result is the aggregate's column over groups 0..n-1: its function's
// result, or its read of each group.
func (a *acc) result(n int) *Vec {
	a.grow(n)
	if a.fn.result != nil {
		return a.fn.result(a, n)
	}
	out := newBuilder(plan.Number, n)
	for g := range n {
		if d, ok := a.fn.read(a, g); ok {
			out.num(d)
		} else {
			out.null()
		}
	}
	return out.v
}

// countResult is the counts of groups 0..n-1.
func (a *acc) countResult(n int) *Vec {
	out := &Vec{Type: plan.Number, N: n, Nums: make([]value.Dec, n)}
	for g := range n {
		out.Nums[g] = value.Int(a.count.get(g))
	}
	return out
}

// boundedSum is group g's sum, NULL without values. A sum past
// value.MaxDigits is NULL, but a partial sum is not the answer: the final
// aggregate adds the partials up (bounded by value.MaxStoredDigits) and
// bounds the total, so that the answer does not depend on how the rows
// were split among the shards.
func (a *acc) boundedSum(g int) (value.Dec, bool) {
	if !a.has[g] {
		return value.Dec{}, false
	}
	s := a.sums[0].get(int32(g))
	return s, a.partial || s.Fits()
}

// extremeResult is the minima or maxima of groups 0..n-1.
func (a *acc) extremeResult(n int) *Vec {
	if a.nums.used() {
		out := &Vec{Type: plan.Number, N: n, Nums: make([]value.Dec, n)}
		for g := range n {
			if a.has[g] {
				out.Nums[g] = a.nums.get(int32(g))
			} else {
				setNull(out, g)
			}
		}
		return out
	}
	out := newBuilder(a.agg.Arg.Type, n)
	for g := range n {
		if a.has[g] {
			out.from(a.best, int(a.bestN[g]))
		} else {
			out.null()
		}
	}
	return out.v
}

// sortRows orders the rows by the keys, then by every column ascending,
// then, of rows still equal (equal numbers written with different
// scales), by every column's scale (compareScales), so that the output
// never depends on the order rows arrived in: rows it finds equal are the
// same bytes.
func sortRows(n *plan.Node, in []*Batch) []*Batch {
	all := concat(types(n.Output), in)
	perm := make([]int32, all.N)
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(x, y int32) int {
		return compareSorted(n, all, int(x), all, int(y))
	})
	return []*Batch{gatherBatch(all, perm)}
}

// compareSorted orders row x of a and row y of b as sortRows does,
// over the first len(n.Output) columns of each (a batch may have more
// after them).
func compareSorted(n *plan.Node, a *Batch, x int, b *Batch, y int) int {
	for _, k := range n.Order {
		v, w := a.Cols[k.Col], b.Cols[k.Col]
		if c := compareKey(v, x, w, y, k.Desc, k.NullsFirst); c != 0 {
			return c
		}
	}
	cols := len(n.Output)
	for i := range cols {
		if c := compare(a.Cols[i], x, b.Cols[i], y); c != 0 {
			return c
		}
	}
	for i := range cols {
		if c := compareScales(a.Cols[i], x, b.Cols[i], y); c != 0 {
			return c
		}
	}
	return 0
}

// compareKey orders value x of v against value y of w as an ORDER BY
// key does: compare's order, reversed for DESC between values; NULL
// after every value, or before them all with NULLS FIRST.
func compareKey(v *Vec, x int, w *Vec, y int, desc, nullsFirst bool) int {
	c := compare(v, x, w, y)
	if v.IsNull(x) || w.IsNull(y) {
		if nullsFirst {
			return -c
		}
		return c
	}
	if desc {
		return -c
	}
	return c
}

// limit keeps the first n rows.
func limit(n int64, in []*Batch) []*Batch {
	var out []*Batch
	for _, b := range in {
		if n <= 0 {
			break
		}
		if int64(b.N) > n {
			rows := make([]int32, n)
			for i := range rows {
				rows[i] = int32(i)
			}
			b = gatherBatch(b, rows)
		}
		out = append(out, b)
		n -= int64(b.N)
	}
	return out
}

// numberRows returns b with column col replaced by next, next+1, ...
func numberRows(col int, next int64, b *Batch) (*Batch, error) {
	if col < 0 || col >= len(b.Cols) {
		return nil, fmt.Errorf("row number into column #%d of %d", col, len(b.Cols))
	}
	nums := newBuilder(plan.Number, b.N)
	for i := range b.N {
		nums.num(value.Int(next + int64(i)))
	}
	cols := slices.Clone(b.Cols)
	cols[col] = nums.v
	return &Batch{N: b.N, Cols: cols}, nil
}
