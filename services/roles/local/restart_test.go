package local

import (
	"testing"
	"time"
)

func TestBackoffDoublesCapsAndResets(t *testing.T) {
	b := newBackoff(RestartPolicy{LoopDeaths: 100}) // no crash loop here
	now := time.Unix(0, 0)
	var got []time.Duration
	for i := 0; i < 7; i++ {
		now = now.Add(time.Second)
		d := b.Failed(now, 50*time.Millisecond)
		if d.CrashLoop {
			t.Fatalf("death %d: crash loop with LoopDeaths 100", i)
		}
		got = append(got, d.Delay)
	}
	want := []time.Duration{100, 200, 400, 800, 1600, 2000, 2000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("delays %v, want %v ms", got, want)
		}
	}
	// A process that stayed up 10 s starts again from the minimum.
	now = now.Add(time.Minute)
	if d := b.Failed(now, 10*time.Second).Delay; d != 100*time.Millisecond {
		t.Fatalf("after a stable run: %v, want 100ms", d)
	}
	if d := b.Failed(now.Add(time.Second), time.Second).Delay; d != 200*time.Millisecond {
		t.Fatalf("next: %v, want 200ms", d)
	}
}

func TestBackoffCrashLoop(t *testing.T) {
	b := newBackoff(RestartPolicy{})
	now := time.Unix(0, 0)
	for i := 1; i <= 4; i++ {
		now = now.Add(500 * time.Millisecond)
		if d := b.Failed(now, 10*time.Millisecond); d.CrashLoop || d.Recent != i {
			t.Fatalf("death %d: loop %v, recent %d", i, d.CrashLoop, d.Recent)
		}
	}
	now = now.Add(500 * time.Millisecond)
	d := b.Failed(now, 10*time.Millisecond)
	if !d.CrashLoop || d.Recent != 5 || d.Delay != 2*time.Second {
		t.Fatalf("5th death in 10 s: delay %v loop %v recent %d; want 2s, true, 5", d.Delay, d.CrashLoop, d.Recent)
	}
	// Deaths spread out more than the window are not a loop.
	now = now.Add(time.Minute)
	if d := b.Failed(now, 30*time.Second); d.CrashLoop || d.Recent != 1 {
		t.Fatalf("after a quiet minute: loop %v, recent %d", d.CrashLoop, d.Recent)
	}
}

// TestRestartDelay: a child's only death within LoopWindow restarts at
// once; a second one within the window waits the backoff.
func TestRestartDelay(t *testing.T) {
	b := newBackoff(RestartPolicy{})
	now := time.Unix(0, 0)
	if d := restartDelay(b.Failed(now, 5*time.Second)); d != 0 {
		t.Fatalf("a first death: wait %v, want none", d)
	}
	if d := restartDelay(b.Failed(now.Add(time.Second), time.Second)); d != 200*time.Millisecond {
		t.Fatalf("a second death within the window: wait %v, want the backoff's 200ms", d)
	}
	now = now.Add(time.Minute)
	if d := restartDelay(b.Failed(now, 50*time.Second)); d != 0 {
		t.Fatalf("a death after a quiet minute: wait %v, want none", d)
	}
}
