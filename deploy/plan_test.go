package deploy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func streamNames(ss []Stream) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name+":"+s.From+">"+s.To)
	}
	return out
}

func TestPlanChainsStagesThatNeedNoShuffle(t *testing.T) {
	cases := []struct {
		name     string
		top      Topology
		tasks    []string
		channels []string
	}{
		{"default", Default(),
			[]string{"gateway[1] = q3-aggregator + q4-aggregator + gateway", "shard[2] = matches-filter + players-filter + q2-grouper + q3-joiner + q4-joiner"},
			[]string{"matches:gateway>shard", "players:gateway>shard", "q1-tokens:shard>gateway", "q2-tokens:shard>gateway", "q3-partials:shard>gateway", "q4-partials:shard>gateway"}},
		{"one replica each: all in the gateway, its own input a channel to itself", Default().Uniform(1),
			[]string{"gateway[1] = matches-filter + players-filter + q2-grouper + q3-joiner + q4-joiner + q3-aggregator + q4-aggregator + gateway"},
			[]string{"matches:gateway>gateway", "players:gateway>gateway"}},
		{"three each: the aggregators cannot join the gateway", Default().Uniform(3),
			[]string{"gateway[1] = gateway", "shard[3] = matches-filter + players-filter + q2-grouper + q3-joiner + q4-joiner", "q3-aggregator[3] = q3-aggregator", "q4-aggregator[3] = q4-aggregator"},
			[]string{"matches:gateway>shard", "players:gateway>shard", "q1-tokens:shard>gateway", "q2-tokens:shard>gateway", "q3-partials:shard>q3-aggregator", "q4-partials:shard>q4-aggregator", "q3-civs:q3-aggregator>gateway", "q4-civs:q4-aggregator>gateway"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.top.Tasks(); !reflect.DeepEqual(got, c.tasks) {
				t.Errorf("tasks:\n got %q\nwant %q", got, c.tasks)
			}
			if got := streamNames(c.top.Streams); !reflect.DeepEqual(got, c.channels) {
				t.Errorf("channels:\n got %q\nwant %q", got, c.channels)
			}
			if len(c.top.Chained)+len(c.top.Streams) != len(c.top.Logical().Streams) {
				t.Errorf("%d chained + %d channels, want the %d logical streams", len(c.top.Chained), len(c.top.Streams), len(c.top.Logical().Streams))
			}
			if err := c.top.Validate(); err != nil {
				t.Errorf("the plan does not validate: %v", err)
			}
		})
	}
}

func TestPlanIsStable(t *testing.T) {
	p := Default()
	again, err := Plan(p)
	if err != nil || !reflect.DeepEqual(again.Tasks(), p.Tasks()) {
		t.Fatalf("planning a plan: %v, %v", again.Tasks(), err)
	}
	// Written out (compose's environment, local mode's file) a plan is its
	// logical graph, and reading that back plans the same tasks.
	p.BasePort, p.Masters = 9000, 5 // set on the plan, as local mode and tests do
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"shard"`) && !strings.Contains(string(b), `"task":"shard"`) {
		t.Fatalf("a task was written as a stage: %s", b)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Tasks(), p.Tasks()) || !reflect.DeepEqual(back.Streams, p.Streams) {
		t.Fatalf("round trip: %v, want %v", back.Tasks(), p.Tasks())
	}
	if back.BasePort != 9000 || back.Masters != 5 {
		t.Fatalf("base port %d and masters %d set on the plan were lost", back.BasePort, back.Masters)
	}
	if !reflect.DeepEqual(p.Logical().Streams, back.Logical().Streams) {
		t.Fatal("the logical streams changed on the way")
	}
}

func TestReplicasOfATask(t *testing.T) {
	p, err := Default().WithReplicas(map[string]int{"shard": 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Tasks()[1]; got != "shard[4] = matches-filter + players-filter + q2-grouper + q3-joiner + q4-joiner" {
		t.Fatalf("shard=4 gave %q", got)
	}
	// One stage alone takes the count too; the task then splits.
	p, err = Default().WithReplicas(map[string]int{"q3-joiner": 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tasks()) != 3 || p.Replicas("q3-joiner") != 3 {
		t.Fatalf("q3-joiner=3 gave %q", p.Tasks())
	}
	if _, err := Default().WithReplicas(map[string]int{"nosuch": 2}); err == nil {
		t.Fatal("an unknown stage was accepted")
	}
}

func TestPlanRules(t *testing.T) {
	const head = `{"base_port":7100,"stages":[{"name":"gateway","role":"gateway","replicas":1,"operator":"results"},`
	cases := []struct {
		name, json string
		tasks      []string
	}{
		{"a stream without a key is a shuffle across replicas",
			head + `{"name":"a","role":"x","replicas":2,"operator":"a"},{"name":"b","role":"x","replicas":2,"operator":"b"}],
			"streams":[{"name":"in","from":"gateway","to":"a","key":"match"},{"name":"ab","from":"a","to":"b"},{"name":"out","from":"b","to":"gateway"}]}`,
			[]string{"gateway[1] = gateway", "a[2] = a", "b[2] = b"}},
		{"a key other than the inputs' is a shuffle",
			head + `{"name":"a","role":"x","replicas":2,"operator":"a"},{"name":"b","role":"x","replicas":2,"operator":"b"}],
			"streams":[{"name":"in","from":"gateway","to":"a","key":"match"},{"name":"ab","from":"a","to":"b","key":"civ"},{"name":"out","from":"b","to":"gateway"}]}`,
			[]string{"gateway[1] = gateway", "a[2] = a", "b[2] = b"}},
		{"other replica counts are a shuffle",
			head + `{"name":"a","role":"x","replicas":2,"operator":"a"},{"name":"b","role":"x","replicas":3,"operator":"b"}],
			"streams":[{"name":"in","from":"gateway","to":"a","key":"match"},{"name":"ab","from":"a","to":"b","key":"match"},{"name":"out","from":"b","to":"gateway"}]}`,
			[]string{"gateway[1] = gateway", "a[2] = a", "b[3] = b"}},
		{"the same key and count chain, named by the task field",
			head + `{"name":"a","role":"x","replicas":2,"operator":"a","task":"t"},{"name":"b","role":"x","replicas":2,"operator":"b"}],
			"streams":[{"name":"in","from":"gateway","to":"a","key":"match"},{"name":"ab","from":"a","to":"b","key":"match"},{"name":"out","from":"b","to":"gateway"}]}`,
			[]string{"gateway[1] = gateway", "t[2] = a + b"}},
		{"a task name that is a stage's is not taken",
			head + `{"name":"a","role":"x","replicas":2,"operator":"a","task":"gateway"},{"name":"b","role":"x","replicas":2,"operator":"b"}],
			"streams":[{"name":"in","from":"gateway","to":"a","key":"match"},{"name":"ab","from":"a","to":"b","key":"match"},{"name":"out","from":"b","to":"gateway"}]}`,
			[]string{"gateway[1] = gateway", "a[2] = a + b"}},
		{"upstream first, whatever the file's order",
			head + `{"name":"b","role":"x","replicas":2,"operator":"b"},{"name":"a","role":"x","replicas":2,"operator":"a"}],
			"streams":[{"name":"in","from":"gateway","to":"a","key":"match"},{"name":"ab","from":"a","to":"b","key":"match"},{"name":"out","from":"b","to":"gateway"}]}`,
			[]string{"gateway[1] = gateway", "b[2] = a + b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse([]byte(c.json))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Tasks(); !reflect.DeepEqual(got, c.tasks) {
				t.Errorf("got %q, want %q", got, c.tasks)
			}
		})
	}
}
