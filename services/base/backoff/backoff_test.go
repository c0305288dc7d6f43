package backoff

import (
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// failure is one call to Failed: at t0+at, after uptime.
type failure struct{ at, uptime time.Duration }

func TestBackoff(t *testing.T) {
	master := Policy{First: ms(100), Max: 5 * time.Second, Stable: 30 * time.Second, LoopCount: 4, LoopWindow: time.Minute}
	local := Policy{First: ms(100), Max: 2 * time.Second, Stable: 10 * time.Second, LoopCount: 5, LoopWindow: 10 * time.Second}
	spaced := func(n int, every, uptime time.Duration) []failure {
		var out []failure
		for i := range n {
			out = append(out, failure{time.Duration(i) * every, uptime})
		}
		return out
	}
	cases := []struct {
		name     string
		policy   Policy
		failures []failure
		delays   []time.Duration
		loops    []bool // nil: never a crash loop
		recent   []int  // nil: not checked
	}{
		{
			name:   "doubles up to Max",
			policy: Policy{First: ms(100), Max: 2 * time.Second, Stable: 10 * time.Second, LoopCount: 100, LoopWindow: 10 * time.Second},
			// the runner's sequence: 100 ms .. 1.6 s, then 2 s.
			failures: spaced(7, time.Second, ms(50)),
			delays:   []time.Duration{ms(100), ms(200), ms(400), ms(800), ms(1600), ms(2000), ms(2000)},
		},
		{
			name:   "a stable run starts over; Stable itself counts as stable",
			policy: local,
			failures: []failure{
				{0, ms(10)}, {time.Second, ms(10)}, {2 * time.Second, ms(10)},
				{time.Minute, 10 * time.Second}, {time.Minute + time.Second, time.Second},
			},
			delays: []time.Duration{ms(100), ms(200), ms(400), ms(100), ms(200)},
		},
		{
			name:     "the masters' crash loop: Max from the LoopCount-th failure in the window",
			policy:   master,
			failures: []failure{{0, 0}, {ms(100), ms(100)}, {ms(300), ms(200)}, {ms(700), ms(400)}, {ms(5700), ms(5000)}, {ms(10700), ms(5000)}},
			delays:   []time.Duration{ms(100), ms(200), ms(400), 5 * time.Second, 5 * time.Second, 5 * time.Second},
			loops:    []bool{false, false, false, true, true, true},
			recent:   []int{1, 2, 3, 4, 5, 6},
		},
		{
			name:     "the runner's crash loop: the 5th death within 10 s",
			policy:   local,
			failures: spaced(5, ms(500), ms(10)),
			delays:   []time.Duration{ms(100), ms(200), ms(400), ms(800), 2 * time.Second},
			loops:    []bool{false, false, false, false, true},
			recent:   []int{1, 2, 3, 4, 5},
		},
		{
			name:     "failures spread wider than the window are no loop",
			policy:   local,
			failures: spaced(6, 5*time.Second, ms(10)),
			delays:   []time.Duration{ms(100), ms(200), ms(400), ms(800), ms(1600), 2 * time.Second},
			recent:   []int{1, 2, 2, 2, 2, 2},
		},
		{
			name:   "a failure exactly LoopWindow ago is out of the window",
			policy: Policy{First: ms(100), Max: time.Second, Stable: time.Minute, LoopCount: 2, LoopWindow: time.Second},
			failures: []failure{
				{0, 0}, {time.Second, 0}, // the first is out: no loop
				{time.Second + 1, 0}, // two within a second: a loop
			},
			delays: []time.Duration{ms(100), ms(200), time.Second},
			loops:  []bool{false, false, true},
			recent: []int{1, 1, 2},
		},
		{
			name:   "after a crash loop the wait stays Max until a stable run",
			policy: Policy{First: ms(100), Max: 10 * time.Second, Stable: 30 * time.Second, LoopCount: 3, LoopWindow: 10 * time.Second},
			failures: []failure{
				{0, 0}, {ms(100), ms(100)}, {ms(300), ms(200)}, // loop
				{time.Minute, 20 * time.Second},     // out of the loop, not stable
				{2 * time.Minute, 30 * time.Second}, // stable
			},
			delays: []time.Duration{ms(100), ms(200), 10 * time.Second, 10 * time.Second, ms(100)},
			loops:  []bool{false, false, true, false, false},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := New(c.policy)
			if b.CrashLoop() && c.policy.LoopCount > 0 {
				t.Fatal("a crash loop before any failure")
			}
			var delays []time.Duration
			var loops []bool
			var recent []int
			anyLoop := false
			for _, f := range c.failures {
				d := b.Failed(t0.Add(f.at), f.uptime)
				delays = append(delays, d.Delay)
				loops = append(loops, d.CrashLoop)
				recent = append(recent, d.Recent)
				anyLoop = anyLoop || d.CrashLoop
				if b.CrashLoop() != d.CrashLoop {
					t.Fatalf("CrashLoop() %v after a failure that said %v", b.CrashLoop(), d.CrashLoop)
				}
			}
			if !reflect.DeepEqual(delays, c.delays) {
				t.Errorf("delays %v, want %v", delays, c.delays)
			}
			if c.loops == nil {
				if anyLoop {
					t.Errorf("crash loops %v, want none", loops)
				}
			} else if !reflect.DeepEqual(loops, c.loops) {
				t.Errorf("crash loops %v, want %v", loops, c.loops)
			}
			if c.recent != nil && !reflect.DeepEqual(recent, c.recent) {
				t.Errorf("recent %v, want %v", recent, c.recent)
			}
		})
	}
}

func TestPolicyIsKept(t *testing.T) {
	p := Policy{First: 1, Max: 2, Stable: 3, LoopCount: 4, LoopWindow: 5}
	if got := New(p).Policy(); got != p {
		t.Fatalf("Policy() %+v, want %+v", got, p)
	}
}
