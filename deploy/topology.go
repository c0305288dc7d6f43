// Package deploy holds the topology description of the Wololo graph (which
// stages exist, how many replicas each has, which streams connect them) and,
// later, what is derived from it for deployment.
//
// The topology is data, not code: topology.json is embedded as the default,
// and the embedded demo, the local multi-process mode and the compose
// generator all read the same Topology value. Every process learns its
// upstreams and downstreams from it. This package only describes the graph;
// it starts nothing and opens no sockets.
package deploy

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

//go:embed topology.json
var defaultTopology []byte

// Stage is a set of identical processes running one operator.
type Stage struct {
	Name     string `json:"name"`
	Role     string `json:"role"`
	Replicas int    `json:"replicas"`
	Operator string `json:"operator"`
	// Task optionally names the task this stage is chained into (see
	// Plan); it decides nothing about the chaining itself.
	Task string `json:"task,omitempty"`
	// Chain is, in a planned topology, the logical stages a task of more
	// than one runs, upstream first (see Plan); empty otherwise.
	Chain []Stage `json:"-"`
}

// Stream connects every instance of one stage to every instance of another.
// Rows are routed to a receiver instance by a stable hash of their key.
type Stream struct {
	Name string `json:"name"`
	From string `json:"from"`
	To   string `json:"to"`
	// Key names what the stream's rows are routed by ("match" for the
	// match token, "civ"); streams of the same key can be chained (Plan).
	// Empty: unknown, never chained across more than one replica.
	Key string `json:"key,omitempty"`
}

// Topology is the whole graph.
type Topology struct {
	Comment  string `json:"comment,omitempty"`
	BasePort int    `json:"base_port"`
	// Masters is how many masters supervise the graph (0: none). They are
	// instances master-1 .. master-N, the number being the election id.
	Masters int      `json:"masters,omitempty"`
	Stages  []Stage  `json:"stages"`
	Streams []Stream `json:"streams"`

	// Chained are, in a planned topology, the logical streams inside
	// tasks: calls between chained operators, not channels.
	Chained []Stream `json:"-"`
	// logical is the graph a plan was made from; nil when not planned.
	logical *Topology
}

// MaxReplicas and MaxMasters bound a topology, so that a mistyped count
// is refused instead of starting (or allocating for) millions of processes.
const (
	MaxReplicas = 1024
	MaxMasters  = 32
)

// MasterStage is the stage name of the masters' instances ("master-1"...).
// No graph stage may take it.
const MasterStage = "master"

// Instance is one process of a stage.
type Instance struct {
	Stage string
	Index int
}

// Name is the instance's name, e.g. "q3-joiner-1".
func (i Instance) Name() string { return i.Stage + "-" + strconv.Itoa(i.Index) }

// ParseInstance reads an instance name such as "q3-joiner-1".
func ParseInstance(name string) (Instance, error) {
	cut := strings.LastIndexByte(name, '-')
	if cut <= 0 {
		return Instance{}, fmt.Errorf("instance %q: want <stage>-<index>", name)
	}
	idx, err := strconv.Atoi(name[cut+1:])
	if err != nil || idx < 0 {
		return Instance{}, fmt.Errorf("instance %q: want <stage>-<index>", name)
	}
	return Instance{Stage: name[:cut], Index: idx}, nil
}

// Default returns the plan of the embedded default topology.
func Default() Topology {
	t, err := Parse(defaultTopology)
	if err != nil {
		panic("embedded topology.json is invalid: " + err.Error())
	}
	return t
}

// EnvTopology names the environment variable that may carry a topology's
// JSON itself: how a compose file for a non-default topology hands it to
// containers whose image holds nothing but the binary.
const EnvTopology = "WOLOLO_TOPOLOGY"

// Select is the topology a process runs: the file at path if given, else
// the JSON in $WOLOLO_TOPOLOGY if set, else the embedded default.
func Select(path string) (Topology, error) {
	if path != "" {
		return Load(path)
	}
	if js := os.Getenv(EnvTopology); js != "" {
		t, err := Parse([]byte(js))
		if err != nil {
			return Topology{}, fmt.Errorf("$%s: %w", EnvTopology, err)
		}
		return t, nil
	}
	return Default(), nil
}

// Load reads and validates a topology file.
func Load(path string) (Topology, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Topology{}, fmt.Errorf("read topology: %w", err)
	}
	t, err := Parse(b)
	if err != nil {
		return Topology{}, fmt.Errorf("topology %s: %w", path, err)
	}
	return t, nil
}

// Parse decodes and validates a logical topology and returns its plan
// (see Plan): the processes that run.
func Parse(b []byte) (Topology, error) {
	var t Topology
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Topology{}, fmt.Errorf("decode topology: %w", err)
	}
	return Plan(t)
}

// Validate checks that names are unique, replica counts positive and every
// stream connects two known stages. Operator-specific checks (does the
// operator read and write exactly these streams?) live with the operators.
func (t Topology) Validate() error {
	var errs []error
	seen := map[string]bool{}
	gateways := 0
	for _, s := range t.Stages {
		switch {
		case s.Name == "":
			errs = append(errs, errors.New("a stage has no name"))
		case seen[s.Name]:
			errs = append(errs, fmt.Errorf("stage %q appears twice", s.Name))
		case s.Replicas < 1 || s.Replicas > MaxReplicas:
			errs = append(errs, fmt.Errorf("stage %q: replicas must be 1..%d, got %d", s.Name, MaxReplicas, s.Replicas))
		case s.Operator == "":
			errs = append(errs, fmt.Errorf("stage %q has no operator", s.Name))
		}
		if _, err := ParseInstance(s.Name + "-0"); err != nil || strings.ContainsAny(s.Name, " /") {
			errs = append(errs, fmt.Errorf("stage name %q is not usable in instance names", s.Name))
		}
		if s.Role == "gateway" {
			gateways++
			if s.Replicas != 1 {
				errs = append(errs, fmt.Errorf("stage %q: the gateway has exactly one replica", s.Name))
			}
		}
		seen[s.Name] = true
	}
	if seen[MasterStage] {
		errs = append(errs, fmt.Errorf("stage name %q is reserved for the masters", MasterStage))
	}
	if t.Masters < 0 || t.Masters > MaxMasters {
		errs = append(errs, fmt.Errorf("masters must be 0..%d, got %d", MaxMasters, t.Masters))
	}
	if len(errs) == 0 {
		// The gateway's public port is base_port; every instance and master
		// has an internal port of its own after it.
		n := 1 + t.Masters
		for _, s := range t.Stages {
			n += s.Replicas
		}
		if t.BasePort < 1 || t.BasePort+n-1+AdminPortOffset > 65535 {
			errs = append(errs, fmt.Errorf("base_port %d: the %d ports from there and their admin ports (%d above) must lie in 1..65535", t.BasePort, n, AdminPortOffset))
		}
		if n > AdminPortOffset {
			errs = append(errs, fmt.Errorf("%d processes: at most %d, so that the admin ports (%d above the gRPC ones) do not overlap them", n, AdminPortOffset, AdminPortOffset))
		}
	}
	if gateways != 1 {
		errs = append(errs, fmt.Errorf("want exactly one gateway stage, got %d", gateways))
	}
	streams := map[string]bool{}
	for _, s := range t.Streams {
		if streams[s.Name] {
			errs = append(errs, fmt.Errorf("stream %q appears twice", s.Name))
		}
		streams[s.Name] = true
		if !seen[s.From] {
			errs = append(errs, fmt.Errorf("stream %q: unknown sender stage %q", s.Name, s.From))
		}
		if !seen[s.To] {
			errs = append(errs, fmt.Errorf("stream %q: unknown receiver stage %q", s.Name, s.To))
		}
	}
	return errors.Join(errs...)
}

// Stage returns the named stage.
func (t Topology) Stage(name string) (Stage, bool) {
	for _, s := range t.Stages {
		if s.Name == name {
			return s, true
		}
	}
	return Stage{}, false
}

// Gateway returns the gateway stage.
func (t Topology) Gateway() Stage {
	for _, s := range t.Stages {
		if s.Role == "gateway" {
			return s
		}
	}
	return Stage{}
}

// Inputs returns the streams a stage receives.
func (t Topology) Inputs(stage string) []Stream {
	var out []Stream
	for _, s := range t.Streams {
		if s.To == stage {
			out = append(out, s)
		}
	}
	return out
}

// Outputs returns the streams a stage sends.
func (t Topology) Outputs(stage string) []Stream {
	var out []Stream
	for _, s := range t.Streams {
		if s.From == stage {
			out = append(out, s)
		}
	}
	return out
}

// Stream returns the named stream.
func (t Topology) Stream(name string) (Stream, bool) {
	for _, s := range t.Streams {
		if s.Name == name {
			return s, true
		}
	}
	return Stream{}, false
}

// Replicas returns a stage's replica count (0 if unknown).
func (t Topology) Replicas(stage string) int {
	s, _ := t.Stage(stage)
	return s.Replicas
}

// Instances lists every process of the graph, stage by stage.
func (t Topology) Instances() []Instance {
	var out []Instance
	for _, s := range t.Stages {
		for i := 0; i < s.Replicas; i++ {
			out = append(out, Instance{Stage: s.Name, Index: i})
		}
	}
	return out
}

// MasterInstances lists the masters: master-1 .. master-N. A master's
// index is its election id.
func (t Topology) MasterInstances() []Instance {
	out := make([]Instance, 0, t.Masters)
	for i := 1; i <= t.Masters; i++ {
		out = append(out, Instance{Stage: MasterStage, Index: i})
	}
	return out
}

// PublicPort is the gateway's public port in the local and compose modes,
// where clients reach the JobService: base_port.
func (t Topology) PublicPort() int { return t.BasePort }

// Port is the fixed internal port of an instance in the local and compose
// modes, where the other processes reach it: base_port+1 plus the
// instance's position in Instances, the masters following the graph's
// instances.
func (t Topology) Port(inst Instance) int {
	all := t.Instances()
	if inst.Stage == MasterStage {
		if inst.Index < 1 || inst.Index > t.Masters {
			return 0
		}
		return t.BasePort + 1 + len(all) + inst.Index - 1
	}
	for i, in := range all {
		if in == inst {
			return t.BasePort + 1 + i
		}
	}
	return 0
}

// AdminPortOffset is how far above its internal gRPC port a process's
// admin HTTP listener (/metrics; the gateway's web page) is, in the local
// and compose modes: the default topology's gateway-0 serves gRPC on 7101
// and its admin listener on 8101.
const AdminPortOffset = 1000

// AdminPort is the fixed port of an instance's (or a master's) admin
// listener: its Port plus AdminPortOffset; 0 if it is not in the topology.
func (t Topology) AdminPort(inst Instance) int {
	if p := t.Port(inst); p != 0 {
		return p + AdminPortOffset
	}
	return 0
}

// WithReplicas returns a copy with some replica counts of the logical
// stages changed (planned again when t is a plan). In a plan, a task's
// name sets the count of every stage chained into it.
func (t Topology) WithReplicas(counts map[string]int) (Topology, error) {
	out := t.Logical()
	out.Stages = append([]Stage(nil), out.Stages...)
	for name, n := range counts {
		members := []string{name}
		if task, ok := t.Stage(name); ok && len(task.Chain) > 0 {
			members = members[:0]
			for _, c := range task.Chain {
				members = append(members, c.Name)
			}
		}
		for _, m := range members {
			found := false
			for i := range out.Stages {
				if out.Stages[i].Name == m {
					out.Stages[i].Replicas = n
					found = true
				}
			}
			if !found {
				return Topology{}, fmt.Errorf("no stage %q", name)
			}
		}
	}
	if err := out.Validate(); err != nil {
		return Topology{}, err
	}
	return t.replan(out)
}

// Uniform returns a copy in which every logical stage but the gateway has
// n replicas (planned again when t is a plan).
func (t Topology) Uniform(n int) Topology {
	out := t.Logical()
	out.Stages = append([]Stage(nil), out.Stages...)
	for i := range out.Stages {
		if out.Stages[i].Role != "gateway" {
			out.Stages[i].Replicas = n
		}
	}
	if p, err := t.replan(out); err == nil {
		return p
	}
	return out
}

// replan plans a changed logical graph if t was a plan.
func (t Topology) replan(changed Topology) (Topology, error) {
	if !t.Planned() {
		return changed, nil
	}
	return Plan(changed)
}
