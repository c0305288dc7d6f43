package deploy

import (
	"strconv"
	"strings"
	"testing"
)

func TestDefaultIsValid(t *testing.T) {
	top := Default()
	if err := top.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := top.Gateway().Name; got != "gateway" {
		t.Fatalf("gateway task = %q", got)
	}
	if sh, ok := top.Shard(); !ok || sh.Name != "shard" || sh.Replicas != 2 {
		t.Fatalf("shard task = %+v, %v; want shard[2]", sh, ok)
	}
	if got := strings.Join(top.Tasks(), " "); got != "gateway[1] shard[2]" {
		t.Fatalf("Tasks = %q", got)
	}
}

func TestValidateNamesTheProblem(t *testing.T) {
	const gw = `{"name":"gateway","role":"gateway","replicas":1}`
	cases := []struct {
		name, json, want string
	}{
		{"zero replicas", `{"base_port":7100,"tasks":[` + gw + `,{"name":"s","role":"shard","replicas":0}]}`, `task "s": replicas must be 1..1024, got 0`},
		{"a million replicas", `{"base_port":7100,"tasks":[` + gw + `,{"name":"s","role":"shard","replicas":1000000}]}`, `task "s": replicas must be 1..1024, got 1000000`},
		{"too many masters", `{"base_port":7100,"masters":33,"tasks":[` + gw + `]}`, `masters must be 0..32, got 33`},
		{"no base port", `{"tasks":[` + gw + `]}`, `base_port 0: the 2 ports from there and their admin ports (1000 above) must lie in 1..65535`},
		{"ports past 65535", `{"base_port":65530,"masters":3,"tasks":[` + gw + `,{"name":"s","role":"shard","replicas":4}]}`, `base_port 65530: the 9 ports from there and their admin ports (1000 above) must lie in 1..65535`},
		{"admin ports past 65535", `{"base_port":64600,"tasks":[` + gw + `]}`, `base_port 64600: the 2 ports from there and their admin ports (1000 above) must lie in 1..65535`},
		{"no gateway", `{"base_port":7100,"tasks":[{"name":"s","role":"shard","replicas":1}]}`, `exactly one gateway`},
		{"two shard tasks", `{"base_port":7100,"tasks":[` + gw + `,{"name":"a","role":"shard","replicas":1},{"name":"b","role":"shard","replicas":1}]}`, `at most one shard task, got 2`},
		{"an unknown role", `{"base_port":7100,"tasks":[` + gw + `,{"name":"f","role":"filter","replicas":1}]}`, `task "f": role "filter", want "gateway" or "shard"`},
		{"unknown field", `{"taskz":[]}`, `unknown field`},
		{"the hand-written graph's", `{"stages":[` + gw + `],"streams":[]}`, `"stages" and "streams" describe the hand-written graph, retired`},
		{"duplicate", `{"base_port":7100,"tasks":[` + gw + `,{"name":"gateway","role":"shard","replicas":1}]}`, `appears twice`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.json))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestInstancesAndPorts(t *testing.T) {
	top := Default().Uniform(3)
	seen := map[int]bool{top.PublicPort(): true}
	for _, in := range top.Instances() {
		p := top.Port(in)
		if seen[p] || p <= top.BasePort {
			t.Fatalf("port %d of %s reused, the public one or below base", p, in.Name())
		}
		seen[p] = true
		back, err := ParseInstance(in.Name())
		if err != nil || back != in {
			t.Fatalf("ParseInstance(%q) = %v, %v", in.Name(), back, err)
		}
	}
	if top.Replicas("shard") != 3 || top.Replicas("gateway") != 1 {
		t.Fatalf("Uniform did not apply: %+v", top.Stages)
	}
	if _, err := ParseInstance("nodash"); err == nil {
		t.Fatal("ParseInstance accepted a name without index")
	}
}

func TestMastersFollowTheGraph(t *testing.T) {
	top := Default()
	if top.Masters != 3 {
		t.Fatalf("default masters = %d, want 3", top.Masters)
	}
	graph := len(top.Instances())
	seen := map[int]bool{}
	for _, in := range top.Instances() {
		seen[top.Port(in)] = true
	}
	for i, in := range top.MasterInstances() {
		if in.Name() != "master-"+string(rune('1'+i)) {
			t.Fatalf("master %d is named %s", i+1, in.Name())
		}
		p := top.Port(in)
		if p != top.BasePort+1+graph+i || seen[p] {
			t.Fatalf("%s on port %d (graph uses %d ports from %d)", in.Name(), p, graph, top.BasePort)
		}
		seen[p] = true
	}
	for _, bad := range []Instance{{Stage: MasterStage, Index: 0}, {Stage: MasterStage, Index: 4}} {
		if p := top.Port(bad); p != 0 {
			t.Errorf("%s has port %d, want none", bad.Name(), p)
		}
	}
	addr, err := HostResolver(top, "{instance}")("master-2")
	if err != nil || addr != "master-2:"+strconv.Itoa(top.BasePort+1+graph+1) {
		t.Fatalf("HostResolver(master-2) = %q, %v", addr, err)
	}
	if _, err := HostResolver(top, "127.0.0.1")("master-9"); err == nil {
		t.Fatal("HostResolver found a master the topology does not have")
	}
}

func TestValidateGuardsTheMasters(t *testing.T) {
	top := Default()
	top.Masters = -1
	if err := top.Validate(); err == nil || !strings.Contains(err.Error(), "masters must be 0..32, got -1") {
		t.Fatalf("negative masters: %v", err)
	}
	top = Default()
	top.Stages = append(top.Stages, Stage{Name: MasterStage, Role: RoleShard, Replicas: 1})
	if err := top.Validate(); err == nil || !strings.Contains(err.Error(), "reserved for the masters") {
		t.Fatalf("a stage named master: %v", err)
	}
}

func TestAdminPortsFollowTheGRPCPorts(t *testing.T) {
	top := Default()
	cases := []struct {
		in   Instance
		want int
	}{
		{Instance{Stage: "gateway"}, 8101},
		{Instance{Stage: "shard", Index: 1}, 8103},
		{Instance{Stage: MasterStage, Index: 3}, 8106},
		{Instance{Stage: "shard", Index: 2}, 0},
		{Instance{Stage: MasterStage, Index: 4}, 0},
	}
	for _, c := range cases {
		if got := top.AdminPort(c.in); got != c.want {
			t.Errorf("AdminPort(%s) = %d, want %d", c.in.Name(), got, c.want)
		}
	}
}

// TestWithReplicas: a task's count changes by its name, the others stay;
// an unknown task, or a count out of range, is refused.
func TestWithReplicas(t *testing.T) {
	top, err := Default().WithReplicas(map[string]int{"shard": 5})
	if err != nil || top.Replicas("shard") != 5 || top.Replicas("gateway") != 1 || Default().Replicas("shard") != 2 {
		t.Fatalf("WithReplicas: %v, %+v", err, top.Stages)
	}
	if _, err := Default().WithReplicas(map[string]int{"q3-joiner": 2}); err == nil || !strings.Contains(err.Error(), `no task "q3-joiner"`) {
		t.Errorf("an unknown task: %v", err)
	}
	if _, err := Default().WithReplicas(map[string]int{"gateway": 2}); err == nil {
		t.Error("a gateway of 2 replicas was accepted")
	}
}
