package master

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func names(as []Action) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Instance)
	}
	return out
}

func TestSupervisorDetectsAndRestarts(t *testing.T) {
	p := DefaultPolicy
	p.Timeout = 2 * time.Second // the cases count in milliseconds against it
	cases := []struct {
		name  string
		steps func(s *Supervisor) []Action
		want  []string
	}{
		{"all seen in time: nothing to do", func(s *Supervisor) []Action {
			s.Seen("a-0", at(1500))
			s.Seen("b-0", at(1900))
			return s.Due(at(3000))
		}, nil},
		{"silent past the timeout: restart", func(s *Supervisor) []Action {
			s.Seen("a-0", at(1500))
			return s.Due(at(2100))
		}, []string{"b-0"}},
		{"exit reported: restart at once", func(s *Supervisor) []Action {
			s.Seen("a-0", at(100))
			s.Seen("b-0", at(100))
			s.Exited("a-0", "killed by signal 9")
			return s.Due(at(200))
		}, []string{"a-0"}},
		{"a probe after the exit report revives it", func(s *Supervisor) []Action {
			s.Exited("a-0", "killed by signal 9")
			s.Seen("a-0", at(150))
			s.Seen("b-0", at(150))
			return s.Due(at(200))
		}, nil},
		{"restarted instance gets Timeout to come up", func(s *Supervisor) []Action {
			s.Exited("a-0", "gone")
			s.Seen("b-0", at(100))
			first := s.Due(at(100))
			s.Seen("b-0", at(2000))
			again := s.Due(at(2000)) // a-0 not seen since its restart at 100ms, but within 2s
			return append(first, again...)
		}, []string{"a-0"}},
		{"unknown to the runtime: not restarted", func(s *Supervisor) []Action {
			s.Listed("a-0", false, at(100))
			s.Seen("b-0", at(2500))
			return s.Due(at(3000))
		}, nil},
		{"appearing in the runtime starts its grace", func(s *Supervisor) []Action {
			s.Listed("a-0", false, at(100))
			s.Listed("a-0", true, at(2500))
			s.Seen("b-0", at(4000))
			return s.Due(at(4000)) // listed at 2.5s: 1.5s of grace used
		}, nil},
		{"the grace runs from the real start, not from Due", func(s *Supervisor) []Action {
			s.Exited("a-0", "gone")
			s.Seen("b-0", at(100))
			first := s.Due(at(100))
			s.Started("a-0", at(1900)) // the runtime took its time
			s.Seen("b-0", at(3500))
			return append(first, s.Due(at(3500))...)
		}, []string{"a-0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSupervisor(p, []string{"a-0", "b-0"}, t0)
			got := names(c.steps(s))
			if len(got) != len(c.want) {
				t.Fatalf("restarts %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("restarts %v, want %v", got, c.want)
				}
			}
		})
	}
}

// TestSupervisorBacksOffAndReportsCrashLoops: an instance that dies right
// after every restart is restarted with doubling gaps, flagged as a crash
// loop after LoopRestarts, and then retried at MaxBackoff only.
func TestSupervisorBacksOffAndReportsCrashLoops(t *testing.T) {
	p := Policy{Timeout: time.Second, FirstBackoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second,
		Stable: 30 * time.Second, LoopRestarts: 4, LoopWindow: time.Minute}
	s := NewSupervisor(p, []string{"x-0"}, t0)
	var restartsAt []int
	var loopAt int
	for ms := 0; ms <= 20000; ms += 10 {
		s.Exited("x-0", "exit status 1") // dies as soon as it starts
		for _, a := range s.Due(at(ms)) {
			restartsAt = append(restartsAt, ms)
			if a.CrashLoop && loopAt == 0 {
				loopAt = ms
			}
		}
	}
	want := []int{0, 100, 300, 700, 5700, 10700, 15700}
	if len(restartsAt) != len(want) {
		t.Fatalf("restarts at %v ms, want %v", restartsAt, want)
	}
	for i := range want {
		if restartsAt[i] != want[i] {
			t.Fatalf("restarts at %v ms, want %v", restartsAt, want)
		}
	}
	if loopAt != 700 {
		t.Fatalf("crash loop flagged at %d ms, want 700 (the 4th restart)", loopAt)
	}
	st := s.States(at(20000))
	if len(st) != 1 || st[0].Restarts != 7 || !st[0].CrashLoop {
		t.Fatalf("states %+v", st)
	}
}

// TestSupervisorBackoffResetsAfterStableRun: a restart after a long healthy
// run starts again from the first backoff.
func TestSupervisorBackoffResetsAfterStableRun(t *testing.T) {
	p := DefaultPolicy
	p.Timeout = 2 * time.Second // the cases count in milliseconds against it
	s := NewSupervisor(p, []string{"x-0"}, t0)
	s.Exited("x-0", "1")
	s.Due(at(0))
	s.Exited("x-0", "2")
	s.Due(at(200)) // backoff now 400ms
	for ms := 1000; ms < 60000; ms += 500 {
		s.Seen("x-0", at(ms))
	}
	s.Exited("x-0", "3")
	if got := s.Due(at(60000)); len(got) != 1 {
		t.Fatalf("no restart after a stable run: %v", got)
	}
	s.Exited("x-0", "4")
	if got := s.Due(at(60000 + 200)); len(got) != 1 {
		t.Fatalf("backoff did not start over after a stable run: %v", got)
	}
}

// TestSupervisorGraceForgivesBlindness: after Grace, an instance the
// master could not see is not silent until Timeout has passed again; an
// exit the runtime reports is restarted at once all the same.
func TestSupervisorGraceForgivesBlindness(t *testing.T) {
	s := NewSupervisor(DefaultPolicy, []string{"a-0", "b-0"}, t0)
	s.Exited("b-0", "killed")
	s.Grace(at(5000)) // nothing seen for 5 s: this master was cut off
	if got := names(s.Due(at(5100))); len(got) != 1 || got[0] != "b-0" {
		t.Fatalf("right after the grace: restarts %v, want [b-0]", got)
	}
	s.Seen("b-0", at(7000)) // back after its restart
	if got := names(s.Due(at(7200))); len(got) != 1 || got[0] != "a-0" {
		t.Fatalf("a Timeout after the grace: restarts %v, want [a-0]", got)
	}
}

// TestSupervisorWaitsForRecovery: a process that answers "recovering" is
// alive, not silent, for RecoveryGrace from its first such answer; past it,
// it is killed and restarted with ReasonRecoveringTooLong. One that does
// not answer at all is silent as before, recovering or not.
func TestSupervisorWaitsForRecovery(t *testing.T) {
	p := DefaultPolicy
	p.Timeout = 2 * time.Second
	p.RecoveryGrace = 60 * time.Second
	// probes reports a-0 recovering (b-0 serving) every 500 ms in [from, to].
	probes := func(s *Supervisor, from, to int) {
		for ms := from; ms <= to; ms += 500 {
			s.Recovering("a-0", at(ms))
			s.Seen("b-0", at(ms))
		}
	}
	cases := []struct {
		name   string
		grace  time.Duration
		steps  func(s *Supervisor) []Action
		end    int    // ms: when the steps end
		want   string // the instance restarted at the end, if any
		reason string // the restart's reason starts with it
		kill   bool
	}{
		{name: "recovering within the grace: left alone", steps: func(s *Supervisor) []Action {
			probes(s, 500, 59000)
			return s.Due(at(59000))
		}, end: 59000},
		{name: "recovering past the grace: killed and restarted", steps: func(s *Supervisor) []Action {
			probes(s, 500, 61000)
			return s.Due(at(61000))
		}, end: 61000, want: "a-0", reason: ReasonRecoveringTooLong, kill: true},
		{name: "the grace runs from the first recovering answer", steps: func(s *Supervisor) []Action {
			s.Seen("a-0", at(1000)) // serving, then restarted by hand and recovering
			s.Seen("b-0", at(1000))
			probes(s, 2500, 62000)
			return s.Due(at(62000))
		}, end: 62000},
		{name: "serving ends a recovery: the next one has a grace of its own", steps: func(s *Supervisor) []Action {
			probes(s, 500, 50000)
			s.Seen("a-0", at(50500))
			probes(s, 51000, 100000)
			return s.Due(at(100000))
		}, end: 100000},
		{name: "recovering, then silent: not seen", steps: func(s *Supervisor) []Action {
			probes(s, 500, 5000)
			s.Seen("b-0", at(7100))
			return s.Due(at(7100))
		}, end: 7100, want: "a-0", reason: "not seen for 2.1s", kill: true},
		{name: "an exit while recovering: restarted at once", steps: func(s *Supervisor) []Action {
			probes(s, 500, 5000)
			s.Exited("a-0", "exit status 1")
			return s.Due(at(5100))
		}, end: 5100, want: "a-0", reason: "exited: exit status 1"},
		{name: "a restart ends the recovery", steps: func(s *Supervisor) []Action {
			probes(s, 500, 30000)
			s.Exited("a-0", "killed")
			if got := names(s.Due(at(30100))); len(got) != 1 {
				t.Fatalf("exit not restarted: %v", got)
			}
			s.Started("a-0", at(30200))
			s.Seen("a-0", at(31000))
			probes(s, 70000, 100000) // a new recovery: its grace starts at 70 s
			return s.Due(at(100000))
		}, end: 100000},
		{name: "no grace: recovering counts as no answer", grace: -1, steps: func(s *Supervisor) []Action {
			probes(s, 500, 2100)
			return s.Due(at(2100))
		}, end: 2100, want: "a-0", reason: "not seen for 2.1s", kill: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pol := p
			if c.grace < 0 {
				pol.RecoveryGrace = 0
			}
			s := NewSupervisor(pol, []string{"a-0", "b-0"}, t0)
			got := c.steps(s)
			switch {
			case c.want == "" && len(got) > 0:
				t.Fatalf("restarts %+v, want none", got)
			case c.want == "":
				st := s.States(at(c.end))[0]
				if !st.Alive || !st.Recovering {
					t.Fatalf("a-0 %+v, want alive and recovering", st)
				}
			case len(got) != 1 || got[0].Instance != c.want:
				t.Fatalf("restarts %+v, want %s", got, c.want)
			case !strings.HasPrefix(got[0].Reason, c.reason) || got[0].KillFirst != c.kill:
				t.Fatalf("restart %+v, want a reason starting %q and KillFirst %v", got[0], c.reason, c.kill)
			default:
				t.Logf("reason: %s", got[0].Reason)
			}
		})
	}
}
