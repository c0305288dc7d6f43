package incr

import (
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// op is one operator of the maintained plan: step takes the epoch's
// changes of each of its inputs and returns the changes of its output.
type op interface {
	step(in []zset) (zset, error)
}

// node is an operator and the nodes of its inputs.
type node struct {
	op     op
	inputs []*node
}

// step runs the epoch through the subtree: its inputs' changes first.
func (n *node) step() (zset, error) {
	ins := make([]zset, len(n.inputs))
	for i, in := range n.inputs {
		z, err := in.step()
		if err != nil {
			return nil, err
		}
		ins[i] = z
	}
	return n.op.step(ins)
}

// scanOp is a table's scan: the rows appended in the epoch, read as the
// plan's kinds, each with weight +1.
type scanOp struct {
	n       *plan.Node
	pending zset
	stats   []exec.ColumnStats // as oracle.Execute counts them, over every epoch
}

func newScan(n *plan.Node) *scanOp {
	s := &scanOp{n: n}
	for _, c := range n.Output {
		s.stats = append(s.stats, exec.ColumnStats{Table: n.Table, Column: c.Name, Type: c.Type, Read: c.Read})
	}
	return s
}

// add reads an appended table's rows into the epoch's changes.
func (s *scanOp) add(t *exec.Table) error {
	idx, err := exec.ScanIndex(s.n, t.Columns)
	if err != nil {
		return err
	}
	for _, b := range t.Batches {
		if b.N == 0 {
			continue
		}
		nb := &exec.Batch{N: b.N, Cols: make([]*exec.Vec, len(idx), len(idx)+1)}
		for i, j := range idx {
			nb.Cols[i] = exec.ReadAs(b.Cols[j], s.n.Output[i], &s.stats[i])
		}
		nb.Cols = append(nb.Cols, constWeights(b.N, 1))
		s.pending = append(s.pending, nb)
	}
	return nil
}

func (s *scanOp) step([]zset) (zset, error) {
	z := s.pending
	s.pending = nil
	return z, nil
}

// filterOp keeps the changes of the rows where the condition is true: a
// row's change is the change of its being kept.
type filterOp struct{ f *exec.RowFilter }

func (o filterOp) step(in []zset) (zset, error) {
	var out zset
	for _, b := range in[0] {
		kept, err := o.f.Apply(b)
		if err != nil {
			return nil, err
		}
		if kept != nil {
			out = append(out, kept)
		}
	}
	return out, nil
}

// projectOp computes the expressions over the changed rows, their
// weights kept.
type projectOp struct{ exprs []*plan.Expr }

func (o projectOp) step(in []zset) (zset, error) { return projectZ(o.exprs, in[0]) }

func projectZ(exprs []*plan.Expr, z zset) (zset, error) {
	out, err := exec.Project(exprs, z)
	if err != nil {
		return nil, err
	}
	for i, b := range out {
		b.Cols = append(b.Cols, z[i].Cols[len(z[i].Cols)-1])
	}
	return out, nil
}

// passOp passes its input's changes on: a Sort below the answer's
// (order is the answer's alone).
type passOp struct{}

func (passOp) step(in []zset) (zset, error) { return in[0], nil }

// joinOp is the inner equi-join of changes: ΔL ⋈ R' + L ⋈ ΔR, R' the
// right rows with the epoch's, L the left rows without: each side's rows
// kept in an exec.Join keyed by its key, probed with the other side's
// changes; a joined row's weight is the product of its two rows'.
type joinOp struct {
	right, left *exec.Join // the right rows (probed by left changes), the left rows
	nl, nr      int        // the columns of each side
	tables      [2]*exec.KeyTable
}

func newJoin(n *plan.Node) *joinOp {
	l, r := n.Input[0].Output, n.Input[1].Output
	tr, tl := exec.NewKeyTable(), exec.NewKeyTable()
	return &joinOp{
		right: exec.NewJoin(tr, n.LeftKey, n.RightKey, withWeight(r)),
		left:  exec.NewJoin(tl, n.RightKey, n.LeftKey, withWeight(l)),
		nl:    len(l), nr: len(r),
		tables: [2]*exec.KeyTable{tr, tl},
	}
}

func (o *joinOp) step(in []zset) (zset, error) {
	dl, dr := in[0], in[1]
	var out zset
	for _, b := range dr {
		if err := o.right.AddRight(b); err != nil {
			return nil, fmt.Errorf("join: %w", err)
		}
	}
	for _, b := range dl {
		j, err := o.right.Probe(b)
		if err != nil {
			return nil, fmt.Errorf("join: %w", err)
		}
		if j != nil {
			out = append(out, joined(j.Cols[:o.nl], j.Cols[o.nl+1:o.nl+1+o.nr], j.Cols[o.nl], j.Cols[o.nl+1+o.nr], j.N))
		}
	}
	for _, b := range dr {
		j, err := o.left.Probe(b)
		if err != nil {
			return nil, fmt.Errorf("join: %w", err)
		}
		if j != nil {
			out = append(out, joined(j.Cols[o.nr+1:o.nr+1+o.nl], j.Cols[:o.nr], j.Cols[o.nr+1+o.nl], j.Cols[o.nr], j.N))
		}
	}
	for _, b := range dl {
		if err := o.left.AddRight(b); err != nil {
			return nil, fmt.Errorf("join: %w", err)
		}
	}
	return out, nil
}

// joined is a joined row batch: the left columns, the right ones, the
// product of their weights.
func joined(l, r []*exec.Vec, wl, wr *exec.Vec, n int) *exec.Batch {
	a := weights(&exec.Batch{N: n, Cols: []*exec.Vec{wl}})
	b := weights(&exec.Batch{N: n, Cols: []*exec.Vec{wr}})
	for i := range a {
		a[i] *= b[i]
	}
	cols := append(slices.Clone(l), r...)
	return &exec.Batch{N: n, Cols: append(cols, weightVec(a))}
}

// semiOp is the semi-join `x IN (SELECT c ...)`: a left row passes
// while its key is among the subquery's values (a count of their copies
// above 0), from the epoch the key arrives in; a NULL key matches
// nothing and is not kept. When the subquery only grows (no GROUP BY or
// aggregate in it: q3's, q4's), a key once there stays: a left row whose
// key is there passes and is forgotten, one whose key is not yet waits
// (kept, with its weight) and passes when the key comes. Else every left
// row is kept by key, and passes again (+) or leaves (-) whenever its key
// comes or goes. A left row is kept (keptRows) without its key when the
// key is one of its text columns (keyCol): the key table has that text,
// and a row kept by key is put back together when it passes.
type semiOp struct {
	key    *plan.Expr
	cols   []plan.Column // the left columns
	keyCol int           // the left column that is the key's text, not kept; -1: none
	grows  bool          // the subquery only grows
	keys   *exec.KeyTable
	count  keyCounts // per key's slot: the subquery's copies of it
	rows   *keptRows // per key's slot: the left rows kept (grows: those waiting for it)
	mark   []bool    // per key's slot: touched (step's scratch, all false between)

	// shared: keys is a table other operators keep their keys in too
	// (shared.go), written and restored by what shares it, not here.
	shared bool
}

func newSemi(n *plan.Node, grows bool, keys *exec.KeyTable) *semiOp {
	o := &semiOp{key: n.LeftKey, cols: n.Input[0].Output, keyCol: -1, grows: grows, keys: keys, shared: keys != nil, count: keyCounts{grows: grows}}
	if keys == nil {
		o.keys = exec.NewKeyTable()
	}
	kept := o.cols
	if k := n.LeftKey; k.Kind == plan.ColRef && o.cols[k.Col].Type == plan.Text {
		o.keyCol = k.Col
		kept = slices.Delete(slices.Clone(o.cols), k.Col, k.Col+1)
	}
	o.rows = newKeptRows(kept)
	return o
}

// keptCols is b's columns kept (all but keyCol) and its weight.
func (o *semiOp) keptCols(b *exec.Batch) *exec.Batch {
	if o.keyCol < 0 {
		return b
	}
	return &exec.Batch{N: b.N, Cols: slices.Delete(slices.Clone(b.Cols), o.keyCol, o.keyCol+1)}
}

// gather is the kept rows ids, whose keys' slots are sl, with their
// weights, in the order of their ids: the key column, when not kept, is
// put back from the key table's texts.
func (o *semiOp) gather(ids []int32, sl []int32) (*exec.Batch, error) {
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return int(ids[x] - ids[y]) })
	sorted, keys := make([]int32, len(order)), make([]int32, len(order))
	for k, i := range order {
		sorted[k], keys[k] = ids[i], sl[i]
	}
	b := o.rows.gather(sorted)
	if o.keyCol < 0 {
		return b, nil
	}
	key := &exec.Vec{Type: plan.Text, N: b.N, Ends: make([]uint32, b.N)}
	for i, s := range keys {
		t, ok := o.keys.KeyText(s)
		if !ok {
			return nil, fmt.Errorf("semi-join: key %d is not one text value", s)
		}
		key.Data = append(key.Data, t...)
		key.Ends[i] = uint32(len(key.Data))
	}
	b.Cols = slices.Insert(b.Cols, o.keyCol, key)
	return b, nil
}

// keyCounts are a semi-join's subquery's copies of each key, per slot:
// an int64; or, of a subquery that only grows, whose keys are only asked
// whether they are there, a bit (a semi-join has a slot per outer key:
// millions).
type keyCounts struct {
	grows bool
	n     []int64  // !grows
	there []uint64 // grows: a bit per slot
	slots int
}

func (c *keyCounts) grow(n int) {
	c.slots = n
	if c.grows {
		c.there = append(c.there, make([]uint64, (n+63)/64-len(c.there))...)
	} else {
		c.n = append(c.n, make([]int64, n-len(c.n))...)
	}
}

func (c *keyCounts) get(s int32) int64 {
	if c.grows {
		return int64(c.there[s/64] >> (s % 64) & 1)
	}
	return c.n[s]
}

// add adds w copies of slot s's key (of a subquery that only grows, w >= 0).
func (c *keyCounts) add(s int32, w int64) {
	if !c.grows {
		c.n[s] += w
	} else if w > 0 {
		c.there[s/64] |= 1 << (s % 64)
	}
}

func (c *keyCounts) bytes() int64 { return 8 * int64(cap(c.n)+cap(c.there)) }

// slotsOf is the slot of each row's key (NULL: -1), added when new;
// given, when not nil, are the slots already looked up (FoldSlots'), a
// NULL's among them, which is -1 here all the same.
func (o *semiOp) slotsOf(kv *exec.Vec, given []int32) []int32 {
	var sl []int32
	switch {
	case given == nil:
		modes := make([]exec.KeyMode, kv.N)
		for i := range modes {
			if !kv.IsNull(i) {
				modes[i] = exec.AddKey
			}
		}
		sl = o.keys.Slots([]*exec.Vec{kv}, kv.N, modes, nil)
	case kv.Null == nil:
		sl = given
	default:
		sl = slices.Clone(given) // given may be another operator's too
		for i := range sl {
			if kv.IsNull(i) {
				sl[i] = -1
			}
		}
	}
	o.grow(o.keys.Len())
	return sl
}

// grow makes the state per slot n slots long: those of keys another
// operator added to a shared table are empty.
func (o *semiOp) grow(n int) {
	if n > o.count.slots {
		o.count.grow(n)
		o.rows.grow(n)
		o.mark = append(o.mark, make([]bool, n-len(o.mark))...)
	}
}

func (o *semiOp) step(in []zset) (zset, error) { return o.stepSlots(in, nil) }

// stepSlots is step given, when slots is not nil, the slots of the key
// of each row of each input's batches (slots[k][i]: in[k][i]'s; nil:
// looked up here).
func (o *semiOp) stepSlots(in []zset, slots [][][]int32) (zset, error) {
	dl, dr := in[0], in[1]
	given := func(k, i int) []int32 {
		if slots == nil || slots[k] == nil {
			return nil
		}
		return slots[k][i]
	}
	// The subquery's changes: the keys that come (+) and go (-) take
	// the left rows kept so far with them.
	var touched []int32 // the keys the subquery's changes touch, once each
	var before []int64  // their counts before
	for j, b := range dr {
		ws := weights(b)
		for i, s := range o.slotsOf(b.Cols[0], given(1, j)) {
			if s < 0 {
				continue
			}
			if ws[i] < 0 && o.grows {
				return nil, fmt.Errorf("semi-join: the subquery retracted a row it was said to keep")
			}
			if !o.mark[s] {
				o.mark[s] = true
				touched, before = append(touched, s), append(before, o.count.get(s))
			}
			o.count.add(s, ws[i])
		}
	}
	var come, gone []int32     // kept rows
	var comeSl, goneSl []int32 // their keys' slots
	for k, s := range touched {
		o.mark[s] = false
		switch was, is := before[k] > 0, o.count.get(s) > 0; {
		case is && !was:
			n := len(come)
			come = o.rows.appendTo(come, s)
			comeSl = appendN(comeSl, s, len(come)-n)

		case was && !is:
			n := len(gone)
			gone = o.rows.appendTo(gone, s)
			goneSl = appendN(goneSl, s, len(gone)-n)
		}
	}
	var out zset
	if len(come) > 0 {
		c, err := o.gather(come, comeSl)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
		if o.grows { // passed: forgotten
			for _, s := range touched {
				if o.count.get(s) > 0 {
					o.rows.clear(s)
				}
			}
		}
	}
	if len(gone) > 0 {
		g, err := o.gather(gone, goneSl)
		if err != nil {
			return nil, err
		}
		ws := weights(g)
		for i := range ws {
			ws[i] = -ws[i]
		}
		g.Cols[len(g.Cols)-1] = weightVec(ws)
		out = append(out, g)
	}
	// The left changes: those of a key there pass; the rest (grows),
	// or all, are kept.
	for j, b := range dl {
		kb, err := exec.Project([]*plan.Expr{o.key}, []*exec.Batch{b})
		if err != nil {
			return nil, fmt.Errorf("semi-join: %w", err)
		}
		var pass, keep []int32
		sl := o.slotsOf(kb[0].Cols[0], given(0, j))
		for i, s := range sl {
			if s < 0 {
				continue
			}
			there := o.count.get(s) > 0
			if there {
				pass = append(pass, int32(i))
			}
			if !there || !o.grows {
				keep = append(keep, int32(i))
			}
		}
		if len(pass) == b.N {
			out = append(out, b)
		} else if len(pass) > 0 {
			out = append(out, b.Rows(pass))
		}
		if len(keep) > 0 {
			ks := make([]int32, len(keep))
			for k, i := range keep {
				ks[k] = sl[i]
			}
			o.rows.add(o.keptCols(b), keep, ks)
		}
	}
	return out, nil
}

// distinctOp is DISTINCT. Over an input that only grows it is
// exec.Distinct: a row new to it passes, once. Over one that retracts
// rows it counts each distinct row's copies (rowSet), and a row passes
// (+1) when its count leaves 0 and leaves (-1) when it comes back to 0.
type distinctOp struct {
	cols    []plan.Column
	grow    *exec.Distinct // the input only grows
	keys    *exec.KeyTable // grow's
	counted *rowSet        // else
}

func newDistinct(n *plan.Node, monotone bool, keys *exec.KeyTable) *distinctOp {
	o := &distinctOp{cols: n.Output}
	if monotone {
		if o.keys = keys; keys == nil {
			o.keys = exec.NewKeyTable()
		}
		o.grow = exec.NewDistinct(o.keys)
	} else {
		o.counted = newRowSet(n.Output, false)
	}
	return o
}

func (o *distinctOp) step(in []zset) (zset, error) { return o.stepSlots(in, nil) }

// stepSlots is step given, over rows that only arrive, the slots of the
// rows of in[0]'s batches (slots[i]: in[0][i]'s; nil: looked up here).
func (o *distinctOp) stepSlots(in []zset, slots [][]int32) (zset, error) {
	if o.grow != nil {
		var out zset
		for i, b := range in[0] {
			var sl []int32
			if slots != nil {
				sl = slots[i]
			}
			if nb := o.grow.AddSlots(b, len(o.cols), sl); nb != nil {
				nb.Cols[len(o.cols)] = constWeights(nb.N, 1) // one copy, however many came
				out = append(out, nb)
			}
		}
		return out, nil
	}
	var refs []ref
	var ws []int64
	for _, c := range o.counted.apply(in[0]) {
		was, is := c.before > 0, o.counted.count(c.entry) > 0
		switch {
		case !was && is:
			refs, ws = append(refs, o.counted.ref(c.entry)), append(ws, 1)
		case was && !is:
			refs, ws = append(refs, o.counted.ref(c.entry)), append(ws, -1)
		}
	}
	var out zset
	if len(refs) > 0 {
		// Distinct rows already: exec.Distinct writes them as DISTINCT
		// does (numbers in their normal form).
		out = zset{exec.NewDistinct(exec.NewKeyTable()).Add(o.counted.st.gather(o.cols, refs, ws), len(o.cols))}
	}
	o.counted.release()
	return out, nil
}
