package clusterview

import (
	"reflect"
	"testing"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

func TestJobStages(t *testing.T) {
	top := deploy.Default()
	status := func(jobs ...*wololov1.JobProgress) *wololov1.GetResponse { return &wololov1.GetResponse{Jobs: jobs} }
	var procs []*wololov1.ClusterProcess
	for _, in := range top.Instances() {
		p := &wololov1.ClusterProcess{Instance: in.Name(), Stage: in.Stage, State: Serving,
			Status: status(&wololov1.JobProgress{JobId: "j", RowsIn: 5, Finished: in.Stage == top.Gateway().Name}, &wololov1.JobProgress{JobId: "other", RowsIn: 1000})}
		if in.Name() == "shard-1" {
			p.State, p.Status = Unreachable, nil
		}
		procs = append(procs, p)
	}
	got := JobStages(top, &wololov1.ClusterGetResponse{Processes: procs}, "j")
	if len(got) != len(top.Stages) {
		t.Fatalf("%d stages, want %d", len(got), len(top.Stages))
	}
	for i, st := range top.Stages {
		g := got[i]
		if g.Stage != st.Name || g.Instances != int32(st.Replicas) {
			t.Errorf("stage %d: %v, want %s with %d instances", i, g, st.Name, st.Replicas)
		}
		wantRows, wantDown := int64(5*st.Replicas), []string(nil)
		if st.Name == "shard" {
			wantRows, wantDown = int64(5*(st.Replicas-1)), []string{"shard-1"}
		}
		if g.RowsIn != wantRows || !reflect.DeepEqual(g.Unreachable, wantDown) {
			t.Errorf("%s: rows %d unreachable %v, want %d and %v", st.Name, g.RowsIn, g.Unreachable, wantRows, wantDown)
		}
		if g.Finished != (st.Name == top.Gateway().Name) {
			t.Errorf("%s: finished %t", st.Name, g.Finished)
		}
	}
}

func TestQueriesLabel(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{nil, "-"},
		{DefaultQueries, "q1..q4"},
		{[]string{"q1", "q2", "q3"}, "q1,q2,q3"},
		{[]string{"civs", "by-map"}, "civs,by-map"},
		{[]string{"a_rather_long_query_name", "another_long_one", "third", "fourth"}, "a_rather_long_query_name +3"},
		{[]string{"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc", "dddddddd", "e"}, "aaaaaaaaaa,bbbbbbbbbb,cccccccccc +2"},        // 41 characters with d
		{[]string{"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc", "ddddddd", "e"}, "aaaaaaaaaa,bbbbbbbbbb,cccccccccc,ddddddd +1"}, // 40 with d
	} {
		if got := QueriesLabel(c.names); got != c.want {
			t.Errorf("QueriesLabel(%q) = %q, want %q", c.names, got, c.want)
		}
	}
}
