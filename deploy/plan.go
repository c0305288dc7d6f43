package deploy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The physical plan.
//
// topology.json is the logical graph: stages, each running one operator,
// and the streams between them. Plan turns it into the graph of processes
// that actually run, as Flink chains operators into tasks: stages joined by
// a stream that needs no shuffle run as one task, in one process per
// replica, and the rows of such a stream pass from one operator to the next
// as calls inside the task instead of as batches over gRPC, persisted on
// both sides. Only a stream between tasks is a channel of the transport,
// with its sequence numbers, outbox and acknowledgements.
//
// A stream from A to B needs no shuffle (it is "forward") when every row
// that A's instance i emits on it goes to B's instance i:
//
//   - A and B have the same replica count, and
//   - there is one replica each, or the stream's key is the key every input
//     of A is routed by (A emits a row only under the key of the rows it
//     was given, so a row routed to A-i by its key lands on B-i too);
//   - A is not the gateway: the gateway's outputs come from the upload, not
//     from an operator, so they always cross a channel (to the gateway
//     itself when the next stage has one replica).
//
// The tasks are the groups of stages that forward streams connect. A task
// is named after the gateway if it holds it, else after the "task" field
// of its first stage if that is set and not taken, else after its first
// stage; a task of one stage is that stage, unchanged. The choice of an
// automatic rule over declared chains keeps topology.json what it was (the
// replica counts decide, as parallelism does in Flink), and the "task"
// field only names what the rule found.

// Plan returns the physical topology of t: one stage per task, holding its
// logical stages in Chain (upstream first) when it has more than one, and
// only the streams between tasks, renamed to run from task to task; the
// streams inside tasks are in Chained. Planning a planned topology returns
// it unchanged. Ports, instances and everything else derived from a
// topology then describe the processes that run.
func Plan(t Topology) (Topology, error) {
	if t.logical != nil {
		return t, nil
	}
	if err := t.Validate(); err != nil {
		return Topology{}, err
	}
	groups := chainGroups(t)
	taskOf := map[string]string{} // logical stage → task name
	names := map[string]bool{}
	for _, g := range groups {
		name := taskName(t, g, names)
		names[name] = true
		for _, s := range g {
			taskOf[s.Name] = name
		}
	}
	out := Topology{Comment: t.Comment, BasePort: t.BasePort, Masters: t.Masters}
	logical := t
	out.logical = &logical
	for _, g := range groups {
		out.Stages = append(out.Stages, taskStage(g, taskOf[g[0].Name]))
	}
	for _, s := range t.Streams {
		from, to := taskOf[s.From], taskOf[s.To]
		if from == to && forward(t, s) {
			out.Chained = append(out.Chained, s)
			continue
		}
		out.Streams = append(out.Streams, Stream{Name: s.Name, From: from, To: to, Key: s.Key})
	}
	return out, nil
}

// Planned reports whether t is a physical plan.
func (t Topology) Planned() bool { return t.logical != nil }

// Logical returns the logical graph a plan was made from (t itself when t
// is not planned): what the README's diagram and topology.json show.
// The settings a plan shares with it (base port, masters, comment) are
// the plan's, which may have been changed since it was made.
func (t Topology) Logical() Topology {
	if t.logical == nil {
		return t
	}
	l := *t.logical
	l.BasePort, l.Masters, l.Comment = t.BasePort, t.Masters, t.Comment
	return l
}

// MarshalJSON writes a plan as the logical graph it came from, so that a
// process handed it (compose's environment, local mode's topology file)
// plans the same tasks again.
func (t Topology) MarshalJSON() ([]byte, error) {
	type plain Topology // without this method
	return json.Marshal(plain(t.Logical()))
}

// Tasks describes the plan in one line per task, for logs and docs:
// "shard[2] = matches-filter + players-filter + ...".
func (t Topology) Tasks() []string {
	var out []string
	for _, s := range t.Stages {
		members := []string{s.Name}
		if len(s.Chain) > 0 {
			members = members[:0]
			for _, c := range s.Chain {
				members = append(members, c.Name)
			}
		}
		out = append(out, fmt.Sprintf("%s[%d] = %s", s.Name, s.Replicas, strings.Join(members, " + ")))
	}
	return out
}

// forward reports whether a logical stream needs no shuffle (see above).
func forward(t Topology, s Stream) bool {
	from, _ := t.Stage(s.From)
	to, _ := t.Stage(s.To)
	if from.Role == "gateway" || from.Replicas != to.Replicas {
		return false
	}
	if from.Replicas == 1 {
		return true
	}
	if s.Key == "" {
		return false
	}
	ins := t.Inputs(from.Name)
	for _, in := range ins {
		if in.Key != s.Key {
			return false
		}
	}
	return len(ins) > 0
}

// chainGroups partitions the stages into the groups that forward streams
// connect, each group in topological order (upstream first, ties in file
// order), the groups ordered by their first stage's place in the file.
func chainGroups(t Topology) [][]Stage {
	parent := map[string]string{}
	var find func(string) string
	find = func(s string) string {
		if p, ok := parent[s]; ok && p != s {
			r := find(p)
			parent[s] = r
			return r
		}
		return s
	}
	for _, s := range t.Streams {
		if forward(t, s) {
			a, b := find(s.From), find(s.To)
			if a != b {
				parent[b] = a
			}
		}
	}
	order := topoOrder(t)
	byRoot := map[string][]Stage{}
	var roots []string
	for _, s := range t.Stages { // the groups in file order of their first member
		r := find(s.Name)
		if _, ok := byRoot[r]; !ok {
			roots = append(roots, r)
			byRoot[r] = nil
		}
		byRoot[r] = append(byRoot[r], s)
	}
	groups := make([][]Stage, 0, len(roots))
	for _, r := range roots {
		g := byRoot[r]
		sort.SliceStable(g, func(i, j int) bool { return order[g[i].Name] < order[g[j].Name] })
		groups = append(groups, g)
	}
	return groups
}

// topoOrder numbers the stages so that, inside a group, a stage comes after
// every stage that feeds it by a forward stream. Streams that leave the
// gateway are left out: they are never forward, and the gateway also
// receives the graph's results, which would make a cycle.
func topoOrder(t Topology) map[string]int {
	indeg := map[string]int{}
	for _, s := range t.Streams {
		if forward(t, s) {
			indeg[s.To]++
		}
	}
	order := map[string]int{}
	for len(order) < len(t.Stages) {
		progressed := false
		for _, st := range t.Stages {
			if _, done := order[st.Name]; done || indeg[st.Name] > 0 {
				continue
			}
			order[st.Name] = len(order)
			progressed = true
			for _, s := range t.Outputs(st.Name) {
				if forward(t, s) {
					indeg[s.To]--
				}
			}
		}
		if !progressed { // a cycle of forward streams: keep file order for the rest
			for _, st := range t.Stages {
				if _, done := order[st.Name]; !done {
					order[st.Name] = len(order)
				}
			}
		}
	}
	return order
}

// taskName names a group (see the package's plan notes); taken holds the
// names given so far.
func taskName(t Topology, g []Stage, taken map[string]bool) string {
	for _, s := range g {
		if s.Role == "gateway" {
			return s.Name
		}
	}
	if len(g) == 1 {
		return g[0].Name
	}
	first := firstInFile(t, g)
	if name := first.Task; name != "" && !taken[name] && !stageNamed(t, name) {
		return name
	}
	return first.Name
}

// firstInFile is the member of g that comes first in t's stage list.
func firstInFile(t Topology, g []Stage) Stage {
	member := map[string]bool{}
	for _, s := range g {
		member[s.Name] = true
	}
	for _, s := range t.Stages {
		if member[s.Name] {
			return s
		}
	}
	return g[0]
}

func stageNamed(t Topology, name string) bool {
	_, ok := t.Stage(name)
	return ok || name == MasterStage
}

// taskStage is the physical stage of a group.
func taskStage(g []Stage, name string) Stage {
	if len(g) == 1 {
		return g[0]
	}
	st := Stage{Name: name, Role: "task", Replicas: g[0].Replicas, Chain: append([]Stage(nil), g...)}
	ops := make([]string, len(g))
	for i, s := range g {
		ops[i] = s.Operator
		if s.Role == "gateway" {
			st.Role = "gateway"
		}
	}
	st.Operator = strings.Join(ops, "+")
	return st
}
