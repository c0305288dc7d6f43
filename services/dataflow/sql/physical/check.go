package physical

import (
	"errors"
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
)

// Check verifies a plan's invariants, as a plan decoded from a store
// must hold them before anything runs it:
//
//   - every operator's input is produced: by an earlier operator of its
//     task, or by a route of a channel into its task that names it as the
//     consumer; every operator's output is read, every query has a sink at
//     the gateway;
//   - every channel is written by one exchange in the task it leaves, its
//     key is among the columns it carries, and those columns and its
//     routes' conditions read only columns its producer's input has;
//   - the expressions of every operator read only columns of its input;
//   - nothing keyed runs before its shuffle: a keyed operator in a task of
//     more than one instance reads rows partitioned by its key (a join or
//     semi-join each input by its side's key, an aggregate or DISTINCT by a
//     part of its key), as derived here from the channels' keys and the
//     operators between them, independently of how Build placed them;
//   - a channel has at most MaxRoutes routes (a row names its routes in
//     a 64-bit mask);
//   - only exchanges read a scan, so that what the gateway does as a file
//     is parsed (route its rows: Source) runs apart from what it does with
//     rows that come in on channels.
func Check(p *Plan) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	replicas := map[string]int{p.Gateway.Name: p.Gateway.Replicas, p.Shard.Name: p.Shard.Replicas}
	read := map[int]bool{}
	parts := make([][][]*plan.Expr, len(p.Ops)) // each operator's output partitioning
	joinIns := map[int]joinInputs{}             // each join's inputs
	for i, o := range p.Ops {
		if o.ID != i {
			bad("operator %d is numbered #%d", i, o.ID)
			return errors.Join(errs...)
		}
		if _, ok := replicas[o.Task]; !ok {
			bad("#%d runs in %s, which is neither the gateway's nor the shard's task", o.ID, o.Task)
		}
		var ins [][]plan.Column
		var inParts [][][]*plan.Expr
		for _, in := range o.Inputs {
			cols, part, err := checkInput(p, o, in, parts)
			if err != nil {
				bad("#%d: %w", o.ID, err)
				continue
			}
			if in.Channel == "" {
				read[in.Op] = true
				if p.Ops[in.Op].Kind == plan.Scan && o.Kind != Exchange {
					bad("#%d %s reads scan #%d: only exchanges may", o.ID, o.Kind, in.Op)
				}
			}
			ins, inParts = append(ins, cols), append(inParts, part)
		}
		if len(ins) != len(o.Inputs) {
			continue
		}
		part, err := checkOp(p, o, ins, inParts, replicas[o.Task])
		if err != nil {
			bad("#%d %s: %w", o.ID, o.Kind, err)
		}
		switch {
		case o.Kind == plan.Join:
			joinIns[o.ID] = joinInputs{inParts, len(ins[0])}
		case o.Kind == plan.Filter && o.Inputs[0].Channel == "":
			if j, ok := joinIns[o.Inputs[0].Op]; ok {
				part = j.present(p.Ops[o.Inputs[0].Op].Node.JoinType, o.Node.Cond)
			}
		}
		parts[i] = part
	}
	for _, o := range p.Ops {
		if o.Kind != Exchange && o.Kind != Sink && !read[o.ID] {
			bad("nothing reads #%d %s", o.ID, o.Kind)
		}
	}
	for _, c := range p.Channels {
		if c.Producer < 0 || c.Producer >= len(p.Ops) || p.Ops[c.Producer].Kind != Exchange || p.Ops[c.Producer].Channel != c.Name || p.Ops[c.Producer].Task != c.From {
			bad("channel %s: its producer #%d is not an exchange onto it in %s", c.Name, c.Producer, c.From)
		}
		if len(c.Routes) > MaxRoutes {
			bad("channel %s: %d routes, more than a row can name (%d)", c.Name, len(c.Routes), MaxRoutes)
		}
		for i, r := range c.Routes {
			if r.Consumer < 0 || r.Consumer >= len(p.Ops) || !slices.Contains(p.Ops[r.Consumer].Inputs, Input{Channel: c.Name, Route: i}) {
				bad("channel %s: route %d's consumer #%d does not read it", c.Name, i, r.Consumer)
			}
		}
	}
	for _, q := range p.Queries {
		if q.Sink < 0 || q.Sink >= len(p.Ops) || p.Ops[q.Sink].Kind != Sink || p.Ops[q.Sink].Task != p.Gateway.Name {
			bad("query %s: #%d is not a sink at the gateway", q.Name, q.Sink)
		}
	}
	return errors.Join(errs...)
}

// checkInput checks one input of o and returns its columns and how its
// rows are partitioned.
func checkInput(p *Plan, o *Op, in Input, parts [][][]*plan.Expr) ([]plan.Column, [][]*plan.Expr, error) {
	if in.Channel == "" {
		if in.Op < 0 || in.Op >= o.ID {
			return nil, nil, fmt.Errorf("reads #%d, which is not an operator before it", in.Op)
		}
		src := p.Ops[in.Op]
		if src.Task != o.Task || src.Kind == Exchange || src.Kind == Sink {
			return nil, nil, fmt.Errorf("reads #%d %s of %s, which is no output of its task", in.Op, src.Kind, src.Task)
		}
		return src.Output(), parts[in.Op], nil
	}
	c := p.Channel(in.Channel)
	switch {
	case c == nil:
		return nil, nil, fmt.Errorf("reads channel %s, which does not exist", in.Channel)
	case c.To != o.Task:
		return nil, nil, fmt.Errorf("reads channel %s, which goes to %s", c.Name, c.To)
	case in.Route < 0 || in.Route >= len(c.Routes):
		return nil, nil, fmt.Errorf("reads route %d of channel %s, which has %d", in.Route, c.Name, len(c.Routes))
	case c.Producer < 0 || c.Producer >= o.ID:
		return nil, nil, fmt.Errorf("reads channel %s, written by #%d after it", c.Name, c.Producer)
	case len(c.Exprs) != len(c.Columns):
		return nil, nil, fmt.Errorf("channel %s has %d columns and %d expressions", c.Name, len(c.Columns), len(c.Exprs))
	}
	x := p.Ops[c.Producer]
	if len(x.Inputs) != 1 {
		return nil, nil, fmt.Errorf("channel %s: its producer reads %d inputs", c.Name, len(x.Inputs))
	}
	var srcCols []plan.Column
	if x.Inputs[0].Channel == "" && x.Inputs[0].Op >= 0 && x.Inputs[0].Op < x.ID {
		srcCols = p.Ops[x.Inputs[0].Op].Output()
	} else if xc := p.Channel(x.Inputs[0].Channel); xc != nil && x.Inputs[0].Route < len(xc.Routes) {
		for _, k := range xc.Routes[x.Inputs[0].Route].Cols {
			srcCols = append(srcCols, xc.Columns[k])
		}
	}
	r := c.Routes[in.Route]
	for _, e := range append(slices.Clone(c.Exprs), r.Cond) {
		if err := reads(e, len(srcCols)); err != nil {
			return nil, nil, fmt.Errorf("channel %s: %w of its producer's input", c.Name, err)
		}
	}
	var cols []plan.Column
	colExprs := make([]*plan.Expr, len(r.Cols))
	for j, k := range r.Cols {
		if k < 0 || k >= len(c.Columns) {
			return nil, nil, fmt.Errorf("route %d of %s reads column %d of %d", in.Route, c.Name, k, len(c.Columns))
		}
		cols = append(cols, c.Columns[k])
		colExprs[j] = c.Exprs[k]
	}
	if c.Broadcast {
		return cols, [][]*plan.Expr{{everyInstance}}, nil
	}
	if len(c.Key) == 0 {
		return cols, nil, nil
	}
	var key []*plan.Expr
	for _, k := range c.Key {
		if k < 0 || k >= len(c.Exprs) {
			return nil, nil, fmt.Errorf("channel %s is keyed by column %d of %d", c.Name, k, len(c.Exprs))
		}
		e, ok := rebase(c.Exprs[k], colExprs)
		if !ok { // the consumer cannot tell its rows' key: not partitioned for it
			return cols, nil, nil
		}
		key = append(key, e)
	}
	return cols, [][]*plan.Expr{key}, nil
}

// joinInputs is a join's inputs: how each is partitioned, and the left
// one's columns.
type joinInputs struct {
	parts [][][]*plan.Expr
	nl    int
}

// present is how the rows of a join of type t over the inputs j that
// cond keeps are partitioned: as a join that pads neither side whose
// columns a conjunct of cond requires (IS NOT NULL), since the rows the
// join padded have all that side's columns NULL (a shared outer join's
// member reads it so: share.go).
func (j joinInputs) present(t plan.JoinType, cond *plan.Expr) [][]*plan.Expr {
	var left, right bool // a left column required, a right one
	for _, c := range rewrite.Conjuncts(cond) {
		if c.Kind == plan.IsNull && c.Fn == "not" && len(c.Args) == 1 && c.Args[0].Kind == plan.ColRef {
			left, right = left || c.Args[0].Col < j.nl, right || c.Args[0].Col >= j.nl
		}
	}
	kept := plan.JoinKeeping(t.KeepsLeft() && !right, t.KeepsRight() && !left)
	return joinPart(kept, j.parts[0], j.parts[1], j.nl)
}

// checkOp checks what o computes over its inputs and returns how its
// output is partitioned.
func checkOp(p *Plan, o *Op, ins [][]plan.Column, inParts [][][]*plan.Expr, replicas int) ([][]*plan.Expr, error) {
	want := map[plan.Op]int{plan.Scan: 0, plan.Join: 2, plan.SemiJoin: 2, plan.UnionAll: 2}
	if k, ok := want[o.Kind]; ok && len(ins) != k || !ok && len(ins) != 1 {
		return nil, fmt.Errorf("%d inputs", len(ins))
	}
	switch o.Kind {
	case Exchange:
		if c := p.Channel(o.Channel); c == nil || c.Producer != o.ID {
			return nil, fmt.Errorf("writes channel %q, which it does not produce", o.Channel)
		}
		return nil, nil
	case Sink:
		return nil, nil
	}
	n := o.Node
	if n == nil {
		return nil, errors.New("computes nothing")
	}
	if o.Kind == plan.Scan {
		if o.Task != p.Gateway.Name {
			return nil, errors.New("scans outside the gateway")
		}
		return nil, nil
	}
	var exprs []*plan.Expr
	if n.Op != plan.Join {
		exprs = append(append(append(exprs, n.Cond, n.LeftKey), n.Exprs...), n.Keys...)
		if o.Kind != FinalAggregate { // it merges the partials' columns
			for _, a := range n.Aggs {
				exprs = append(exprs, a.Arg)
			}
		}
	} else if err := reads(n.RightKey, len(ins[1])); err != nil {
		return nil, fmt.Errorf("right key: %w", err)
	}
	if n.Op == plan.Join {
		exprs = append(exprs, n.LeftKey)
	}
	for _, e := range exprs {
		if err := reads(e, len(ins[0])); err != nil {
			return nil, err
		}
	}
	part := func(i int) [][]*plan.Expr { return inParts[i] }
	byKey := func(i int, key []*plan.Expr) bool {
		return replicas == 1 || slices.ContainsFunc(part(i), func(alt []*plan.Expr) bool { return keyString(alt) == keyString(key) })
	}
	groupKeys := n.Keys
	if o.Kind == plan.Distinct {
		groupKeys = rewrite.ColRefs(ins[0])
	}
	switch o.Kind {
	case plan.Filter, plan.SemiJoin, plan.Sort, plan.Limit, plan.RowNumber:
		if o.Kind == plan.SemiJoin {
			if !byKey(0, []*plan.Expr{n.LeftKey}) || !byKey(1, rewrite.ColRefs(ins[1][:1])) {
				return nil, errors.New("runs before its inputs are shuffled by its key")
			}
		}
		return part(0), nil
	case plan.Project:
		return rebaseAll(part(0), n.Exprs), nil
	case plan.Join:
		if isCross(n) { // subquery.go
			if !byKey(1, []*plan.Expr{everyInstance}) {
				return nil, errors.New("a subquery's cross product whose subquery's row is not on every instance")
			}
			return part(0), nil
		}
		if !byKey(0, []*plan.Expr{n.LeftKey}) || !byKey(1, []*plan.Expr{n.RightKey}) {
			return nil, errors.New("runs before its inputs are shuffled by its key")
		}
		return joinPart(n.JoinType, part(0), part(1), len(ins[0])), nil
	case plan.Aggregate, plan.Distinct:
		if replicas > 1 && covering(part(0), groupKeys) == nil {
			return nil, errors.New("runs before its input is partitioned by a part of its key")
		}
		if o.Kind == plan.Distinct {
			return part(0), nil
		}
		return rebaseAll(part(0), groupKeys), nil
	case PartialAggregate:
		return rebaseAll(part(0), groupKeys), nil
	case PartialDistinct:
		return part(0), nil
	case plan.UnionAll:
		return checkUnionAll(ins, inParts)
	case plan.Window:
		return checkWindow(n, ins[0], part(0), replicas) // window.go
	case FinalAggregate:
		if replicas > 1 {
			return nil, errors.New("merges partials in a task of several instances")
		}
		return nil, nil
	}
	return nil, errors.New("unknown operator")
}

// reads checks that e reads only columns 0..n-1.
func reads(e *plan.Expr, n int) error {
	if e == nil {
		return nil
	}
	if e.Kind == plan.ColRef && (e.Col < 0 || e.Col >= n) {
		return fmt.Errorf("%s reads column %d of %d", e, e.Col, n)
	}
	for _, a := range e.Args {
		if err := reads(a, n); err != nil {
			return err
		}
	}
	return nil
}

// rebase rewrites e, over some columns, over cols instead (each an
// expression over the same columns): a part of e equal to cols[j] becomes
// column j. It fails when e reads a column no part of cols computes.
func rebase(e *plan.Expr, cols []*plan.Expr) (*plan.Expr, bool) {
	for j, c := range cols {
		if keyString([]*plan.Expr{c}) == keyString([]*plan.Expr{e}) {
			return &plan.Expr{Kind: plan.ColRef, Col: j, Type: e.Type, Name: e.Name}, true
		}
	}
	if e.Kind == plan.ColRef {
		return nil, false
	}
	out := *e
	out.Args = nil
	for _, a := range e.Args {
		r, ok := rebase(a, cols)
		if !ok {
			return nil, false
		}
		out.Args = append(out.Args, r)
	}
	return &out, true
}

// rebaseAll maps partitioning keys over an operator's input onto its
// output columns exprs: the keys that survive.
func rebaseAll(part [][]*plan.Expr, exprs []*plan.Expr) [][]*plan.Expr {
	var out [][]*plan.Expr
	for _, alt := range part {
		var m []*plan.Expr
		for _, k := range alt {
			r, ok := rebase(k, exprs)
			if !ok {
				m = nil
				break
			}
			m = append(m, r)
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}
