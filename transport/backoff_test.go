package transport

import (
	"testing"
	"time"
)

// TestBackoff: a link's backoff doubles up to its ceiling while its
// receiver is down, starts again after an attempt that got somewhere, and
// is a short poll while the receiver says it is recovering, so that a
// link reconnects within one poll of the receiver's recovery.
func TestBackoff(t *testing.T) {
	type step struct {
		progressed, soon bool
		wait, next       time.Duration
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, c := range []struct {
		name  string
		delay time.Duration
		steps []step
	}{
		{"down: doubled to the ceiling", firstBackoff, []step{
			{false, false, ms(50), ms(100)}, {false, false, ms(100), ms(200)}, {false, false, ms(200), ms(400)},
			{false, false, ms(400), ms(800)}, {false, false, ms(800), ms(1600)}, {false, false, ms(1600), maxBackoff},
			{false, false, maxBackoff, maxBackoff},
		}},
		{"progress starts again", ms(800), []step{{true, false, ms(50), ms(100)}}},
		{"recovering: polled, then the first backoff, not doubled", ms(400), []step{
			{false, true, recoveringPoll, ms(50)}, {false, true, recoveringPoll, ms(50)}, {false, false, ms(50), ms(100)},
		}},
	} {
		delay := c.delay
		for i, s := range c.steps {
			wait, next := backoff(delay, s.progressed, s.soon)
			if wait != s.wait || next != s.next {
				t.Fatalf("%s, step %d: backoff(%v, %v, %v) = %v, %v; want %v, %v", c.name, i, delay, s.progressed, s.soon, wait, next, s.wait, s.next)
			}
			delay = next
		}
	}
}
