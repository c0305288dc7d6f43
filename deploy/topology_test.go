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
		t.Fatalf("gateway stage = %q", got)
	}
	for _, s := range top.Stages {
		if s.Role != "gateway" && len(top.Inputs(s.Name)) == 0 {
			t.Errorf("stage %s has no inputs", s.Name)
		}
	}
}

func TestValidateNamesTheProblem(t *testing.T) {
	cases := []struct {
		name, json, want string
	}{
		{"zero replicas", `{"stages":[{"name":"gateway","role":"gateway","replicas":1,"operator":"results"},{"name":"f","role":"filter","replicas":0,"operator":"x"}]}`, `stage "f": replicas must be 1..1024, got 0`},
		{"a million replicas", `{"base_port":7100,"stages":[{"name":"gateway","role":"gateway","replicas":1,"operator":"results"},{"name":"f","role":"filter","replicas":1000000,"operator":"x"}]}`, `stage "f": replicas must be 1..1024, got 1000000`},
		{"too many masters", `{"base_port":7100,"masters":33,"stages":[{"name":"gateway","role":"gateway","replicas":1,"operator":"results"}]}`, `masters must be 0..32, got 33`},
		{"no base port", `{"stages":[{"name":"gateway","role":"gateway","replicas":1,"operator":"results"}]}`, `base_port 0: the 2 ports from there and their admin ports (1000 above) must lie in 1..65535`},
		{"ports past 65535", `{"base_port":65530,"masters":3,"stages":[{"name":"gateway","role":"gateway","replicas":1,"operator":"results"},{"name":"f","role":"filter","replicas":4,"operator":"x"}]}`, `base_port 65530: the 9 ports from there and their admin ports (1000 above) must lie in 1..65535`},
		{"admin ports past 65535", `{"base_port":64600,"stages":[{"name":"gateway","role":"gateway","replicas":1,"operator":"results"}]}`, `base_port 64600: the 2 ports from there and their admin ports (1000 above) must lie in 1..65535`},
		{"unknown stage", `{"stages":[{"name":"gateway","role":"gateway","replicas":1,"operator":"results"}],"streams":[{"name":"s","from":"gateway","to":"nowhere"}]}`, `unknown receiver stage "nowhere"`},
		{"no gateway", `{"stages":[{"name":"f","role":"filter","replicas":1,"operator":"x"}]}`, `exactly one gateway`},
		{"unknown field", `{"stagez":[]}`, `unknown field`},
		{"duplicate", `{"stages":[{"name":"gateway","role":"gateway","replicas":1,"operator":"results"},{"name":"gateway","role":"filter","replicas":1,"operator":"x"}]}`, `appears twice`},
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
	if top.Replicas("shard") != 3 || top.Logical().Replicas("q3-joiner") != 3 || top.Replicas("gateway") != 1 {
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
	top.Stages = append(top.Stages, Stage{Name: MasterStage, Role: "filter", Replicas: 1, Operator: "x"})
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
