package physical

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Plan is the physical plan of one job: its operators on the tasks, the
// channels between them and the tables the keyed operators share.
type Plan struct {
	Gateway Task `json:"gateway"` // where files are parsed and results gathered
	Shard   Task `json:"shard"`   // where keyed operators run, by key

	Queries  []Query    `json:"queries"`
	Ops      []*Op      `json:"ops"` // by ID: an operator comes after those it reads
	Channels []*Channel `json:"channels"`
	Tables   []*Table   `json:"tables"`

	// Standing is a standing job's plan (docs/standing.md): each operator
	// runs in its incremental form over epochs of appended rows, every
	// channel's rows carry one more column, each row's weight (+n, -n),
	// and epoch markers follow each epoch's rows on every channel
	// (services/dataflow/sql/sqlops's EpochTask). The gateway sets it on a
	// plan Build made, once sqlops.CheckStanding has passed it.
	Standing bool `json:"standing,omitempty"`
}

// Task is a task of the topology: a name and its replica count.
type Task struct {
	Name     string `json:"name"`
	Replicas int    `json:"replicas"`
}

func (t Task) String() string { return fmt.Sprintf("%s[%d]", t.Name, t.Replicas) }

// Query is one query of the job: its name (the output file NAME.csv) and
// the sink operator that writes it.
type Query struct {
	Name string `json:"name"`
	Sink int    `json:"sink"`
}

// The operators beyond the logical plan's (plan.Op).
const (
	// Exchange writes its input's rows on Channel.
	Exchange plan.Op = "exchange"
	// PartialAggregate is an Aggregate computed on one shard's rows: the
	// keys, then each aggregate's partial state (exec.PartialColumns).
	PartialAggregate plan.Op = "partial-aggregate"
	// FinalAggregate merges partial aggregates, grouped by their first
	// len(Keys) columns, into the logical Aggregate's columns.
	FinalAggregate plan.Op = "final-aggregate"
	// PartialDistinct drops the duplicates among one shard's rows; a
	// Distinct at the gateway drops the rest.
	PartialDistinct plan.Op = "partial-distinct"
	// Sink writes its input as the query's output file.
	Sink plan.Op = "sink"
)

// Op is one operator of the physical plan, chained in a task.
type Op struct {
	ID      int      `json:"id"`
	Task    string   `json:"task"`
	Kind    plan.Op  `json:"kind"`
	Queries []string `json:"queries"` // the queries it serves
	Inputs  []Input  `json:"inputs,omitempty"`
	// Node holds what the operator computes, as the logical node's fields
	// (Cond, Exprs, keys, Aggs, Order, N, Col, Table) with no inputs, and
	// its output columns; nil for an exchange and a sink.
	Node *plan.Node `json:"node,omitempty"`
	// Channel is what an Exchange writes on.
	Channel string `json:"channel,omitempty"`
	// Table is, for a keyed operator, the ID of the table it keeps its
	// state in (Plan.Tables); 0 otherwise.
	Table int `json:"table,omitempty"`
}

// Output is the operator's columns (none for an exchange or a sink).
func (o *Op) Output() []plan.Column {
	if o.Node == nil {
		return nil
	}
	return o.Node.Output
}

// Input is where an operator reads rows from: the chained operator Op of
// the same task, or, when Channel is set, route Route of that channel.
type Input struct {
	Op      int    `json:"op,omitempty"`
	Channel string `json:"channel,omitempty"`
	Route   int    `json:"route,omitempty"`
}

// Channel is a stream between tasks: the rows its producer (an Exchange)
// writes, each sent to the receiving instance a hash of its key picks.
type Channel struct {
	Name     string `json:"name"`
	From     string `json:"from"`
	To       string `json:"to"`
	Producer int    `json:"producer"` // the Exchange
	// Exprs are the columns a row carries, computed over the producer's
	// input; Columns names them.
	Exprs   []*plan.Expr  `json:"exprs"`
	Columns []plan.Column `json:"columns"`
	// Key are the columns (indexes into Columns) a row is routed by; none:
	// every row goes to the one instance of the receiving task.
	Key []int `json:"key,omitempty"`
	// Routes are the channel's consumers: a row goes once, marked with the
	// routes whose condition it passed.
	Routes []Route `json:"routes"`
	// Broadcast: every row goes to every instance of the receiving task
	// (Key is none): a subquery's one row, which a cross product reads
	// on each shard (subquery.go).
	Broadcast bool `json:"broadcast,omitempty"`
}

// MaxRoutes is the most routes a channel may have: a row crosses a
// channel once, with a 64-bit mask of the routes it is for
// (wololo.v1.ColumnBatch.routes).
const MaxRoutes = 64

// Route is one consumer of a channel.
type Route struct {
	Consumer int        `json:"consumer"`       // the operator that reads it
	Query    string     `json:"query"`          // whose rows these are
	Cond     *plan.Expr `json:"cond,omitempty"` // over the producer's input; nil: every row
	Cols     []int      `json:"cols"`           // the channel's columns the consumer reads, in its order
}

// Table is the state shared by the keyed operators of one task that are
// keyed by the same key (a key class: keys that joins make equal).
type Table struct {
	ID   int    `json:"id"`
	Task string `json:"task"`
	Key  string `json:"key"` // the class's keys, "match_players.match = matches.token"
	Ops  []int  `json:"ops"`
}

// Encode is the plan as JSON, the form it is stored and sent in.
func Encode(p *Plan) ([]byte, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode physical plan: %w", err)
	}
	return b, nil
}

// Decode reads a plan Encode wrote.
func Decode(b []byte) (*Plan, error) {
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("decode physical plan: %w", err)
	}
	return &p, nil
}

// Source reports whether o runs as the gateway parses a file: a scan, or
// an exchange that reads one (the only operators that may, Check). The
// gateway runs these for each upload and the rest of its task apart.
func (p *Plan) Source(o *Op) bool {
	switch o.Kind {
	case plan.Scan:
		return true
	case Exchange:
		return len(o.Inputs) == 1 && o.Inputs[0].Channel == "" && o.Inputs[0].Op >= 0 && o.Inputs[0].Op < len(p.Ops) && p.Ops[o.Inputs[0].Op].Kind == plan.Scan
	}
	return false
}

// Reader is an operator that reads another's rows chained, and which of
// its inputs they are.
type Reader struct {
	Op    *Op
	Input int
}

// Readers is the inputs that read o's rows chained (of operators of o's
// task; an exchange among them sends them on), an operator once per input
// that does.
func (p *Plan) Readers(o *Op) []Reader {
	var rs []Reader
	for _, r := range p.Ops {
		for k, in := range r.Inputs {
			if in.Channel == "" && in.Op == o.ID && r != o {
				rs = append(rs, Reader{Op: r, Input: k})
			}
		}
	}
	return rs
}

// Scanned is the columns the plan's scans read, by table, each table's
// in the order the scans name them.
func (p *Plan) Scanned() map[string][]string {
	cols := map[string][]string{}
	for _, o := range p.Ops {
		if o.Kind != plan.Scan {
			continue
		}
		for _, c := range o.Node.Output {
			if !slices.Contains(cols[o.Node.Table], c.Name) {
				cols[o.Node.Table] = append(cols[o.Node.Table], c.Name)
			}
		}
	}
	return cols
}

// Channel returns the named channel, or nil.
func (p *Plan) Channel(name string) *Channel {
	for _, c := range p.Channels {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// String renders the plan for explain: the tasks with their operators in
// order, each with its inputs, then the channels with their keys, columns
// and routes, then the shared tables.
func (p *Plan) String() string {
	var b strings.Builder
	sinks := make([]string, len(p.Queries))
	for i, q := range p.Queries {
		sinks[i] = fmt.Sprintf("%s #%d", q.Name, q.Sink)
	}
	fmt.Fprintf(&b, "queries: %s\n", strings.Join(sinks, ", "))
	if p.Standing {
		b.WriteString("standing: each operator incremental over epochs; rows carry their weight, epoch markers follow them\n")
	}
	tasks := []Task{p.Gateway}
	if p.Shard.Name != p.Gateway.Name {
		tasks = append(tasks, p.Shard)
	}
	for _, t := range tasks {
		fmt.Fprintf(&b, "task %s:\n", t)
		n := 0
		for _, o := range p.Ops {
			if o.Task == t.Name {
				writeOp(&b, o)
				n++
			}
		}
		if n == 0 {
			b.WriteString("  (none)\n")
		}
	}
	b.WriteString("channels:\n")
	if len(p.Channels) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, c := range p.Channels {
		key := "gathered"
		if c.Broadcast {
			key = "broadcast"
		}
		if len(c.Key) > 0 {
			names := make([]string, len(c.Key))
			for i, k := range c.Key {
				names[i] = c.Columns[k].Name
			}
			key = "by " + strings.Join(names, ", ")
		}
		fmt.Fprintf(&b, "  %s: %s -> %s, %s, from #%d, columns %s\n", c.Name, c.From, c.To, key, c.Producer, columns(c.Columns))
		for i, r := range c.Routes {
			cols := make([]string, len(r.Cols))
			for j, k := range r.Cols {
				cols[j] = c.Columns[k].Name
			}
			where := ""
			if r.Cond != nil {
				where = " where " + r.Cond.String()
			}
			fmt.Fprintf(&b, "    route %d -> #%d [%s]%s, reads (%s)\n", i, r.Consumer, r.Query, where, strings.Join(cols, ", "))
		}
	}
	b.WriteString("tables (keyed operators of a task sharing one key):\n")
	if len(p.Tables) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, t := range p.Tables {
		ops := make([]string, len(t.Ops))
		for i, id := range t.Ops {
			o := p.Ops[id]
			ops[i] = fmt.Sprintf("#%d %s %s", id, strings.Join(o.Queries, "+"), o.Kind)
		}
		fmt.Fprintf(&b, "  table %d in %s by %s: %s\n", t.ID, t.Task, t.Key, strings.Join(ops, ", "))
	}
	return b.String()
}

// writeOp writes one operator: what it computes, then where its rows come
// from.
func writeOp(b *strings.Builder, o *Op) {
	var what string
	switch o.Kind {
	case Exchange:
		what = "exchange -> " + o.Channel
	case Sink:
		what = "sink " + strings.Join(o.Queries, " ") + ".csv"
	case PartialAggregate, FinalAggregate:
		aggs := make([]string, len(o.Node.Aggs))
		for i, a := range o.Node.Aggs {
			aggs[i] = a.String()
		}
		keys := make([]string, len(o.Node.Keys))
		for i, k := range o.Node.Keys {
			keys[i] = k.String()
		}
		verb := "computing"
		if o.Kind == FinalAggregate { // of the partials: their columns, not these
			verb = "merging"
		}
		what = fmt.Sprintf("%s by [%s] %s [%s] -> %s", o.Kind, strings.Join(keys, ", "), verb, strings.Join(aggs, ", "), columns(o.Node.Output))
	case PartialDistinct:
		what = fmt.Sprintf("%s -> %s", o.Kind, columns(o.Node.Output))
	default:
		n := *o.Node
		n.Input = nil
		what = strings.TrimSuffix(n.String(), "\n")
	}
	ins := make([]string, len(o.Inputs))
	for i, in := range o.Inputs {
		if in.Channel != "" {
			ins[i] = fmt.Sprintf("%s route %d", in.Channel, in.Route)
		} else {
			ins[i] = fmt.Sprintf("#%d", in.Op)
		}
	}
	fmt.Fprintf(b, "  #%d [%s] %s\n", o.ID, strings.Join(o.Queries, " "), what)
	var notes []string
	if len(ins) > 0 {
		notes = append(notes, "reads "+strings.Join(ins, ", "))
	}
	if o.Table != 0 {
		notes = append(notes, fmt.Sprintf("table %d", o.Table))
	}
	if len(notes) > 0 {
		fmt.Fprintf(b, "      %s\n", strings.Join(notes, "; "))
	}
}

func columns(cs []plan.Column) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.Name + " " + c.Kind()
	}
	return "(" + strings.Join(s, ", ") + ")"
}
