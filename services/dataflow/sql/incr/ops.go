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
// comes or goes.
type semiOp struct {
	key   *plan.Expr
	cols  []plan.Column // the left columns
	grows bool          // the subquery only grows
	keys  *exec.KeyTable
	count []int64  // per key's slot: the subquery's copies of it
	rows  refLists // per key's slot: the left rows kept (grows: those waiting for it)
	mark  []bool   // per key's slot: touched (step's scratch, all false between)
	st    store

	// shared: keys is a table other operators keep their keys in too
	// (shared.go), written and restored by what shares it, not here.
	shared bool
}

func newSemi(n *plan.Node, grows bool, keys *exec.KeyTable) *semiOp {
	o := &semiOp{key: n.LeftKey, cols: n.Input[0].Output, grows: grows, keys: keys, shared: keys != nil}
	if keys == nil {
		o.keys = exec.NewKeyTable()
	}
	return o
}

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
	if n > len(o.count) {
		o.count = append(o.count, make([]int64, n-len(o.count))...)
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
				touched, before = append(touched, s), append(before, o.count[s])
			}
			o.count[s] += ws[i]
		}
	}
	var come, gone []ref
	for k, s := range touched {
		o.mark[s] = false
		switch was, is := before[k] > 0, o.count[s] > 0; {
		case is && !was:
			come = o.rows.appendTo(come, s)
			if o.grows { // passed: forgotten (below, once gathered)
				o.rows.clear(s)
			}
		case was && !is:
			gone = o.rows.appendTo(gone, s)
		}
	}
	var out zset
	if len(come) > 0 {
		out = append(out, o.st.gather(o.cols, come, nil))
		if o.grows {
			for _, r := range come {
				o.st.drop(r)
			}
		}
	}
	if len(gone) > 0 {
		g := o.st.gather(o.cols, gone, nil)
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
			there := o.count[s] > 0
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
			at := o.st.add(b.Rows(keep))
			for k, i := range keep {
				o.rows.add(sl[i], ref{b: at.b, r: int32(k)})
			}
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
