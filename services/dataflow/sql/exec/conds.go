package exec

import (
	"bytes"
	"cmp"
	"fmt"
	"reflect"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// Conds are conditions compiled to find the rows of a batch where each is
// true, all in one pass. A condition is the AND of its conjuncts (the
// operands of its top-level ANDs), evaluated one after the other, each
// over the rows the ones before it left (a selection): a later conjunct
// reads only the rows still true. The order is free: in three-valued
// logic an AND is true exactly where every operand is, whatever the order,
// and a row is kept only where its condition is true (NULL and false
// alike drop it). The conjuncts that several conditions share come first,
// so that a condition starts from the selection of an earlier one with
// the same first conjuncts and a shared conjunct is evaluated once.
//
// The common conjuncts read the selected rows' values in place: a column
// compared with a constant (text or number), a text column IN constants,
// a boolean column or its NOT, a column IS [NOT] NULL. Any other is
// evaluated (eval) over the selected rows of the columns it reads.
//
// The selections are made in memory the Conds keeps from one TrueRows to
// the next (scratch), so that routing batch after batch (an exchange's
// Conds) allocates them once.
type Conds struct {
	conjs []conjunct
	order []condOrder
	// scratch: every row's index (all); per condition the memory of its
	// selection after each of its conjuncts (bufs), and that selection
	// (sels: in bufs, or all, or another condition's); and what TrueRows
	// returns (out).
	all  []int32
	bufs [][][]int32
	sels [][][]int32
	out  [][]int32
}

// condOrder is how one condition is evaluated: its conjuncts, then the
// selections it starts with.
type condOrder struct {
	conjs []int // indexes in Conds.conjs, in evaluation order
	// The selections after the first `shared` conjuncts are those of
	// condition from, an earlier one (shared 0: none is).
	from, shared int
}

// conjForm is how a conjunct is evaluated.
type conjForm int

const (
	general conjForm = iota // eval over the selected rows
	cmpText                 // text column col fn text[0]
	cmpNum                  // number column col fn num
	inText                  // text column col IN text
	boolCol                 // boolean column col is want
	isNull                  // column col IS NULL is want
)

// conjunct is one conjunct of a condition and the form it is evaluated
// in (general when it has no other; the other fields are the form's).
type conjunct struct {
	e    *plan.Expr
	form conjForm
	col  int
	typ  plan.Type // the column's type the form reads
	test [3]bool   // cmpText, cmpNum: cmpTests[fn]
	eq   bool      // cmpText: fn is = or <>, which test bytes.Equal
	text [][]byte
	num  value.Dec
	// numAt is num's unscaled value at each scale (ok false where it
	// has none: below its scale, or too large for an int64).
	numAt [numScales]struct {
		u  int64
		ok bool
	}
	want bool
}

// numScales is how many scales, from 0, numAt holds the constant at: an
// int64 has 19 digits at most.
const numScales = 19

// NewConds compiles the conditions (none nil).
func NewConds(conds []*plan.Expr) *Conds {
	c := &Conds{
		order: make([]condOrder, len(conds)),
		bufs:  make([][][]int32, len(conds)),
		sels:  make([][][]int32, len(conds)),
		out:   make([][]int32, len(conds)),
	}
	for k, cond := range conds {
		for _, e := range conjuncts(cond, nil) {
			i := slices.IndexFunc(c.conjs, func(x conjunct) bool { return reflect.DeepEqual(x.e, e) })
			if i < 0 {
				i = len(c.conjs)
				c.conjs = append(c.conjs, compileConjunct(e))
			}
			c.order[k].conjs = append(c.order[k].conjs, i)
		}
		c.bufs[k] = make([][]int32, len(c.order[k].conjs))
		c.sels[k] = make([][]int32, len(c.order[k].conjs))
	}
	// The conjuncts of more conditions first, then those seen first (a
	// condition alone keeps its order), and each condition starts from
	// the earlier one sharing the most first conjuncts.
	uses := make([]int, len(c.conjs))
	for _, o := range c.order {
		for _, i := range o.conjs {
			uses[i]++
		}
	}
	for k := range c.order {
		o := &c.order[k]
		slices.SortFunc(o.conjs, func(a, b int) int { return cmp.Or(cmp.Compare(uses[b], uses[a]), cmp.Compare(a, b)) })
		for j := range k {
			n := commonPrefix(o.conjs, c.order[j].conjs)
			if n > o.shared {
				o.from, o.shared = j, n
			}
		}
	}
	return c
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// conjuncts appends the operands of e's top-level ANDs to dst.
func conjuncts(e *plan.Expr, dst []*plan.Expr) []*plan.Expr {
	if e.Kind == plan.And && len(e.Args) == 2 {
		return conjuncts(e.Args[1], conjuncts(e.Args[0], dst))
	}
	return append(dst, e)
}

// flipped is comparison fn with its operands swapped: k < x is x > k.
var flipped = map[string]string{"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// compileConjunct is e in the form that evaluates it.
func compileConjunct(e *plan.Expr) conjunct {
	c := conjunct{e: e}
	a := e.Args
	switch {
	case e.Kind == plan.Cmp && len(a) == 2:
		col, k, fn := a[0], a[1], e.Fn
		if col.Kind == plan.Const {
			col, k, fn = k, col, flipped[fn]
		}
		test, ok := cmpTests[fn]
		if !ok || col.Kind != plan.ColRef || k.Kind != plan.Const || k.Null || col.Type != k.Type {
			return c
		}
		c.col, c.test, c.typ = col.Col, test, k.Type
		switch k.Type {
		case plan.Text:
			c.form, c.text, c.eq = cmpText, [][]byte{k.Value}, fn == "=" || fn == "<>"
		case plan.Number:
			d, ok := value.ReadNumber(k.Value)
			if !ok {
				return conjunct{e: e}
			}
			c.form, c.num = cmpNum, d
			for s := range c.numAt {
				c.numAt[s].u, c.numAt[s].ok = d.UnscaledAt(int32(s))
			}
		}
	case e.Kind == plan.In && len(a) > 1 && a[0].Kind == plan.ColRef && a[0].Type == plan.Text:
		for _, k := range a[1:] {
			if k.Kind != plan.Const || k.Null || k.Type != plan.Text {
				return c
			}
			c.text = append(c.text, k.Value)
		}
		c.form, c.col, c.typ = inText, a[0].Col, plan.Text
	case e.Kind == plan.ColRef && e.Type == plan.Bool:
		c.form, c.col, c.typ, c.want = boolCol, e.Col, plan.Bool, true
	case e.Kind == plan.Not && a[0].Kind == plan.ColRef && a[0].Type == plan.Bool:
		c.form, c.col, c.typ, c.want = boolCol, a[0].Col, plan.Bool, false
	case e.Kind == plan.IsNull && a[0].Kind == plan.ColRef:
		c.form, c.col, c.typ, c.want = isNull, a[0].Col, a[0].Type, e.Fn != "not"
	}
	return c
}

// PassFlags is the rows of b where c's first condition is true (TrueRows'
// slice), and a flag per row of b: whether it is one of them.
func PassFlags(c *Conds, b *Batch) ([]int32, []bool, error) {
	sels, err := c.TrueRows(b)
	if err != nil {
		return nil, nil, err
	}
	pass := make([]bool, b.N)
	for _, i := range sels[0] {
		pass[i] = true
	}
	return sels[0], pass, nil
}

// TrueRows is, for each condition, the rows of b where it is true, in
// order: slices to read only, which conditions may share, and which the
// next call of TrueRows overwrites.
func (c *Conds) TrueRows(b *Batch) ([][]int32, error) {
	for i := len(c.all); i < b.N; i++ {
		c.all = append(c.all, int32(i))
	}
	all, sels, out := c.all[:b.N], c.sels, c.out
	for k, o := range c.order {
		copy(sels[k], sels[o.from][:o.shared])
		sel := all
		if o.shared > 0 {
			sel = sels[k][o.shared-1]
		}
		for d := o.shared; d < len(o.conjs); d++ {
			if len(sel) > 0 {
				if cap(c.bufs[k][d]) < len(sel) {
					c.bufs[k][d] = make([]int32, max(len(sel), b.N))
				}
				var err error
				if sel, err = c.conjs[o.conjs[d]].rows(b, sel, c.bufs[k][d][:len(sel)]); err != nil {
					return nil, err
				}
			}
			sels[k][d] = sel
		}
		out[k] = sel
	}
	return out, nil
}

// rows is the rows of sel (rows of b, in order) where the conjunct is
// true: written in dst (len(sel) long), or a new slice, or sel itself
// when it is every row of sel.
func (c *conjunct) rows(b *Batch, sel, dst []int32) ([]int32, error) {
	var v *Vec
	if c.form != general {
		if c.col < 0 || c.col >= len(b.Cols) {
			return nil, fmt.Errorf("column #%d of %d", c.col, len(b.Cols))
		}
		if v = b.Cols[c.col]; v.Type != c.typ {
			return c.evalRows(b, sel)
		}
	}
	if c.form == isNull && v.Null == nil { // no row is NULL
		if c.want {
			return []int32{}, nil
		}
		return sel, nil
	}
	// Each row of sel is written at out[n], n counting those kept: no
	// branch on the outcome.
	out, n := dst, 0
	switch c.form {
	case cmpText:
		k := c.text[0]
		for _, r := range sel {
			t := v.Text(int(r))
			var keep bool
			if c.eq {
				keep = bytes.Equal(t, k) == c.test[1]
			} else {
				keep = c.test[bytes.Compare(t, k)+1]
			}
			out[n] = r
			n += one(keep && !v.IsNull(int(r)))
		}
	case cmpNum:
		for _, r := range sel {
			// As int64s when the row's number is one at a scale the
			// constant has an int64 at (numAt), else by Dec.Cmp.
			d, cmpd := v.Nums[r], 0
			if u, s, ok := d.Unscaled(); ok && uint(s) < uint(len(c.numAt)) && c.numAt[s].ok {
				cmpd = cmp.Compare(u, c.numAt[s].u)
			} else {
				cmpd = d.Cmp(c.num)
			}
			out[n] = r
			n += one(c.test[cmpd+1] && !v.IsNull(int(r)))
		}
	case inText:
		for _, r := range sel {
			t, keep := v.Text(int(r)), false
			for _, k := range c.text {
				if bytes.Equal(t, k) {
					keep = true
					break
				}
			}
			out[n] = r
			n += one(keep && !v.IsNull(int(r)))
		}
	case boolCol:
		for _, r := range sel {
			out[n] = r
			n += one(v.Bools[r] == c.want && !v.IsNull(int(r)))
		}
	case isNull:
		for _, r := range sel {
			out[n] = r
			n += one(v.IsNull(int(r)) == c.want)
		}
	default:
		return c.evalRows(b, sel)
	}
	return out[:n], nil
}

// one is 1 for true, 0 for false.
func one(b bool) int {
	if b {
		return 1
	}
	return 0
}

// evalRows is rows by eval: over the whole batch when sel is all of it,
// else over the selected rows of the columns the conjunct reads.
func (c *conjunct) evalRows(b *Batch, sel []int32) ([]int32, error) {
	in := b
	if len(sel) < b.N {
		in = &Batch{N: len(sel), Cols: make([]*Vec, len(b.Cols))}
		if err := gatherRead(c.e, b, sel, in.Cols); err != nil {
			return nil, err
		}
	}
	v, err := eval(c.e, in)
	if err != nil {
		return nil, err
	}
	out := make([]int32, 0, len(sel))
	for i, r := range sel {
		if !v.IsNull(i) && v.Bools[i] {
			out = append(out, r)
		}
	}
	return out, nil
}

// gatherRead sets cols[i], for each column i of b that e reads, to its
// values at rows.
func gatherRead(e *plan.Expr, b *Batch, rows []int32, cols []*Vec) error {
	if e.Kind == plan.ColRef {
		if e.Col < 0 || e.Col >= len(b.Cols) {
			return fmt.Errorf("column #%d of %d", e.Col, len(b.Cols))
		}
		if cols[e.Col] == nil {
			cols[e.Col] = gather(b.Cols[e.Col], rows)
		}
	}
	for _, a := range e.Args {
		if err := gatherRead(a, b, rows, cols); err != nil {
			return err
		}
	}
	return nil
}
