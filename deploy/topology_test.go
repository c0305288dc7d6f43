package deploy

import (
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
		{"zero replicas", `{"stages":[{"name":"gateway","role":"gateway","replicas":1,"operator":"results"},{"name":"f","role":"filter","replicas":0,"operator":"x"}]}`, `stage "f": replicas must be at least 1`},
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
	seen := map[int]bool{}
	for _, in := range top.Instances() {
		p := top.Port(in)
		if seen[p] || p < top.BasePort {
			t.Fatalf("port %d of %s reused or below base", p, in.Name())
		}
		seen[p] = true
		back, err := ParseInstance(in.Name())
		if err != nil || back != in {
			t.Fatalf("ParseInstance(%q) = %v, %v", in.Name(), back, err)
		}
	}
	if top.Replicas("q3-joiner") != 3 || top.Replicas("gateway") != 1 {
		t.Fatalf("Uniform did not apply: %+v", top.Stages)
	}
	if _, err := ParseInstance("nodash"); err == nil {
		t.Fatal("ParseInstance accepted a name without index")
	}
}
