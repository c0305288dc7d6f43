package physical_test

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// defaultPlan is the plan of the four default queries on the default
// topology.
func defaultPlan(t *testing.T) *physical.Plan {
	t.Helper()
	return checkedPlan(t, queries.Names, func(name string) string {
		text, _ := queries.Text(name)
		return text
	})
}

// checkedPlan is the plan of a job of the named queries (text gives
// each one's) on the default topology, which Check must pass.
func checkedPlan(t *testing.T, names []string, text func(name string) string) *physical.Plan {
	t.Helper()
	var job []physical.Logical
	for _, name := range names {
		root, err := sql.Compile(text(name), catalog())
		if err != nil {
			t.Fatal(err)
		}
		job = append(job, physical.Logical{Name: name, Plan: root})
	}
	p, err := physical.Build(job, shape(t, deploy.Default()))
	if err != nil {
		t.Fatal(err)
	}
	if err := physical.Check(p); err != nil {
		t.Fatalf("the plan of %v: %v\n%s", names, err, p)
	}
	return p
}

// TestCheckCatchesBrokenPlans breaks the default plan one way at a time:
// Check must name each.
func TestCheckCatchesBrokenPlans(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(p *physical.Plan)
		want   string
	}{
		{"a shuffle gathered instead", func(p *physical.Plan) { p.Channel("matches-by-token").Key = nil }, "runs before its inputs are shuffled by its key"},
		{"a shuffle by another column", func(p *physical.Plan) {
			c := p.Channel("match_players-by-match")
			c.Key = []int{len(c.Columns) - 1}
		}, "runs before its input is partitioned by a part of its key"},
		{"a key outside the columns", func(p *physical.Plan) { p.Channel("matches-by-token").Key = []int{7} }, "keyed by column 7 of 1"},
		{"an input produced later", func(p *physical.Plan) {
			p.Ops[5].Inputs[0] = physical.Input{Op: 6}
		}, "not an operator before it"},
		{"an input of another task", func(p *physical.Plan) {
			p.Ops[5].Inputs[0] = physical.Input{Op: 3}
		}, "no output of its task"},
		{"a route nobody reads", func(p *physical.Plan) { p.Channel("matches-by-token").Routes[0].Consumer = 0 }, "route 0's consumer #0 does not read it"},
		{"an output nobody reads", func(p *physical.Plan) { p.Ops[6].Inputs = nil }, "nothing reads #5 sort"},
		{"a query without its sink", func(p *physical.Plan) {
			p.Queries[0].Sink = 0
			p.Ops[6].Kind = physical.Exchange
			p.Ops[6].Channel = "nowhere"
		}, "is not a sink at the gateway"},
		{"a column of no input", func(p *physical.Plan) {
			p.Ops[5].Node.Order[0].Col = 0
			p.Channel("matches-by-token").Exprs[0].Col = 40
		}, "reads column 40 of 7"},
		{"a merge on the shards", func(p *physical.Plan) {
			for _, o := range p.Ops {
				if o.Kind == physical.FinalAggregate {
					o.Task = "shard"
				}
			}
		}, "reads channel q3-to-gateway, which goes to gateway"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := defaultPlan(t)
			c.break_(p)
			err := physical.Check(p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Check = %v, want an error saying %q", err, c.want)
			}
		})
	}
}

// TestShapeOf reads the gateway and shard tasks of topologies.
func TestShapeOf(t *testing.T) {
	three, err := deploy.Default().WithReplicas(map[string]int{"shard": 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		top  deploy.Topology
		want string
	}{
		{deploy.Default(), "gateway[1] shard[2]"},
		{three, "gateway[1] shard[3]"},
		{deploy.Default().Uniform(3), "gateway[1] shard[3]"},
		{deploy.Default().Uniform(1), "gateway[1] shard[1]"},
		{deploy.Default().Alone(), "gateway[1] gateway[1]"},
	} {
		s := shape(t, c.top)
		if got := s.Gateway.String() + " " + s.Shard.String(); got != c.want {
			t.Errorf("ShapeOf = %s, want %s", got, c.want)
		}
	}
	if _, err := physical.Build(nil, physical.Shape{}); err == nil {
		t.Error("Build on no shape: no error")
	}
}

// TestBuildRefusesMalformedPlans: a logical plan that is not what
// sql.Compile makes (as a decoded one may be) is an error, not a panic.
func TestBuildRefusesMalformedPlans(t *testing.T) {
	scan := &plan.Node{Op: plan.Scan, Table: "matches", Output: []plan.Column{{Name: "token", Type: plan.Text}}}
	col := func(i int) *plan.Expr { return &plan.Expr{Kind: plan.ColRef, Col: i, Type: plan.Text, Name: "token"} }
	sh := shape(t, deploy.Default())
	for _, c := range []struct {
		name string
		root *plan.Node
		want string
	}{
		{"a join of one input", &plan.Node{Op: plan.Join, Input: []*plan.Node{scan}, LeftKey: col(0), RightKey: col(0)}, "join node with 1 inputs"},
		{"a column past the input", &plan.Node{Op: plan.Project, Input: []*plan.Node{scan}, Exprs: []*plan.Expr{col(3)}, Output: scan.Output}, "reads column 3 of 1"},
		{"a right key past the input", &plan.Node{Op: plan.Join, Input: []*plan.Node{scan, scan}, LeftKey: col(0), RightKey: col(1)}, "join's right key"},
		{"no plan", nil, "has no plan"},
	} {
		_, err := physical.Build([]physical.Logical{{Name: "x", Plan: c.root}}, sh)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Build = %v, want an error saying %q", c.name, err, c.want)
		}
	}
	if _, err := physical.Build([]physical.Logical{{Name: "x", Plan: scan}, {Name: "x", Plan: scan}}, sh); err == nil {
		t.Error("two queries named x: no error")
	}
}

// TestCheckKnowsASharedOuterJoinsMembers: a LEFT and a FULL join of the
// same tables and keys are one FULL join (share.go), and the LEFT
// query's rows, which its filter keeps by the marker of the side it
// preserves, are partitioned by that side's key again: its aggregate by
// the key runs where it is, and Check agrees. Without the marker the
// filter keeps the FULL join's rows, partitioned by no key, and Check
// says the aggregate runs before its shuffle.
func TestCheckKnowsASharedOuterJoinsMembers(t *testing.T) {
	texts := map[string]string{
		"left": "SELECT m.token, COUNT(p.match) AS n FROM matches AS m LEFT JOIN match_players AS p ON p.match = m.token GROUP BY m.token",
		"full": "SELECT COUNT(*) AS n FROM matches AS m FULL JOIN match_players AS p ON p.match = m.token",
	}
	p := checkedPlan(t, []string{"left", "full"}, func(name string) string { return texts[name] })
	var marked *physical.Op
	for _, o := range p.Ops {
		if o.Kind == plan.Join && o.Node.JoinType != plan.JoinFull {
			t.Fatalf("#%d: a %s join, want one FULL join\n%s", o.ID, o.Node.JoinType, p)
		}
		if o.Kind == plan.Filter && strings.Contains(o.Node.Cond.String(), "present") {
			marked = o
		}
	}
	if marked == nil {
		t.Fatalf("no filter of the LEFT query by a marker\n%s", p)
	}
	marked.Node.Cond = &plan.Expr{Kind: plan.Const, Type: plan.Bool, Value: []byte("true")}
	if err := physical.Check(p); err == nil || !strings.Contains(err.Error(), "runs before its input is partitioned") {
		t.Errorf("Check = %v, want the aggregate run before its shuffle", err)
	}
}
