package physical

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
)

// Logical is one query of a job: its name and its logical plan.
type Logical struct {
	Name string
	Plan *plan.Node
}

// Build places the logical plans of one job's queries on shape's tasks
// (see the package doc), each as rewrite.OptimizeFor rewrites it for
// shape.Arrival once it is checked to be well formed. The plans given are not changed.
func Build(queries []Logical, shape Shape) (*Plan, error) {
	if shape.Gateway.Name == "" || shape.Shard.Name == "" || shape.Gateway.Replicas < 1 || shape.Shard.Replicas < 1 {
		return nil, fmt.Errorf("physical: shape %v, %v: want a gateway and a shard task with replicas", shape.Gateway, shape.Shard)
	}
	pl := &planner{
		p:        &Plan{Gateway: shape.Gateway, Shard: shape.Shard},
		scans:    map[string]*Op{},
		shuffles: map[string]*Channel{},
		classes:  map[string]string{},
		names:    map[string]bool{},
		order:    shape.Arrival,
	}
	seen := map[string]bool{}
	queries = slices.Clone(queries)
	for i, q := range queries {
		switch {
		case q.Name == "":
			return nil, errors.New("physical: a query has no name")
		case seen[q.Name]:
			return nil, fmt.Errorf("physical: query %s is named twice", q.Name)
		case q.Plan == nil:
			return nil, fmt.Errorf("physical: query %s has no plan", q.Name)
		}
		seen[q.Name] = true
		if err := wellFormed(q.Plan); err != nil {
			return nil, fmt.Errorf("physical: query %s: %w", q.Name, err)
		}
		queries[i].Plan = rewrite.OptimizeFor(q.Plan, shape.Arrival)
		pl.query = q.Name
		pl.registerScans(queries[i].Plan)
	}
	pl.findShared(queries) // share.go
	for _, q := range queries {
		pl.query = q.Name
		out, err := pl.place(q.Plan)
		if err != nil {
			return nil, fmt.Errorf("physical: query %s: %w", q.Name, err)
		}
		g := pl.toGateway(out)
		sink := pl.addOp(pl.p.Gateway.Name, Sink, nil, g.in)
		pl.p.Queries = append(pl.p.Queries, Query{Name: q.Name, Sink: sink.ID})
	}
	pl.assignTables()
	return pl.p, nil
}

type planner struct {
	p        *Plan
	query    string              // the query being placed
	scans    map[string]*Op      // table -> its one scan
	shuffles map[string]*Channel // table and key -> the one channel shuffling it by that key
	classes  map[string]string   // key classes, union-find: class -> parent
	keyed    []keyedOp
	names    map[string]bool        // channel names taken
	shared   map[string]*sharedJoin // the shared joins, by signature (share.go)
	order    []string               // the tables in the order their uploads end (Shape.Arrival)
}

// keyedOp is a keyed operator and the class of the key its state is by.
type keyedOp struct {
	op    *Op
	class string
}

// where a stream's rows are.
type where int

const (
	atSource  where = iota // being parsed at the gateway, not yet materialised
	atShard                // in the shard task, partitioned by part
	atGateway              // in the gateway task's one instance
)

// stream is the output of a placed logical node.
type stream struct {
	at where

	// atSource: the rows of table's scan where cond holds, as exprs (over
	// the scan's columns).
	table string
	cond  *plan.Expr
	exprs []*plan.Expr

	// atShard, atGateway: the operator or channel route the rows come from.
	task string
	in   Input

	cols []plan.Column
	// atShard: the keys (each a tuple of expressions over cols) the rows
	// are partitioned by, and the class of those keys.
	part  [][]*plan.Expr
	class string
}

// registerScans gives every scan's columns a column of its table's one
// scan (a column read as two kinds is two columns), before any operator
// reads them.
func (pl *planner) registerScans(n *plan.Node) {
	if n.Op == plan.Scan {
		s := pl.scans[n.Table]
		if s == nil {
			s = pl.addOp(pl.p.Gateway.Name, plan.Scan, &plan.Node{Op: plan.Scan, Table: n.Table})
			pl.scans[n.Table] = s
		}
		pl.serve(s)
		for _, c := range n.Output {
			if !slices.Contains(s.Node.Output, c) {
				s.Node.Output = append(s.Node.Output, c)
			}
		}
	}
	for _, in := range n.Input {
		pl.registerScans(in)
	}
}

// wellFormed checks what Build assumes of a logical plan (sql.Compile's
// plans hold it; a decoded one may not): each node has the inputs its
// operator takes, and its expressions read columns its input has.
func wellFormed(n *plan.Node) error {
	want := map[plan.Op]int{plan.Scan: 0, plan.Join: 2, plan.SemiJoin: 2, plan.UnionAll: 2}
	if k, ok := want[n.Op]; ok && len(n.Input) != k || !ok && len(n.Input) != 1 {
		return fmt.Errorf("%s node with %d inputs", n.Op, len(n.Input))
	}
	for _, in := range n.Input {
		if err := wellFormed(in); err != nil {
			return err
		}
	}
	if n.Op == plan.Scan {
		return nil
	}
	width := len(n.Input[0].Output)
	exprs := append(append([]*plan.Expr{n.Cond, n.LeftKey}, n.Exprs...), n.Keys...)
	for _, a := range n.Aggs {
		exprs = append(exprs, a.Arg)
	}
	for _, e := range exprs {
		if err := reads(e, width); err != nil {
			return fmt.Errorf("%s node: %w", n.Op, err)
		}
	}
	if n.Op == plan.Join {
		if err := reads(n.RightKey, len(n.Input[1].Output)); err != nil {
			return fmt.Errorf("join's right key: %w", err)
		}
	}
	if n.Op == plan.SemiJoin && len(n.Input[1].Output) == 0 {
		return errors.New("semijoin of a subquery with no column")
	}
	return nil
}

// serve adds the query being placed to those o serves.
func (pl *planner) serve(o *Op) {
	if !slices.Contains(o.Queries, pl.query) {
		o.Queries = append(o.Queries, pl.query)
	}
}

// addOp appends an operator computing node (copied, without inputs) to
// task, reading ins.
func (pl *planner) addOp(task string, kind plan.Op, node *plan.Node, ins ...Input) *Op {
	o := &Op{ID: len(pl.p.Ops), Task: task, Kind: kind, Queries: []string{pl.query}, Inputs: ins}
	if node != nil {
		c := *node
		c.Input = nil
		c.Output = slices.Clone(node.Output)
		o.Node = &c
	}
	for _, in := range ins {
		if in.Channel != "" {
			pl.p.Channel(in.Channel).Routes[in.Route].Consumer = o.ID
		}
	}
	pl.p.Ops = append(pl.p.Ops, o)
	return o
}

// place places n and what it reads, and returns its rows.
func (pl *planner) place(n *plan.Node) (stream, error) {
	switch n.Op {
	case plan.Scan:
		s := stream{at: atSource, table: n.Table, cols: n.Output}
		scan := pl.scans[n.Table]
		for _, c := range n.Output {
			s.exprs = append(s.exprs, rewrite.ColRef(slices.Index(scan.Node.Output, c), c))
		}
		return s, nil
	case plan.Filter, plan.Project:
		in, err := pl.place(n.Input[0])
		if err != nil {
			return stream{}, err
		}
		if in.at == atSource { // runs where the rows are parsed, as their route's condition and columns
			if n.Op == plan.Filter {
				in.cond = rewrite.And(in.cond, rewrite.Subst(n.Cond, in.exprs))
			} else {
				exprs := make([]*plan.Expr, len(n.Exprs))
				for i, e := range n.Exprs {
					exprs[i] = rewrite.Subst(e, in.exprs)
				}
				in.exprs = exprs
			}
			in.cols = n.Output
			return in, nil
		}
		out := pl.chain(in, n.Op, n)
		if n.Op == plan.Project {
			out.part = rebaseAll(in.part, n.Exprs)
		}
		return out, nil
	case plan.Join, plan.SemiJoin:
		return pl.binary(n)
	case plan.Aggregate, plan.Distinct:
		return pl.grouped(n)
	case plan.UnionAll:
		return pl.unionAll(n, nil)
	case plan.Window:
		return pl.window(n) // window.go
	case plan.Sort, plan.Limit, plan.RowNumber:
		in, err := pl.place(n.Input[0])
		if err != nil {
			return stream{}, err
		}
		return pl.chain(pl.toGateway(in), n.Op, n), nil
	}
	return stream{}, fmt.Errorf("unknown plan node %q", n.Op)
}

// chain runs node after in's rows, in their task; the rows stay
// partitioned as they were.
func (pl *planner) chain(in stream, kind plan.Op, node *plan.Node) stream {
	o := pl.addOp(in.task, kind, node, in.in)
	return stream{at: in.at, task: in.task, in: Input{Op: o.ID}, cols: o.Output(), part: in.part, class: in.class}
}

// binary places a join or a semi-join in the shard task, each input
// shuffled by its key unless it is partitioned by it already.
func (pl *planner) binary(n *plan.Node) (stream, error) {
	if out, ok := pl.placeShared(n); ok { // share.go
		return out, nil
	}
	l, err := pl.place(n.Input[0])
	if err != nil {
		return stream{}, err
	}
	r, err := pl.place(n.Input[1])
	if err != nil {
		return stream{}, err
	}
	if isCross(n) { // subquery.go
		return pl.cross(n, l, r), nil
	}
	rk := n.RightKey
	if n.Op == plan.SemiJoin {
		rk = rewrite.ColRef(0, r.cols[0])
	}
	_, out, _ := pl.pair(n, l, r, n.LeftKey, rk)
	return out, nil
}

// pair places n, a join or a semi-join, in the shard task over l and r,
// each shuffled by its key (lk, rk) unless partitioned by it already,
// and returns its operator and rows, and its inputs' partitionings.
func (pl *planner) pair(n *plan.Node, l, r stream, lk, rk *plan.Expr) (*Op, stream, [2][][]*plan.Expr) {
	ls := pl.colocate(l, []*plan.Expr{lk})
	rs := pl.colocate(r, []*plan.Expr{rk})
	o := pl.addOp(pl.p.Shard.Name, n.Op, n, ls.in, rs.in)
	pl.union(ls.class, rs.class)
	pl.keyed = append(pl.keyed, keyedOp{o, ls.class})
	out := stream{at: atShard, task: o.Task, in: Input{Op: o.ID}, cols: o.Output(), part: ls.part, class: ls.class}
	if n.Op == plan.Join {
		out.part = joinPart(n.JoinType, ls.part, rs.part, len(ls.cols))
	}
	return o, out, [2][][]*plan.Expr{ls.part, rs.part}
}

// grouped places an aggregate or a DISTINCT: complete where its input is
// partitioned by a part of its key (shuffled so if it is being parsed),
// else partial at the shards and final at the gateway; at the gateway
// when its input is there, or has no key and is being parsed.
func (pl *planner) grouped(n *plan.Node) (stream, error) {
	in, err := pl.groupedInput(n)
	if err != nil {
		return stream{}, err
	}
	keys := n.Keys
	if n.Op == plan.Distinct {
		keys = rewrite.ColRefs(in.cols)
	}
	// outPart maps a partitioning key of the input onto the output.
	outPart := func(alt []*plan.Expr) []*plan.Expr {
		if n.Op == plan.Distinct {
			return alt
		}
		return rebaseAll([][]*plan.Expr{alt}, keys)[0]
	}
	switch {
	case in.at == atGateway || in.at == atSource && len(keys) == 0:
		g := pl.toGateway(in)
		o := pl.addOp(g.task, n.Op, n, g.in)
		pl.keyed = append(pl.keyed, keyedOp{o, pl.ownClass(o, keys)})
		return stream{at: atGateway, task: g.task, in: Input{Op: o.ID}, cols: o.Output()}, nil
	case in.at == atSource:
		s := pl.colocate(in, keys)
		o := pl.addOp(s.task, n.Op, n, s.in)
		pl.keyed = append(pl.keyed, keyedOp{o, s.class})
		return stream{at: atShard, task: s.task, in: Input{Op: o.ID}, cols: o.Output(), part: [][]*plan.Expr{outPart(keys)}, class: s.class}, nil
	}
	alt := covering(in.part, keys)
	if alt != nil || pl.p.Shard.Replicas == 1 { // whole groups on each shard
		o := pl.addOp(in.task, n.Op, n, in.in)
		class := in.class
		if alt == nil || keyString(alt) != keyString(keys) {
			class = pl.ownClass(o, keys)
		}
		pl.keyed = append(pl.keyed, keyedOp{o, class})
		out := stream{at: atShard, task: in.task, in: Input{Op: o.ID}, cols: o.Output(), class: in.class}
		if alt != nil {
			out.part = [][]*plan.Expr{outPart(alt)}
		}
		return out, nil
	}
	kind, final := PartialDistinct, plan.Distinct
	partial := *n
	if n.Op == plan.Aggregate {
		kind, final = PartialAggregate, FinalAggregate
		partial.Output = exec.PartialColumns(n.Output, len(n.Keys), n.Aggs)
	}
	po := pl.addOp(in.task, kind, &partial, in.in)
	pl.keyed = append(pl.keyed, keyedOp{po, pl.ownClass(po, keys)})
	g := pl.toGateway(stream{at: atShard, task: in.task, in: Input{Op: po.ID}, cols: po.Output()})
	merge := *n
	if n.Op == plan.Aggregate {
		merge.Keys = rewrite.ColRefs(po.Output()[:len(n.Keys)])
	}
	fo := pl.addOp(g.task, final, &merge, g.in)
	pl.keyed = append(pl.keyed, keyedOp{fo, pl.ownClass(fo, merge.Keys)})
	return stream{at: atGateway, task: g.task, in: Input{Op: fo.ID}, cols: fo.Output()}, nil
}

// ownClass is the key class of an operator keyed by a key no other
// operator's state is by.
func (pl *planner) ownClass(o *Op, keys []*plan.Expr) string {
	label := "no key"
	if len(keys) > 0 {
		label = keyLabel(keys)
	}
	c := fmt.Sprintf("%s of #%d", label, o.ID)
	pl.classes[c] = c
	return c
}

// colocate returns s's rows in the shard task partitioned by key (over
// s's columns): shuffled there unless they already are.
func (pl *planner) colocate(s stream, key []*plan.Expr) stream {
	switch {
	case s.at == atSource:
		return pl.shuffle(s, key)
	case s.at == atShard && pl.p.Shard.Replicas == 1: // one instance has every key
		return s
	case s.at == atShard && slices.ContainsFunc(s.part, func(alt []*plan.Expr) bool { return keyString(alt) == keyString(key) }):
		return s
	}
	return pl.exchange(s, key, pl.p.Shard)
}

// shuffle sends rows being parsed to the shard task by key, on the one
// channel of the table by that key, as a route of their own.
func (pl *planner) shuffle(s stream, key []*plan.Expr) stream {
	return pl.route(s, key, pl.p.Shard)
}

// route sends rows being parsed to task to, by key (none: to its one
// instance), on the one channel of the table to that task by that key,
// as a route of their own. Only exchanges read a scan: what the gateway
// does while a file is parsed is to route its rows, so that what it
// does with rows once they are in (the final aggregates, the sorts, the
// sinks) reads channels, as the shards do, and runs apart from the
// upload (services/roles/gateway).
func (pl *planner) route(s stream, key []*plan.Expr, to Task) stream {
	skey := make([]*plan.Expr, len(key))
	for i, k := range key {
		skey[i] = rewrite.Subst(k, s.exprs)
	}
	id := s.table + "|" + to.Name + "|" + keyString(skey)
	ch := pl.shuffles[id]
	scan := pl.scans[s.table]
	pl.serve(scan)
	if ch == nil {
		name := s.table + "-to-" + to.Name
		if len(skey) > 0 {
			name = s.table + "-by-" + keyLabel(skey)
		}
		ch = &Channel{Name: pl.channelName(name), From: pl.p.Gateway.Name, To: to.Name}
		for _, k := range skey {
			ch.Key = append(ch.Key, pl.carry(ch, k, nameOf(k)))
		}
		pl.p.Channels = append(pl.p.Channels, ch)
		x := pl.addOp(pl.p.Gateway.Name, Exchange, nil, Input{Op: scan.ID})
		x.Channel = ch.Name
		ch.Producer = x.ID
		pl.shuffles[id] = ch
		pl.classes[ch.Name] = ch.Name
	}
	pl.serve(pl.p.Ops[ch.Producer])
	r := Route{Query: pl.query, Cond: s.cond}
	for i, e := range s.exprs {
		r.Cols = append(r.Cols, pl.carry(ch, e, s.cols[i].Name))
	}
	ch.Routes = append(ch.Routes, r)
	in := Input{Channel: ch.Name, Route: len(ch.Routes) - 1}
	if len(key) == 0 {
		return stream{at: atGateway, task: ch.To, in: in, cols: s.cols}
	}
	class := s.table + "." + keyLabel(skey)
	if _, ok := pl.classes[class]; !ok {
		pl.classes[class] = class
	}
	pl.union(class, ch.Name)
	return stream{at: atShard, task: ch.To, in: in, cols: s.cols, part: [][]*plan.Expr{key}, class: class}
}

// exchange sends rows already in a task to another, by key (none: to its
// one instance), on a channel of their own.
func (pl *planner) exchange(s stream, key []*plan.Expr, to Task) stream {
	name := pl.query + "-to-" + to.Name
	if len(key) > 0 {
		name = pl.query + "-by-" + keyLabel(key)
	}
	ch := &Channel{Name: pl.channelName(name), From: s.task, To: to.Name}
	pl.p.Channels = append(pl.p.Channels, ch)
	r := Route{Query: pl.query}
	for i, c := range s.cols {
		r.Cols = append(r.Cols, pl.carry(ch, rewrite.ColRef(i, c), c.Name))
	}
	for _, k := range key {
		ch.Key = append(ch.Key, pl.carry(ch, k, nameOf(k)))
	}
	ch.Routes = []Route{r}
	x := pl.addOp(s.task, Exchange, nil, s.in)
	x.Channel = ch.Name
	ch.Producer = x.ID
	out := stream{at: atGateway, task: to.Name, in: Input{Channel: ch.Name}, cols: s.cols}
	if to.Name == pl.p.Shard.Name && len(key) > 0 {
		out.at, out.part, out.class = atShard, [][]*plan.Expr{key}, ch.Name
		pl.classes[ch.Name] = ch.Name
	}
	return out
}

// toGateway returns s's rows in the gateway task: sent from the scan on
// its table's channel to the gateway (its filter and projection the
// route's), or gathered from the shards.
func (pl *planner) toGateway(s stream) stream {
	gw := pl.p.Gateway.Name
	switch {
	case s.at == atGateway:
		return s
	case s.at == atShard && s.task == gw: // one task for all: already there
		s.at, s.part, s.class = atGateway, nil, ""
		return s
	case s.at == atShard:
		return pl.exchange(s, nil, pl.p.Gateway)
	}
	return pl.route(s, nil, pl.p.Gateway)
}

// carry returns the column of ch that holds e, adding it if need be.
func (pl *planner) carry(ch *Channel, e *plan.Expr, name string) int {
	text := e.String()
	for i, x := range ch.Exprs {
		if x.Type == e.Type && x.String() == text {
			return i
		}
	}
	// A column read as two kinds is two columns: the second named by both.
	if slices.ContainsFunc(ch.Columns, func(c plan.Column) bool { return c.Name == name }) {
		name += ":" + string(e.Type)
	}
	ch.Exprs = append(ch.Exprs, e)
	ch.Columns = append(ch.Columns, plan.Column{Name: name, Type: e.Type})
	return len(ch.Exprs) - 1
}

// channelName returns base, or base-2, base-3... when it is taken.
func (pl *planner) channelName(base string) string {
	name := base
	for i := 2; pl.names[name]; i++ {
		name = base + "-" + strconv.Itoa(i)
	}
	pl.names[name] = true
	return name
}

// union makes two key classes one (a join's keys are equal).
func (pl *planner) union(a, b string) {
	ra, rb := pl.find(a), pl.find(b)
	if ra != rb {
		pl.classes[rb] = ra
	}
}

func (pl *planner) find(c string) string {
	for pl.classes[c] != c && pl.classes[c] != "" {
		c = pl.classes[c]
	}
	return c
}

// assignTables gives the keyed operators their tables: one per task and
// key class.
func (pl *planner) assignTables() {
	byRoot := map[string]*Table{}
	for _, k := range pl.keyed {
		root := pl.find(k.class)
		id := k.op.Task + "|" + root
		t := byRoot[id]
		if t == nil {
			var members []string
			for c := range pl.classes {
				// A shuffle's channel joins the class of its table's key
				// but does not name it.
				if pl.find(c) == root && pl.p.Channel(c) == nil {
					members = append(members, c)
				}
			}
			if len(members) == 0 {
				members = []string{root}
			}
			slices.Sort(members)
			t = &Table{ID: len(pl.p.Tables) + 1, Task: k.op.Task, Key: strings.Join(members, " = ")}
			byRoot[id] = t
			pl.p.Tables = append(pl.p.Tables, t)
		}
		t.Ops = append(t.Ops, k.op.ID)
		k.op.Table = t.ID
	}
}

func shiftAll(es []*plan.Expr, d int) []*plan.Expr {
	out := make([]*plan.Expr, len(es))
	for i, e := range es {
		out[i] = rewrite.Shift(e, d)
	}
	return out
}

// covering returns the first partitioning key all of whose expressions
// are among keys, or nil.
func covering(part [][]*plan.Expr, keys []*plan.Expr) []*plan.Expr {
	for _, alt := range part {
		if len(alt) > 0 && !slices.ContainsFunc(alt, func(k *plan.Expr) bool {
			return rebaseAll([][]*plan.Expr{{k}}, keys) == nil
		}) {
			return alt
		}
	}
	return nil
}

// keyString identifies a key: its expressions with their types, columns
// by position only.
func keyString(key []*plan.Expr) string {
	s := make([]string, len(key))
	for i, k := range key {
		c := rewrite.Columns(k, func(c *plan.Expr) *plan.Expr { return &plan.Expr{Kind: plan.ColRef, Col: c.Col, Type: c.Type} })
		s[i] = c.String() + " " + string(k.Type)
	}
	return strings.Join(s, ", ")
}

var colNumber = regexp.MustCompile(`#[0-9]+`)

// keyLabel names a key for people: its expressions without column numbers.
func keyLabel(key []*plan.Expr) string {
	s := make([]string, len(key))
	for i, k := range key {
		s[i] = nameOf(k)
	}
	return strings.Join(s, "+")
}

// nameOf names an expression for people: a column by its name.
func nameOf(e *plan.Expr) string {
	if e.Kind == plan.ColRef {
		return e.Name
	}
	return colNumber.ReplaceAllString(e.String(), "")
}
