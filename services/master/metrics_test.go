package master

import (
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

func TestRestartReasonsAreFewLabels(t *testing.T) {
	cases := []struct{ reason, want string }{
		{"exited: killed by signal 9 (killed)", "exited"},
		{"exited: exit status 1", "exited"},
		{"not seen for 2.1s", "silent"},
		{fmt.Sprintf("%s of 1m0s (recovering for 1m0.25s)", ReasonRecoveringTooLong), "recovering-too-long"},
		{"something new", "other"},
	}
	for _, c := range cases {
		if got := reasonClass(c.reason); got != c.want {
			t.Errorf("reasonClass(%q) = %q, want %q", c.reason, got, c.want)
		}
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
