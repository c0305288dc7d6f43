package ratelog

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// clock is a test's clock, moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func bufferLog() (hclog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Debug}), &buf
}

func lines(buf *bytes.Buffer) []string {
	return strings.Split(strings.TrimSpace(buf.String()), "\n")
}

// TestRepeatedEventsLogBoundedLines: 1000 events of one key, one every
// 2 s (a link refused for ever, at its longest backoff) over 2000 s, make
// one line per minute and the first, not 1000; each line after the first
// says how many it stands for, and they add up. Another key is logged at
// once beside it.
func TestRepeatedEventsLogBoundedLines(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	l := New(time.Minute, c.now)
	log, buf := bufferLog()
	const events = 1000
	for i := range events {
		l.Log(log, hclog.Warn, "job-1/matches/shard-0", "stream to receiver broken, reconnecting", "attempt", i+1)
		c.t = c.t.Add(2 * time.Second)
	}
	got := lines(buf)
	// 2000 s: the first line, then one every 30 events (60 s).
	if want := 1 + (events-1)/30; len(got) != want {
		t.Fatalf("%d events over %s logged %d lines; want %d", events, 2*events*time.Second, len(got), want)
	}
	total := len(got)
	for i, line := range got {
		if !strings.Contains(line, "[WARN]") || !strings.Contains(line, "stream to receiver broken") {
			t.Errorf("line %d: %q", i, line)
		}
		var n int
		if at := strings.Index(line, "suppressed="); at >= 0 {
			fmt.Sscanf(line[at:], "suppressed=%d", &n)
		} else if i > 0 {
			t.Errorf("line %d does not say how many events it stands for: %q", i, line)
		}
		total += n
	}
	// The events after the last line are still counted, for the next.
	if pending := l.keys["job-1/matches/shard-0"].suppressed; total+pending != events {
		t.Errorf("the lines account for %d events, %d more are pending; want %d in all", total, pending, events)
	}

	buf.Reset()
	l.Log(log, hclog.Warn, "job-2/players/shard-1", "another channel")
	if got := lines(buf); len(got) != 1 || !strings.Contains(got[0], "another channel") {
		t.Errorf("another key's first event: %q; want it logged", got)
	}
}

// TestKeysAreBounded: events of ever new keys, faster than the interval,
// track at most MaxKeys keys, and past them share one: a flood of new keys
// logs MaxKeys lines and one more per interval, not one per event.
func TestKeysAreBounded(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	l := New(time.Minute, c.now)
	log, buf := bufferLog()
	for i := range 3 * MaxKeys {
		l.Log(log, hclog.Warn, fmt.Sprintf("job-%d", i), "refused stream")
	}
	if n := len(lines(buf)); n != MaxKeys+1 {
		t.Errorf("%d events of new keys within the interval logged %d lines; want %d", 3*MaxKeys, n, MaxKeys+1)
	}
	if len(l.keys) > MaxKeys+1 {
		t.Errorf("%d keys tracked; want at most %d", len(l.keys), MaxKeys+1)
	}
	// Once the interval is over the old keys are forgotten for new ones.
	c.t = c.t.Add(time.Minute)
	buf.Reset()
	l.Log(log, hclog.Warn, "fresh", "refused stream")
	l.Log(log, hclog.Warn, "fresh", "refused stream")
	if n := len(lines(buf)); n != 1 || len(l.keys) > 2 {
		t.Errorf("after the interval: %d lines, %d keys; want 1 line, the fresh key tracked", n, len(l.keys))
	}
}
