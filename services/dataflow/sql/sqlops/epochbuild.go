package sqlops

import (
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// The units of a standing plan: which incremental operator (incr.Op)
// runs each of the plan's operators. Most are one operator each; a
// query's answer (its Sort and the LIMIT, ROW_NUMBER, projections and
// filters up to its sink) is one unit, the sink, as is a subquery's
// ORDER BY ... LIMIT (its Sort up to its LIMIT or ROW_NUMBER); an
// aggregate over rows that only arrive and the HAVING chained after it
// alone are one (incr.NewHavingIn: a group's row before is made only when
// it passed). A unit's inputs are those of its lowest operator; its
// output is its highest's.

// unitKind is how the epoch task runs a unit.
type unitKind int

const (
	// streamed: a scan, a filter, a projection or a Sort below the answer:
	// no state, each batch through as it comes (the change of a batch is
	// the batch's rows' change), tagged with its epoch.
	streamed unitKind = iota
	// stepped: an operator with state: the epoch's changes held until
	// its inputs have the epoch's marker from every sender, then Step.
	stepped
	// exchanging: an exchange, which writes its changes (with their
	// weights) on its channel as they come, and the marker after.
	exchanging
	// sinking: a query's answer and its sink: each epoch a version.
	sinking
)

// unitPlan is what a unit is made of.
type unitPlan struct {
	kind unitKind
	ops  []*physical.Op // the plan's operators, the lowest first
	// grows says of each input whether its rows only arrive.
	grows []bool
	query string // a sink's
}

// top is the unit's highest operator; bottom, its lowest (its inputs').
func (u *unitPlan) top() *physical.Op    { return u.ops[len(u.ops)-1] }
func (u *unitPlan) bottom() *physical.Op { return u.ops[0] }

// CheckStanding reports whether the epoch task maintains every query of
// the plan over epochs, and when not, which construct it does not, an
// error wrapping incr.ErrUnsupported: the gateway refuses such a
// standing job when it is created (InvalidArgument), rather than publish
// a wrong version. Every plan of the SQL subset passes today, MIN and MAX
// over rows that leave included (a final aggregate merges each touched
// group's partials again).
func CheckStanding(p *physical.Plan) error {
	units, err := standingUnits(p)
	if err != nil {
		return err
	}
	for _, u := range units {
		if _, err := newUnitOp(p, u, nil); err != nil {
			return fmt.Errorf("operator #%d (%s) of %v: %w", u.top().ID, u.top().Kind, u.top().Queries, err)
		}
	}
	return nil
}

// unsupported is an error of a construct the epoch task does not run.
func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", incr.ErrUnsupported, fmt.Sprintf(format, args...))
}

// standingUnits cuts the plan's operators into units, by the ID of
// their highest operator, in the plan's order.
func standingUnits(p *physical.Plan) ([]*unitPlan, error) {
	if err := physical.Check(p); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	consumers := make([][]int, len(p.Ops)) // chained consumers, by ID
	for _, o := range p.Ops {
		for _, in := range o.Inputs {
			if in.Channel == "" {
				consumers[in.Op] = append(consumers[in.Op], o.ID)
			}
		}
	}
	// chainBelow is the one chained input of o, when it has one and is
	// read by o alone.
	chainBelow := func(o *physical.Op) *physical.Op {
		if len(o.Inputs) != 1 || o.Inputs[0].Channel != "" {
			return nil
		}
		below := p.Ops[o.Inputs[0].Op]
		if len(consumers[below.ID]) != 1 || below.Task != o.Task {
			return nil
		}
		return below
	}
	// down is o and the operators below it down to its Sort, through
	// LIMIT, ROW_NUMBER, projections and filters; nil when there is no
	// such Sort.
	down := func(o *physical.Op) []*physical.Op {
		var chain []*physical.Op
		for n := o; n != nil; n = chainBelow(n) {
			chain = append(chain, n)
			switch n.Kind {
			case plan.Sort:
				slices.Reverse(chain)
				return chain
			case plan.Limit, plan.RowNumber, plan.Project, plan.Filter:
			default:
				return nil
			}
		}
		return nil
	}
	taken := make([]bool, len(p.Ops))
	var units []*unitPlan
	// From the top down: a sink's answer, a subquery's LIMIT take in
	// the operators below them first.
	for i := len(p.Ops) - 1; i >= 0; i-- {
		o := p.Ops[i]
		if taken[o.ID] {
			continue
		}
		u := &unitPlan{ops: []*physical.Op{o}}
		switch o.Kind {
		case physical.Sink:
			q := slices.IndexFunc(p.Queries, func(q physical.Query) bool { return q.Sink == o.ID })
			if q < 0 {
				return nil, fmt.Errorf("sink #%d is no query's", o.ID)
			}
			in := chainBelow(o)
			var chain []*physical.Op
			if in != nil {
				chain = down(in)
			}
			if chain == nil {
				return nil, unsupported("query %s: no ORDER of its answer under its sink #%d (a plan of the SQL engine has one)", p.Queries[q].Name, o.ID)
			}
			u = &unitPlan{kind: sinking, ops: append(chain, o), query: p.Queries[q].Name}
		case plan.Limit, plan.RowNumber:
			chain := down(o)
			if chain == nil {
				return nil, unsupported("the %s #%d has no Sort under it in its task", o.Kind, o.ID)
			}
			u = &unitPlan{kind: stepped, ops: chain}
		case physical.Exchange:
			u.kind = exchanging
		case plan.Scan, plan.Project:
			u.kind = streamed
		case plan.Filter:
			u.kind = streamed
			if below := chainBelow(o); below != nil && below.Kind == plan.Aggregate && !taken[below.ID] {
				u = &unitPlan{kind: stepped, ops: []*physical.Op{below, o}} // HAVING with its aggregate; grows decides below
			}
		case plan.Sort:
			u.kind = streamed // below the answer: the order is the answer's alone
		default:
			u.kind = stepped
		}
		for _, x := range u.ops {
			if taken[x.ID] {
				return nil, fmt.Errorf("operator #%d is in two units", x.ID)
			}
			taken[x.ID] = true
		}
		units = append(units, u)
	}
	slices.Reverse(units)
	slices.SortStableFunc(units, func(a, b *unitPlan) int { return a.top().ID - b.top().ID })
	grows := make([]int8, len(p.Ops)) // per op: 0 not known yet, 1 grows, -1 not
	for _, u := range units {
		for _, in := range u.bottom().Inputs {
			g, err := growsAt(p, in, grows)
			if err != nil {
				return nil, err
			}
			u.grows = append(u.grows, g)
		}
		if u.bottom().Kind == plan.Aggregate && len(u.ops) == 2 && !u.grows[0] {
			// A HAVING over an aggregate of rows that leave: two units.
			agg, having := &unitPlan{kind: stepped, ops: u.ops[:1], grows: u.grows}, &unitPlan{kind: streamed, ops: u.ops[1:], grows: []bool{false}}
			*u = *agg
			units = append(units, having)
		}
	}
	slices.SortStableFunc(units, func(a, b *unitPlan) int { return a.top().ID - b.top().ID })
	return units, nil
}

// growsAt reports whether the rows an input reads only arrive as rows
// are appended: those of the operator it reads, or of the exchange
// writing its channel. memo holds what is known, per operator.
func growsAt(p *physical.Plan, in physical.Input, memo []int8) (bool, error) {
	id := in.Op
	if in.Channel != "" {
		c := p.Channel(in.Channel)
		if c == nil {
			return false, fmt.Errorf("no channel %q", in.Channel)
		}
		id = c.Producer
	}
	if id < 0 || id >= len(p.Ops) {
		return false, fmt.Errorf("no operator #%d", id)
	}
	if memo[id] != 0 {
		return memo[id] > 0, nil
	}
	o := p.Ops[id]
	ins := make([]bool, len(o.Inputs))
	for i, x := range o.Inputs {
		g, err := growsAt(p, x, memo)
		if err != nil {
			return false, err
		}
		ins[i] = g
	}
	var g bool
	switch o.Kind {
	case physical.Exchange, physical.PartialDistinct:
		g = len(ins) == 1 && ins[0]
	case physical.PartialAggregate, physical.FinalAggregate:
		g = false // a touched group's partial row leaves, its new one enters
	default:
		var err error
		if g, err = incr.Grows(o.Kind, ins); err != nil {
			return false, fmt.Errorf("operator #%d: %w", o.ID, err)
		}
	}
	memo[id] = -1
	if g {
		memo[id] = 1
	}
	return g, nil
}

// newUnitOp makes the incremental operator of a unit (nil for an
// exchange: the task's own). Its nodes are the plan operators' nodes,
// linked down to the unit's inputs, which are nodes of their columns
// alone. keys, when not nil, is the table of its Plan.Tables entry, which
// a keyed operator keeps its keys in (incr.NewOpIn).
func newUnitOp(p *physical.Plan, u *unitPlan, keys *exec.KeyTable) (*incr.Op, error) {
	if u.kind == exchanging {
		return nil, nil
	}
	cols, err := InputColumns(p, u.bottom())
	if err != nil {
		return nil, err
	}
	var below []*plan.Node
	for _, c := range cols {
		below = append(below, &plan.Node{Output: c})
	}
	if u.bottom().Kind == plan.Scan {
		below = nil // it reads a table
	}
	var node *plan.Node
	for _, o := range u.ops {
		if o.Kind == physical.Sink {
			break
		}
		if o.Node == nil {
			return nil, fmt.Errorf("operator #%d (%s) has no node", o.ID, o.Kind)
		}
		n := *o.Node
		n.Op = o.Kind
		n.Input = below
		node = &n
		below = []*plan.Node{node}
	}
	switch {
	case u.kind == sinking:
		return incr.NewAnswer(node, u.grows[0])
	case len(u.ops) == 2 && u.bottom().Kind == plan.Aggregate:
		return incr.NewHavingIn(node.Input[0], node.Cond, keys), nil
	}
	switch u.top().Kind {
	case physical.PartialAggregate:
		return incr.NewPartialAggregate(node, u.grows[0]), nil
	case physical.FinalAggregate:
		return incr.NewFinalAggregate(node), nil
	case physical.PartialDistinct:
		node.Op = plan.Distinct
	}
	return incr.NewOpIn(node, u.grows, keys)
}
