package exec

import (
	"bytes"
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// eval computes e over every row of b at once: each node of the
// expression is one loop over whole column vectors, not a walk of the
// tree per row. A constant is one value that the loops read for every
// row (at), not a column of b.N copies; only a constant that is the
// whole expression is made a column.
func eval(e *plan.Expr, b *Batch) (*Vec, error) {
	v, err := evalAt(e, b)
	if err != nil || v.N == b.N {
		return v, err
	}
	return gather(v, make([]int32, b.N)), nil // a constant: value 0, b.N times
}

// at is the index of row i's value in v: v's one value when v is a
// constant (a Vec of one value, read for every row; of a batch of one
// row, the same index), else i.
func at(v *Vec, i int) int {
	if v.N == 1 {
		return 0
	}
	return i
}

// evalAt is eval, but a constant is a Vec of one value (see at).
func evalAt(e *plan.Expr, b *Batch) (*Vec, error) {
	switch e.Kind {
	case plan.ColRef:
		if e.Col < 0 || e.Col >= len(b.Cols) {
			return nil, fmt.Errorf("column #%d of %d", e.Col, len(b.Cols))
		}
		return b.Cols[e.Col], nil
	case plan.Const:
		return constVec(e, 1)
	}
	args := make([]*Vec, len(e.Args))
	for i, a := range e.Args {
		v, err := evalAt(a, b)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	n := b.N
	switch e.Kind {
	case plan.Cmp:
		return cmpVec(e.Fn, args[0], args[1], n)
	case plan.And, plan.Or:
		return logicVec(e.Kind == plan.And, args[0], args[1], n), nil
	case plan.Not:
		return notVec(args[0], n), nil
	case plan.IsNull:
		out := newBools(n)
		for i := range n {
			out.Bools[i] = args[0].IsNull(at(args[0], i)) != (e.Fn == "not")
		}
		return out, nil
	case plan.In:
		return inVec(args, n), nil
	case plan.Arith:
		return arithVec(e.Fn, args[0], args[1], n)
	case plan.Neg:
		out := newBuilder(plan.Number, n)
		for i := range n {
			if j := at(args[0], i); args[0].IsNull(j) {
				out.null()
			} else {
				out.num(args[0].Nums[j].Neg())
			}
		}
		return out.v, nil
	case plan.Case:
		return caseVec(e.Type, args, n), nil
	case plan.Call:
		if v, ok := finishCall(e.Fn, args, n); ok {
			return v, nil
		}
		if v, ok, err := scalarCall(e.Fn, args, n); ok {
			return v, err
		}
		if e.Fn == plan.FnKey {
			return keyVec(args, n), nil
		}
		if e.Fn == plan.FnOneRow {
			return oneRowVec(args, n)
		}
		switch e.Fn {
		case plan.FnCoalesce:
			return coalesceVec(e.Type, args, n), nil
		case plan.FnGreatest, plan.FnLeast:
			return extremeVec(e.Type, args, n, e.Fn == plan.FnGreatest), nil
		case plan.FnConcatAll:
			return concatVec(args, n), nil
		case plan.FnNullIf:
			if len(args) != 2 {
				return nil, fmt.Errorf("NULLIF of %d arguments", len(args))
			}
			return nullIfVec(args[0], args[1], n)
		}
		if e.Fn != plan.FnPercent || len(args) != 2 {
			return nil, fmt.Errorf("unknown function %s/%d", e.Fn, len(args))
		}
		out := newBuilder(plan.Number, n)
		for i := range n {
			p, w := at(args[0], i), at(args[1], i)
			if args[0].IsNull(p) || args[1].IsNull(w) {
				out.null()
				continue
			}
			if d, ok := value.Percent(args[0].Nums[p], args[1].Nums[w]); ok {
				out.num(d)
			} else {
				out.null()
			}
		}
		return out.v, nil
	}
	return nil, fmt.Errorf("unknown expression %q", e.Kind)
}

// constVec is the constant e repeated n times.
func constVec(e *plan.Expr, n int) (*Vec, error) {
	out := newBuilder(e.Type, n)
	if e.Null {
		for range n {
			out.null()
		}
		return out.v, nil
	}
	switch e.Type {
	case plan.Text:
		for range n {
			out.text(e.Value)
		}
	case plan.Number:
		d, ok := value.ReadNumber(e.Value)
		if !ok {
			return nil, fmt.Errorf("constant %q is not a number", e.Value)
		}
		for range n {
			out.num(d)
		}
	case plan.Bool:
		for range n {
			out.boolean(string(e.Value) == "true")
		}
	default:
		return nil, fmt.Errorf("constant of type %q", e.Type)
	}
	return out.v, nil
}

// newBools is a Bool Vec of n false values, to be set in place; its
// Null is made at the first NULL (setNull). A NULL's Bools value stays
// false, as a builder's.
func newBools(n int) *Vec { return &Vec{Type: plan.Bool, N: n, Bools: make([]bool, n)} }

// setNull makes value i of v, a Vec being made in place, NULL.
func setNull(v *Vec, i int) {
	if v.Null == nil {
		v.Null = make([]bool, v.N)
	}
	v.Null[i] = true
}

// notVec is NOT x: NULL stays NULL.
func notVec(x *Vec, n int) *Vec {
	out := newBools(n)
	for i := range n {
		if j := at(x, i); x.IsNull(j) {
			setNull(out, i)
		} else {
			out.Bools[i] = !x.Bools[j]
		}
	}
	return out
}

// cmpTests are, for each comparison, whether it holds of a comparison's
// result -1, 0 or +1 (at index result + 1).
var cmpTests = map[string][3]bool{
	"=":  {false, true, false},
	"<>": {true, false, true},
	"<":  {true, false, false},
	"<=": {true, true, false},
	">":  {false, false, true},
	">=": {false, true, true},
}

// cmpVec is l fn r, NULL where either is. A column compared with a
// constant reads the constant once, not at each row.
func cmpVec(fn string, l, r *Vec, n int) (*Vec, error) {
	test, ok := cmpTests[fn]
	if !ok {
		return nil, fmt.Errorf("unknown comparison %q", fn)
	}
	if l.Type != r.Type {
		return nil, fmt.Errorf("comparison of %s with %s", l.Type, r.Type)
	}
	out := newBools(n)
	if l.N == n && r.N == 1 && n > 1 && !r.IsNull(0) {
		cmpConst(out, test, l, r)
		return out, nil
	}
	for i := range n {
		li, ri := at(l, i), at(r, i)
		if l.IsNull(li) || r.IsNull(ri) {
			setNull(out, i)
			continue
		}
		var c int
		switch l.Type {
		case plan.Text:
			c = bytes.Compare(l.Text(li), r.Text(ri))
		case plan.Number:
			c = l.Nums[li].Cmp(r.Nums[ri])
		default:
			c = compare(l, li, r, ri)
		}
		out.Bools[i] = test[c+1]
	}
	return out, nil
}

// cmpConst sets out to the comparison of each value of column l with
// the one value of r, which is not NULL.
func cmpConst(out *Vec, test [3]bool, l, r *Vec) {
	for i := range out.N {
		if l.IsNull(i) {
			setNull(out, i)
		}
	}
	switch l.Type {
	case plan.Text:
		k := r.Text(0)
		for i := range out.N {
			out.Bools[i] = test[bytes.Compare(l.Text(i), k)+1]
		}
	case plan.Number:
		k := r.Nums[0]
		for i := range out.N {
			out.Bools[i] = test[l.Nums[i].Cmp(k)+1]
		}
	default:
		for i := range out.N {
			out.Bools[i] = test[compare(l, i, r, 0)+1]
		}
	}
	if out.Null != nil {
		for i, null := range out.Null {
			out.Bools[i] = out.Bools[i] && !null
		}
	}
}

// logicVec is AND or OR in three-valued logic: false AND NULL is false,
// true OR NULL is true, otherwise NULL wins.
func logicVec(and bool, l, r *Vec, n int) *Vec {
	out := newBools(n)
	if l.N == n && r.N == n && l.Null == nil && r.Null == nil {
		for i := range n {
			if and {
				out.Bools[i] = l.Bools[i] && r.Bools[i]
			} else {
				out.Bools[i] = l.Bools[i] || r.Bools[i]
			}
		}
		return out
	}
	for i := range n {
		li, ri := at(l, i), at(r, i)
		ln, rn := l.IsNull(li), r.IsNull(ri)
		lv, rv := !ln && l.Bools[li], !rn && r.Bools[ri]
		switch {
		case and && (!ln && !lv || !rn && !rv):
		case !and && (lv || rv):
			out.Bools[i] = true
		case ln || rn:
			setNull(out, i)
		default:
			out.Bools[i] = and
		}
	}
	return out
}

// inVec is args[0] IN (args[1:]): true when equal to one, NULL when not
// and the value or a list item is NULL, else false. Text against a list
// of constants compares the bytes of each.
func inVec(args []*Vec, n int) *Vec {
	if x := args[0]; x.Type == plan.Text && x.N == n && n > 1 {
		if out := inTexts(x, args[1:]); out != nil {
			return out
		}
	}
	out := newBools(n)
	for i := range n {
		x := at(args[0], i)
		if args[0].IsNull(x) {
			setNull(out, i)
			continue
		}
		found, null := false, false
		for _, item := range args[1:] {
			if j := at(item, i); item.IsNull(j) {
				null = true
			} else if compare(args[0], x, item, j) == 0 {
				found = true
				break
			}
		}
		if !found && null {
			setNull(out, i)
		} else {
			out.Bools[i] = found
		}
	}
	return out
}

// inTexts is inVec of a text column x and items that are constants none
// of which is NULL; nil when they are not.
func inTexts(x *Vec, items []*Vec) *Vec {
	list := make([][]byte, len(items))
	for k, item := range items {
		if item.N != 1 || item.IsNull(0) {
			return nil
		}
		list[k] = item.Text(0)
	}
	out := newBools(x.N)
	for i := range x.N {
		if x.IsNull(i) {
			setNull(out, i)
			continue
		}
		t := x.Text(i)
		for _, k := range list {
			if bytes.Equal(t, k) {
				out.Bools[i] = true
				break
			}
		}
	}
	return out
}

func arithVec(fn string, l, r *Vec, n int) (*Vec, error) {
	out := newBuilder(plan.Number, n)
	var op func(a, b value.Dec) (value.Dec, bool)
	switch fn {
	case "+":
		op = func(a, b value.Dec) (value.Dec, bool) { return a.Add(b), true }
	case "-":
		op = func(a, b value.Dec) (value.Dec, bool) { return a.Sub(b), true }
	case "*":
		op = func(a, b value.Dec) (value.Dec, bool) { return a.Mul(b), true }
	case "/":
		op = value.Dec.Div
	case "%":
		op = value.Dec.Rem
	default:
		return nil, fmt.Errorf("unknown operator %q", fn)
	}
	for i := range n {
		li, ri := at(l, i), at(r, i)
		if l.IsNull(li) || r.IsNull(ri) {
			out.null()
			continue
		}
		if d, ok := op(l.Nums[li], r.Nums[ri]); ok && d.Fits() {
			out.num(d)
		} else {
			out.null() // division (or remainder) by zero, or past value.MaxDigits
		}
	}
	return out.v, nil
}

// caseVec picks, per row, the value of the first WHEN that is true, else
// the ELSE value or NULL.
func caseVec(t plan.Type, args []*Vec, n int) *Vec {
	out := newBuilder(t, n)
	for i := range n {
		picked := false
		for k := 0; k+1 < len(args); k += 2 {
			if c := at(args[k], i); !args[k].IsNull(c) && args[k].Bools[c] {
				out.from(args[k+1], at(args[k+1], i))
				picked = true
				break
			}
		}
		if picked {
			continue
		}
		if e := args[len(args)-1]; len(args)%2 == 1 {
			out.from(e, at(e, i))
		} else {
			out.null()
		}
	}
	return out.v
}

// coalesceVec picks, per row, the first argument's value that is not
// NULL, else NULL.
func coalesceVec(t plan.Type, args []*Vec, n int) *Vec {
	out := newBuilder(t, n)
rows:
	for i := range n {
		for _, a := range args {
			if j := at(a, i); !a.IsNull(j) {
				out.from(a, j)
				continue rows
			}
		}
		out.null()
	}
	return out.v
}

// extremeVec is GREATEST(args...) (greatest) or LEAST(args...): per
// row, the largest (smallest) argument that is not NULL, of equal
// numbers the one of the larger scale (as MIN and MAX keep), NULL when
// every argument is.
func extremeVec(t plan.Type, args []*Vec, n int, greatest bool) *Vec {
	out := newBuilder(t, n)
	want := -1
	if greatest {
		want = 1
	}
	for i := range n {
		var best *Vec
		bj := 0
		for _, a := range args {
			j := at(a, i)
			if a.IsNull(j) {
				continue
			}
			if best == nil {
				best, bj = a, j
				continue
			}
			c := compare(a, j, best, bj)
			if c == want || c == 0 && compareScales(a, j, best, bj) > 0 {
				best, bj = a, j
			}
		}
		if best == nil {
			out.null()
		} else {
			out.from(best, bj)
		}
	}
	return out.v
}

// concatVec is CONCAT(args...): the texts one after the other, a NULL
// as the empty text (PostgreSQL's and DuckDB's), never NULL.
func concatVec(args []*Vec, n int) *Vec {
	out := newBuilder(plan.Text, n)
	var buf []byte
	for i := range n {
		buf = buf[:0]
		for _, a := range args {
			if j := at(a, i); !a.IsNull(j) {
				buf = append(buf, a.Text(j)...)
			}
		}
		out.text(buf)
	}
	return out.v
}

// nullIfVec is NULLIF(a, b): NULL where a = b is true (equal values, by
// value: 1.0 equals 1), else a, NULLs of either side included.
func nullIfVec(a, b *Vec, n int) (*Vec, error) {
	eq, err := cmpVec("=", a, b, n)
	if err != nil {
		return nil, fmt.Errorf("NULLIF: %w", err)
	}
	out := newBuilder(a.Type, n)
	for i := range n {
		if !eq.IsNull(i) && eq.Bools[i] {
			out.null()
		} else {
			out.from(a, at(a, i))
		}
	}
	return out.v, nil
}
