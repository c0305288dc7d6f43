package clusterview

import (
	"errors"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// shard is a shard's Status with one job that sent rows on q1-tokens and
// waited stall seconds for room.
func shard(name string, rows, rowsIn int64, stall float64, depth int64, lastSeq, acked uint64) Answer {
	return Answer{Instance: name, Status: &wololov1.GetResponse{Instance: name, Jobs: []*wololov1.JobProgress{{
		JobId: "j1", RowsIn: rowsIn, BackpressureSeconds: stall,
		Outputs: []*wololov1.OutputChannel{{Stream: "q1-tokens", Receiver: "gateway-0", Rows: rows, Bytes: 10 * rows, OutboxDepth: depth, LastSeq: lastSeq, Acked: acked}},
	}}}}
}

func master(id int32, role string, leader int32, term uint64) Answer {
	name := deploy.Instance{Stage: deploy.MasterStage, Index: int(id)}.Name()
	return Answer{Instance: name, Status: &wololov1.GetResponse{Instance: name, Master: &wololov1.MasterStatus{
		Id: id, ElectionRole: role, Leader: leader, Term: term, Acting: role == "leader",
		Processes: []*wololov1.SupervisedProcess{{Instance: "shard-1", Restarts: 2}},
	}}}
}

func TestSummarize(t *testing.T) {
	top := deploy.Default()
	t0 := time.Unix(1000, 0)
	gw := Answer{Instance: "gateway-0", Status: &wololov1.GetResponse{Instance: "gateway-0"}}
	jobs := []*wololov1.ClusterJob{{JobId: "j1", Name: "nightly", JobState: wololov1.JobState_JOB_STATE_UPLOADING, BytesUploaded: 100, BytesTotal: 1000}}
	first, sample := Summarize(top, []Answer{gw, shard("shard-0", 100, 1000, 0, 0, 3, 3), shard("shard-1", 50, 500, 0, 0, 1, 1),
		master(1, "follower", 3, 2), master(2, "follower", 3, 2), master(3, "leader", 3, 2)}, jobs, Sample{}, t0)
	// Of the topology's streams, only those an instance sends on.
	if len(first.Streams) != 1 || first.Streams[0].Name != "q1-tokens" {
		t.Fatalf("streams %v, want q1-tokens alone (no instance sends on the others)", first.Streams)
	}
	if first.IntervalSeconds != 0 || first.Streams[0].RowsPerSecond != 0 || first.Jobs[0].EtaSeconds != -1 {
		t.Errorf("first snapshot: interval %v, q1 rate %v, eta %v: want no rates", first.IntervalSeconds, first.Streams[0].RowsPerSecond, first.Jobs[0].EtaSeconds)
	}

	jobs[0].BytesUploaded = 300
	cases := []struct {
		name    string
		answers []Answer
		check   func(t *testing.T, s *wololov1.ClusterGetResponse)
	}{
		{"rates, lag, restarts, eta", []Answer{gw, shard("shard-0", 300, 3000, 0, 4, 9, 5), shard("shard-1", 150, 1500, 0, 0, 2, 2), master(3, "leader", 3, 2)},
			func(t *testing.T, s *wololov1.ClusterGetResponse) {
				q1 := s.Streams[0]
				if q1.Name != "q1-tokens" || q1.RowsPerSecond != 300 || q1.BytesPerSecond != 3000 || q1.Rows != 450 || q1.MaxLagBatches != 4 || q1.OutboxDepth != 4 {
					t.Errorf("q1-tokens: %v", q1)
				}
				sh := s.Stages[1]
				if sh.Name != "shard" || sh.RowsInPerSecond != 3000 || sh.Serving != 2 || sh.Restarts != 2 || sh.Health != HealthOK {
					t.Errorf("shard: %v", sh)
				}
				if j := s.Jobs[0]; j.Progress != 0.3 || j.EtaSeconds != 3.5 {
					t.Errorf("job: progress %v eta %v, want 0.3 and 3.5 (700 bytes to go at 200/s)", j.Progress, j.EtaSeconds)
				}
				if m := s.Masters; len(m) != 3 || m[0].Reachable || !m[2].Acting || m[2].Leader != 3 || m[2].Term != 2 {
					t.Errorf("masters: %v", m)
				}
			}},
		{"a restarted sender's counters give no negative rate", []Answer{gw, shard("shard-0", 10, 10, 0, 0, 1, 1), shard("shard-1", 150, 1500, 0, 0, 2, 2)},
			func(t *testing.T, s *wololov1.ClusterGetResponse) {
				if r := s.Streams[0].RowsPerSecond; r != 110 {
					t.Errorf("q1-tokens rate %v, want 110 (shard-1's increase of 100, and the 10 shard-0 sent since it started again)", r)
				}
			}},
		{"backed up", []Answer{gw, shard("shard-0", 100, 1000, 2, 32, 40, 8), shard("shard-1", 50, 500, 1.5, 0, 1, 1)},
			func(t *testing.T, s *wololov1.ClusterGetResponse) {
				if h, b := s.Stages[1].Health, s.Stages[1].Backpressure; h != HealthBackedUp || b != 1.75 {
					t.Errorf("shard's 2 instances waiting 3.5 s in 1 s: %s, %v; want %s, 1.75 an instance", h, b, HealthBackedUp)
				}
			}},
		{"degraded, down, recovering", []Answer{{Instance: "gateway-0", Err: errors.New("connection refused")}, shard("shard-0", 100, 1000, 0, 0, 1, 1),
			{Instance: "shard-1", Status: &wololov1.GetResponse{Instance: "shard-1", Recovering: true}}},
			func(t *testing.T, s *wololov1.ClusterGetResponse) {
				if h := s.Stages[0].Health; h != HealthDown {
					t.Errorf("gateway: %s", h)
				}
				if h := s.Stages[1].Health; h != HealthRecovering {
					t.Errorf("shard: %s", h)
				}
				if p := s.Processes[0]; p.State != Unreachable || p.Error != "connection refused" {
					t.Errorf("gateway-0: %v", p)
				}
			}},
	}
	// An instance that did not answer before counts from now on only.
	_, noShard1 := Summarize(top, []Answer{gw, shard("shard-0", 100, 1000, 0, 0, 3, 3)}, jobs, Sample{}, t0)
	back, _ := Summarize(top, []Answer{gw, shard("shard-0", 100, 1000, 0, 0, 3, 3), shard("shard-1", 5000, 500, 0, 0, 1, 1)}, jobs, noShard1, t0.Add(time.Second))
	if r := back.Streams[0].RowsPerSecond; r != 0 {
		t.Errorf("shard-1 back after not answering: q1-tokens rate %v, want 0", r)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := Summarize(top, c.answers, jobs, sample, t0.Add(time.Second))
			if s.IntervalSeconds != 1 {
				t.Errorf("interval %v", s.IntervalSeconds)
			}
			c.check(t, s)
		})
	}
}

func TestBaseIsAtLeastAWindowOld(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) Sample {
		return Sample{At: t0.Add(time.Duration(ms) * time.Millisecond), counters: map[string]map[string]float64{}}
	}
	cases := []struct {
		history []Sample
		now     int
		want    int
	}{
		{nil, 0, -1},
		{[]Sample{at(0)}, 300, 0},
		{[]Sample{at(0), at(250), at(500), at(1100)}, 1400, 250},
		{[]Sample{at(0), at(250), at(500), at(1100)}, 2200, 1100},
	}
	for _, c := range cases {
		b := base(c.history, t0.Add(time.Duration(c.now)*time.Millisecond))
		got := -1
		if b.counters != nil {
			got = int(b.At.Sub(t0).Milliseconds())
		}
		if got != c.want {
			t.Errorf("base at %d ms of %d samples: the one of %d ms, want %d", c.now, len(c.history), got, c.want)
		}
	}
}

// The view names a job's state from what its gateway reports: the
// lifecycle first, then whether both files are in the graph.
func TestJobStateNamedFromTheGatewaysFacts(t *testing.T) {
	for _, c := range []struct {
		state    wololov1.JobState
		complete bool
		want     string
	}{
		{wololov1.JobState_JOB_STATE_UNSPECIFIED, false, JobUploading},
		{wololov1.JobState_JOB_STATE_UPLOADING, false, JobUploading},
		{wololov1.JobState_JOB_STATE_RUNNING, false, JobUploading},
		{wololov1.JobState_JOB_STATE_RUNNING, true, JobRunning},
		{wololov1.JobState_JOB_STATE_DONE, true, JobDone},
		{wololov1.JobState_JOB_STATE_FAILED, false, JobFailed},
		{wololov1.JobState_JOB_STATE_FAILED, true, JobFailed},
	} {
		if got := JobStateOf(&wololov1.ClusterJob{JobState: c.state, InputComplete: c.complete}); got != c.want {
			t.Errorf("state %v, input complete %v: %q, want %q", c.state, c.complete, got, c.want)
		}
	}
}

// TestPlanStreamsAreListed: a stream of a job's own plan (a route of one
// of its channels) is listed after the topology's, once, with its rows
// summed over the instances that send it, and its rate.
func TestPlanStreamsAreListed(t *testing.T) {
	top := deploy.Default()
	t0 := time.Unix(1000, 0)
	planned := func(name string, rows int64) Answer {
		return Answer{Instance: name, Status: &wololov1.GetResponse{Instance: name, Jobs: []*wololov1.JobProgress{{
			JobId:   "j2",
			Outputs: []*wololov1.OutputChannel{{Stream: "q2-to-gateway", Receiver: "gateway-0", Rows: rows, Bytes: 8 * rows}},
		}}}}
	}
	_, sample := Summarize(top, []Answer{planned("shard-0", 10), planned("shard-1", 20)}, nil, Sample{}, t0)
	s, _ := Summarize(top, []Answer{planned("shard-0", 110), planned("shard-1", 70)}, nil, sample, t0.Add(time.Second))
	var got []*wololov1.ClusterStream
	for _, st := range s.Streams {
		if st.Name == "q2-to-gateway" {
			got = append(got, st)
		}
	}
	if len(got) != 1 {
		t.Fatalf("the plan's stream is listed %d times, want once: %v", len(got), s.Streams)
	}
	if st := got[0]; st.From != "shard" || st.To != "gateway" || st.Rows != 180 || st.RowsPerSecond != 150 {
		t.Errorf("q2-to-gateway: %v, want shard -> gateway, 180 rows, 150 a second", st)
	}
}
