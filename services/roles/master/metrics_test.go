package master

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// TestRestartCauses: each way of being due gives its restart its cause,
// the label of wololo_master_restarts_total.
func TestRestartCauses(t *testing.T) {
	p := DefaultPolicy
	p.Timeout, p.RecoveryGrace = 2*time.Second, 3*time.Second
	s := NewSupervisor(p, []string{"exited-0", "silent-0", "slow-0"}, t0)
	s.Seen("exited-0", at(100))
	s.Exited("exited-0", "killed by signal 9")
	for ms := 100; ms <= 3500; ms += 400 {
		s.Recovering("slow-0", at(ms)) // answers "recovering", until past its grace
	}
	got := map[string]Cause{}
	for _, a := range s.Due(at(3500)) {
		got[a.Instance] = a.Cause
	}
	want := map[string]Cause{"exited-0": CauseExited, "silent-0": CauseSilent, "slow-0": CauseRecoveringTooLong}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("causes %v, want %v", got, want)
	}
}

// TestFailoverIsTimedFromTheLastRoundThatFollowed: a master that starts
// acting after following another leader observes the time since it last
// followed it; its first leadership (it followed no one) and a return to
// acting without following anyone in between are no failovers.
func TestFailoverIsTimedFromTheLastRoundThatFollowed(t *testing.T) {
	mm := newMasterMetrics(nil)
	t0 := time.Unix(100, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	rounds := []struct {
		ms                int
		following, acting bool
	}{
		{0, false, true},     // first leader: no failover
		{250, false, false},  // lost its lease
		{500, false, true},   // acts again, followed no one: none
		{750, true, false},   // follows another
		{1000, true, false},  // still
		{1250, false, false}, // its leader is gone
		{1500, false, false}, // election
		{1750, false, true},  // acts: 0.75 s since it last followed
		{2000, false, true},
	}
	for _, r := range rounds {
		mm.see(at(r.ms), r.following, r.acting)
	}
	var m dto.Metric
	if err := mm.failover.Write(&m); err != nil {
		t.Fatal(err)
	}
	if h := m.GetHistogram(); h.GetSampleCount() != 1 || h.GetSampleSum() != 0.75 {
		t.Errorf("failovers: %d observed, %v s in all; want one of 0.75 s", h.GetSampleCount(), h.GetSampleSum())
	}
}

// TestLeaderIsALabel: whom a master follows is the label of an info
// series, wololo_master_leader_info{leader="master-2"} 1, absent while it
// knows no leader; the restarted process is "restarted", since "process"
// names the master itself on its /metrics.
func TestLeaderIsALabel(t *testing.T) {
	mm := newMasterMetrics(nil)
	mm.restarted("shard-1", CauseExited)
	reg := prometheus.NewRegistry()
	reg.MustRegister(mm)
	for _, c := range []struct {
		leader int32
		want   string
	}{
		{2, `wololo_master_leader_info{leader="master-2"} 1`},
		{0, ""},
	} {
		mm.status = func() *wololov1.MasterStatus { return &wololov1.MasterStatus{Leader: c.leader, Acting: false} }
		var text strings.Builder
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if _, err := expfmt.MetricFamilyToText(&text, f); err != nil {
				t.Fatal(err)
			}
		}
		got := text.String()
		if c.want != "" && !strings.Contains(got, c.want) || c.want == "" && strings.Contains(got, "wololo_master_leader_info{") {
			t.Errorf("leader %d: want %q in\n%s", c.leader, c.want, got)
		}
		if !strings.Contains(got, `wololo_master_restarts_total{reason="exited",restarted="shard-1"} 1`) {
			t.Errorf("no restart of shard-1 labelled restarted in\n%s", got)
		}
		if strings.Contains(got, "wololo_master_leader ") || strings.Contains(got, "wololo_master_leader{") {
			t.Errorf("the leader is still a value:\n%s", got)
		}
	}
}
