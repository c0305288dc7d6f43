// Package deploy holds the description of a Wololo cluster's shape (which
// tasks exist, with how many replicas each, the masters and the ports) and
// what is derived from it for deployment.
//
// The topology is data, not code: topology.json is embedded as the default,
// and the embedded demo, the local multi-process mode and the compose
// generator all read the same Topology value. It names two tasks: the
// gateway's (role "gateway", one replica), where uploads are parsed and
// answers gathered, and the shard task (role "shard"), where a job's keyed
// operators run, one instance per key's hash; the SQL planner
// (services/dataflow/sql/physical.ShapeOf) places every job's operators on
// them. Instances are named after their task ("shard-1"), and so are
// ports, certificates and containers. This package only describes the
// cluster; it starts nothing and opens no sockets.
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

// The roles of a task.
const (
	RoleGateway = "gateway"
	RoleShard   = "shard"
)

// Stage is a task of the cluster: a set of identical processes, its
// replicas, each an Instance.
type Stage struct {
	Name     string `json:"name"`
	Role     string `json:"role"`
	Replicas int    `json:"replicas"`
}

// Topology is the cluster's shape.
type Topology struct {
	Comment  string `json:"comment,omitempty"`
	BasePort int    `json:"base_port"`
	// Masters is how many masters supervise the cluster (0: none). They
	// are instances master-1 .. master-N, the number being the election
	// id.
	Masters int `json:"masters,omitempty"`
	// Stages are the tasks: the gateway's, and at most one shard task.
	Stages []Stage `json:"tasks"`
}

// MaxReplicas and MaxMasters bound a topology, so that a mistyped count
// is refused instead of starting (or allocating for) millions of processes.
const (
	MaxReplicas = 1024
	MaxMasters  = 32
)

// MasterStage is the task name of the masters' instances ("master-1"...).
// No task may take it.
const MasterStage = "master"

// Instance is one process of a task.
type Instance struct {
	Stage string
	Index int
}

// Name is the instance's name, e.g. "shard-1".
func (i Instance) Name() string { return i.Stage + "-" + strconv.Itoa(i.Index) }

// ParseInstance reads an instance name such as "shard-1".
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

// Default returns the embedded default topology.
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

// Parse decodes and validates a topology. One written for the
// hand-written graph's versions (stages and the streams between them:
// "stages", "streams") is refused, saying what to write instead.
func Parse(b []byte) (Topology, error) {
	var old struct {
		Stages  json.RawMessage `json:"stages"`
		Streams json.RawMessage `json:"streams"`
	}
	if json.Unmarshal(b, &old) == nil && (old.Stages != nil || old.Streams != nil) {
		return Topology{}, errors.New(`decode topology: "stages" and "streams" describe the hand-written graph, retired (issue 39): give the cluster's "tasks", e.g. [{"name": "gateway", "role": "gateway", "replicas": 1}, {"name": "shard", "role": "shard", "replicas": 2}] (deploy/topology.json)`)
	}
	var t Topology
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Topology{}, fmt.Errorf("decode topology: %w", err)
	}
	if err := t.Validate(); err != nil {
		return Topology{}, err
	}
	return t, nil
}

// Validate checks that names are unique and usable in instance names,
// replica counts in range, that there is exactly one gateway task of one
// replica and at most one shard task, and that the ports fit.
func (t Topology) Validate() error {
	var errs []error
	seen := map[string]bool{}
	gateways, shards := 0, 0
	for _, s := range t.Stages {
		switch {
		case s.Name == "":
			errs = append(errs, errors.New("a task has no name"))
		case seen[s.Name]:
			errs = append(errs, fmt.Errorf("task %q appears twice", s.Name))
		case s.Replicas < 1 || s.Replicas > MaxReplicas:
			errs = append(errs, fmt.Errorf("task %q: replicas must be 1..%d, got %d", s.Name, MaxReplicas, s.Replicas))
		}
		if _, err := ParseInstance(s.Name + "-0"); err != nil || strings.ContainsAny(s.Name, " /") {
			errs = append(errs, fmt.Errorf("task name %q is not usable in instance names", s.Name))
		}
		switch s.Role {
		case RoleGateway:
			gateways++
			if s.Replicas != 1 {
				errs = append(errs, fmt.Errorf("task %q: the gateway has exactly one replica", s.Name))
			}
		case RoleShard:
			shards++
		default:
			errs = append(errs, fmt.Errorf("task %q: role %q, want %q or %q", s.Name, s.Role, RoleGateway, RoleShard))
		}
		seen[s.Name] = true
	}
	if seen[MasterStage] {
		errs = append(errs, fmt.Errorf("task name %q is reserved for the masters", MasterStage))
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
		errs = append(errs, fmt.Errorf("want exactly one gateway task, got %d", gateways))
	}
	if shards > 1 {
		errs = append(errs, fmt.Errorf("want at most one shard task, got %d", shards))
	}
	return errors.Join(errs...)
}

// Stage returns the named task.
func (t Topology) Stage(name string) (Stage, bool) {
	for _, s := range t.Stages {
		if s.Name == name {
			return s, true
		}
	}
	return Stage{}, false
}

// Gateway returns the gateway task.
func (t Topology) Gateway() Stage {
	for _, s := range t.Stages {
		if s.Role == RoleGateway {
			return s
		}
	}
	return Stage{}
}

// Shard returns the shard task, if there is one.
func (t Topology) Shard() (Stage, bool) {
	for _, s := range t.Stages {
		if s.Role == RoleShard {
			return s, true
		}
	}
	return Stage{}, false
}

// Replicas returns a task's replica count (0 if unknown).
func (t Topology) Replicas(stage string) int {
	s, _ := t.Stage(stage)
	return s.Replicas
}

// Instances lists every process of the cluster but the masters, task by
// task.
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
// instance's position in Instances, the masters following the tasks'
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

// WithReplicas returns a copy with the replica counts of some tasks
// changed, by task name.
func (t Topology) WithReplicas(counts map[string]int) (Topology, error) {
	out := t
	out.Stages = append([]Stage(nil), t.Stages...)
	for name, n := range counts {
		found := false
		for i := range out.Stages {
			if out.Stages[i].Name == name {
				out.Stages[i].Replicas = n
				found = true
			}
		}
		if !found {
			return Topology{}, fmt.Errorf("no task %q", name)
		}
	}
	if err := out.Validate(); err != nil {
		return Topology{}, err
	}
	return out, nil
}

// Uniform returns a copy in which every task but the gateway has n
// replicas.
func (t Topology) Uniform(n int) Topology {
	out := t
	out.Stages = append([]Stage(nil), t.Stages...)
	for i := range out.Stages {
		if out.Stages[i].Role != RoleGateway {
			out.Stages[i].Replicas = n
		}
	}
	return out
}

// Tasks describes the tasks in one line each, for logs and docs:
// "shard[2]".
func (t Topology) Tasks() []string {
	out := make([]string, len(t.Stages))
	for i, s := range t.Stages {
		out[i] = fmt.Sprintf("%s[%d]", s.Name, s.Replicas)
	}
	return out
}

// Alone returns a copy with the gateway's task alone: one process runs
// every job whole, its keyed operators too (the planner's shard task is
// then the gateway's).
func (t Topology) Alone() Topology {
	out := t
	out.Stages = []Stage{t.Gateway()}
	return out
}
