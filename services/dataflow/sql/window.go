package sql

import (
	"strconv"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Window functions (docs/sql.md "Window functions"): ROW_NUMBER, RANK,
// DENSE_RANK, COUNT, SUM, AVG, MIN and MAX OVER ([PARTITION BY ...]
// [ORDER BY ...]), in the SELECT list and ORDER BY, whole items or
// inside expressions. Each call is bound where it stands as a reference
// to a column of a plan.Window node, which assemble stacks between the
// rows the clauses read (the FROM row, or the aggregate's after HAVING)
// and the projection: one node per distinct OVER clause, each adding its
// functions' columns after its input's, so that the references are
// numbered once every clause is bound and the input's width is known.
// A window's arguments, partition and order are expressions of those
// rows, bound as the SELECT list's are (above the aggregate when the
// query groups: RANK() OVER (ORDER BY COUNT(*) DESC)).
//
// q4's form, ROW_NUMBER() OVER (ORDER BY the query's ORDER BY) as a
// whole item, stays the RowNumber node after the sort and LIMIT
// (selectlist.go); one whose order is not the query's becomes a window
// (windowRowNumber).

// windowSet is a SELECT's window functions.
type windowSet struct {
	on    bool       // binding a clause where a window function may stand
	specs []*winSpec // the distinct OVER clauses, in the order of their first call
}

// winSpec is one OVER clause and the functions called over it.
type winSpec struct {
	key       string // its text, which identifies it
	partition []*plan.Expr
	order     []plan.WinKey
	funcs     []*plan.WinFunc
	texts     []string       // each function's call as written
	refs      [][]*plan.Expr // each function's references, numbered by windowNodes
}

// windowsOn says whether window functions may stand in the clause bound
// next (the SELECT list, ORDER BY), and returns the previous setting.
func (lv *level) windowsOn(on bool) bool {
	if lv.wins == nil {
		lv.wins = &windowSet{}
	}
	was := lv.wins.on
	lv.wins.on = on
	return was
}

// window binds a call with OVER: a reference to its column.
func (lv *level) window(f *parse.Call) (*plan.Expr, *tvar, error) {
	upper := strings.ToUpper(f.Name)
	construct := upper + "() OVER (...)"
	switch {
	case lv.wins == nil || !lv.wins.on:
		return nil, nil, lv.err(f.Pos, construct, "window functions are allowed in the SELECT list and ORDER BY only (not in WHERE, GROUP BY, HAVING, another window's OVER or arguments)")
	case lv.grouped && !lv.post:
		return nil, nil, lv.err(f.Pos, construct, "a window function is not allowed inside an aggregate")
	case !exec.WindowFuncs[f.Name]:
		return nil, nil, lv.err(f.Pos, construct, "not supported as a window function (ROW_NUMBER, RANK, DENSE_RANK, COUNT, SUM, AVG, MIN, MAX are)")
	case f.Distinct || f.Filter != nil:
		return nil, nil, lv.err(f.Pos, construct, "DISTINCT and FILTER are not supported in a window function")
	}
	lv.wins.on = false // no window inside a window
	defer func() { lv.wins.on = true }()
	wf := &plan.WinFunc{Func: f.Name}
	result := known(plan.Number)
	switch {
	case f.Name == plan.WinRowNumber || f.Name == plan.WinRank || f.Name == plan.WinDenseRank:
		if f.Star || len(f.Args) > 0 {
			return nil, nil, lv.err(f.Pos, construct, "takes no argument")
		}
	case f.Name == plan.WinLag || f.Name == plan.WinLead:
		var err error
		if result, err = lv.shiftArgs(f, wf, construct); err != nil {
			return nil, nil, err
		}
	case f.Name == string(plan.Count) && f.Star:
		wf.Func = string(plan.CountStar)
	case len(f.Args) != 1 || f.Star:
		return nil, nil, lv.err(f.Pos, construct, "takes one argument")
	default:
		arg, v, err := lv.expr(f.Args[0])
		if err != nil {
			return nil, nil, err
		}
		switch f.Name {
		case string(plan.Sum), string(plan.Avg):
			if err := lv.unify(v, known(plan.Number), f.Pos, upper); err != nil {
				return nil, nil, err
			}
		case string(plan.Min), string(plan.Max):
			result = v
		}
		wf.Arg = arg
	}
	spec, err := lv.winSpec(f.Over)
	if err != nil {
		return nil, nil, err
	}
	text := lv.c.render(f)
	ref := &plan.Expr{Kind: plan.ColRef, Name: text}
	i := 0
	for i < len(spec.texts) && spec.texts[i] != text {
		i++
	}
	if i == len(spec.texts) {
		spec.funcs, spec.texts, spec.refs = append(spec.funcs, wf), append(spec.texts, text), append(spec.refs, nil)
	}
	spec.refs[i] = append(spec.refs[i], ref)
	return lv.typed(ref, result)
}

// shiftArgs binds LAG's and LEAD's arguments (x [, offset [, default]])
// into wf: x any expression, offset a whole number literal (1 when left
// out), default a literal of x's kind (NULL when left out). It returns
// the result's kind, x's.
func (lv *level) shiftArgs(f *parse.Call, wf *plan.WinFunc, construct string) (*tvar, error) {
	if len(f.Args) < 1 || len(f.Args) > 3 || f.Star {
		return nil, lv.err(f.Pos, construct, "takes (value [, offset [, default]])")
	}
	arg, v, err := lv.expr(f.Args[0])
	if err != nil {
		return nil, err
	}
	wf.Arg, wf.Offset = arg, 1
	if len(f.Args) > 1 {
		lit, ok := f.Args[1].(*parse.Literal)
		n, err := strconv.ParseInt(strings.TrimSpace(litText(lit, ok)), 10, 32)
		if !ok || lit.Kind != parse.NumberLit || err != nil || n < 0 {
			return nil, lv.err(f.Args[1].Position(), construct, "its offset is a whole number literal, 0 or more")
		}
		wf.Offset = n
	}
	if len(f.Args) > 2 {
		d, dv, err := lv.expr(f.Args[2])
		if err != nil {
			return nil, err
		}
		if d.Kind != plan.Const {
			return nil, lv.err(f.Args[2].Position(), construct, "its default is a literal")
		}
		if err := lv.unify(v, dv, f.Args[2].Position(), construct); err != nil {
			return nil, err
		}
		wf.Default = d
	}
	return v, nil
}

// litText is lit's text when ok, else "".
func litText(lit *parse.Literal, ok bool) string {
	if !ok {
		return ""
	}
	return lit.Text
}

// winSpec is the bound OVER clause w, the one of the same text when an
// earlier call has it.
func (lv *level) winSpec(w *parse.Window) (*winSpec, error) {
	key := lv.c.render(&parse.Call{Over: w})
	for _, s := range lv.wins.specs {
		if s.key == key {
			return s, nil
		}
	}
	s := &winSpec{key: key}
	for _, p := range w.PartitionBy {
		x, _, err := lv.expr(p)
		if err != nil {
			return nil, err
		}
		s.partition = append(s.partition, x)
	}
	for _, o := range w.OrderBy {
		x, _, err := lv.expr(o.Expr)
		if err != nil {
			return nil, err
		}
		s.order = append(s.order, plan.WinKey{Expr: x, Desc: o.Desc, NullsFirst: o.Nulls == "first"})
	}
	lv.wins.specs = append(lv.wins.specs, s)
	return s, nil
}

// windowRowNumber binds the SELECT list's ROW_NUMBER() item as a window
// function, when its order is not the query's: the item's column then
// refers to the window's.
func (lv *level) windowRowNumber(items *selectList) error {
	was := lv.windowsOn(true)
	defer lv.windowsOn(was)
	e, v, err := lv.window(items.rowCall)
	if err != nil {
		return err
	}
	items.exprs[items.rowNum], items.vars[items.rowNum] = e, v
	items.rowNum, items.rowCall = -1, nil
	if len(items.texts) > 0 {
		items.texts = items.texts[:0]
	}
	return nil
}

// hasWindow reports whether e refers to a window function's column.
func (lv *level) hasWindow(e *plan.Expr) bool {
	if e == nil || lv.wins == nil {
		return false
	}
	if e.Kind == plan.ColRef {
		for _, s := range lv.wins.specs {
			for _, refs := range s.refs {
				for _, r := range refs {
					if r == e {
						return true
					}
				}
			}
		}
	}
	for _, a := range e.Args {
		if lv.hasWindow(a) {
			return true
		}
	}
	return false
}

// windowNodes stacks over n a Window node per OVER clause, and numbers
// the references to their columns: the functions' columns follow n's.
func (lv *level) windowNodes(n *plan.Node) *plan.Node {
	if lv.wins == nil {
		return n
	}
	width := rowWidth(n)
	for _, s := range lv.wins.specs {
		w := &plan.Node{Op: plan.Window, Input: []*plan.Node{n}, Partition: s.partition, WinOrder: s.order, WinFuncs: s.funcs}
		w.Output = exec.WindowColumns(n.Output, s.funcs) // made again by fixOutputs
		for i, refs := range s.refs {
			for _, r := range refs {
				r.Col = width + i
			}
		}
		n, width = w, width+len(s.funcs)
	}
	return n
}

// rowWidth is the number of n's columns: a join's Output is made at the
// end (fixOutputs), so its width is its inputs'.
func rowWidth(n *plan.Node) int {
	switch n.Op {
	case plan.Join:
		return rowWidth(n.Input[0]) + rowWidth(n.Input[1])
	case plan.Filter, plan.SemiJoin:
		return rowWidth(n.Input[0])
	}
	return len(n.Output)
}

// rowNumberIsOrder reports whether the SELECT list's ROW_NUMBER() item
// orders as the query's ORDER BY does, as written: the same expressions
// (an output column's name or position standing for its item's) in the
// same directions. Then it is q4's RowNumber; else a window function.
func (lv *level) rowNumberIsOrder(sel *parse.Select) bool {
	var call *parse.Call
	for _, it := range sel.Items {
		if c, ok := it.Expr.(*parse.Call); ok && !it.Star && c.Over != nil && c.Name == plan.WinRowNumber {
			call = c
			break
		}
	}
	if call == nil || len(call.Over.OrderBy) != len(sel.OrderBy) {
		return false
	}
	for i, o := range sel.OrderBy {
		w := call.Over.OrderBy[i]
		if o.Desc != w.Desc || o.Nulls != w.Nulls || lv.c.render(lv.orderTarget(sel, o.Expr)) != lv.c.render(lv.orderTarget(sel, w.Expr)) {
			return false
		}
	}
	return true
}

// orderTarget is the expression an ORDER BY key x stands for: the
// item's of the output column it names or numbers, else x.
func (lv *level) orderTarget(sel *parse.Select, x parse.Expr) parse.Expr {
	switch k := x.(type) {
	case *parse.Column:
		if k.Table != "" {
			return x
		}
		for _, it := range sel.Items {
			if !it.Star && it.Alias == k.Name {
				return it.Expr
			}
		}
	case *parse.Literal:
		if k.Kind == parse.NumberLit && isWhole(k.Text) {
			for i, it := range sel.Items {
				if it.Star {
					return x
				}
				if k.Text == strconv.Itoa(i+1) {
					return it.Expr
				}
			}
		}
	}
	return x
}
