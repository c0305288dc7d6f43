package clusterview

import (
	"fmt"
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

// TestJobStagesBacklog: a stage's channels of the job with batches not
// acknowledged are listed, those whose link failed first, then by their
// backlog, at most backlogListed with the rest counted; an acknowledged
// channel and another job's are not.
func TestJobStagesBacklog(t *testing.T) {
	top := deploy.Default()
	out := func(stream, receiver string, depth int64, lastErr string) *wololov1.OutputChannel {
		return &wololov1.OutputChannel{Stream: stream, Receiver: receiver, OutboxDepth: depth, LastError: lastErr}
	}
	gateway := deploy.Instance{Stage: top.Gateway().Name}.Name()
	outs := []*wololov1.OutputChannel{out("c0-acked", "shard-0", 0, ""), out("c1-some", "shard-0", 3, ""), out("c2-refused", "shard-1", 2, "connection refused")}
	for i := range 8 {
		outs = append(outs, out(fmt.Sprintf("c%d-more", 3+i), "shard-1", 1, ""))
	}
	procs := []*wololov1.ClusterProcess{{Instance: gateway, State: Serving, Status: &wololov1.GetResponse{Jobs: []*wololov1.JobProgress{
		{JobId: "j", Outputs: outs},
		{JobId: "other", Outputs: []*wololov1.OutputChannel{out("c9-other", "shard-0", 7, "x")}},
	}}}}
	for _, st := range JobStages(top, &wololov1.ClusterGetResponse{Processes: procs}, "j") {
		if st.Stage != top.Gateway().Name {
			if len(st.Backlog) > 0 {
				t.Errorf("%s: backlog %v, want none", st.Stage, st.Backlog)
			}
			continue
		}
		var got []string
		for _, b := range st.Backlog {
			got = append(got, fmt.Sprintf("%s %s>%s %d %q", b.Stream, b.Sender, b.Receiver, b.Unacknowledged, b.LastError))
		}
		want := []string{`c2-refused gateway-0>shard-1 2 "connection refused"`, `c1-some gateway-0>shard-0 3 ""`}
		for i := range 6 {
			want = append(want, fmt.Sprintf(`c%d-more gateway-0>shard-1 1 ""`, 3+i))
		}
		if !reflect.DeepEqual(got, want) || st.BacklogMore != 2 {
			t.Errorf("backlog %q and %d more, want %q and 2 more", got, st.BacklogMore, want)
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
