// Package ratelog keeps a warning that repeats from flooding a log: a
// Limiter logs the first event of a key (a channel, a peer) and then at
// most one per interval, saying how many of that key's events it left out
// since the last line. The transport uses it for the warnings a channel
// refused for ever or a fenced peer would repeat every few seconds, or on
// every call.
//
// It is a generic leaf: it imports nothing of this module
// (imports_test.go), so that any package may use it.
package ratelog

import (
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// DefaultInterval is how often a Limiter logs one key at most: a channel
// that keeps failing is still in the log every minute, and no longer every
// two seconds.
const DefaultInterval = time.Minute

// MaxKeys bounds the keys a Limiter tracks at once, so that events of
// ever new keys (jobs come and go) do not make it grow without end. Past
// it, keys not logged within the interval are forgotten; if every key
// was, the events of new keys share one key of their own (overflowKey)
// until some are.
const MaxKeys = 4096

// overflowKey is the key of the events of new keys while MaxKeys keys
// are tracked.
const overflowKey = "\x00overflow"

// Limiter decides which events of each key are logged. Its methods are
// safe for concurrent use.
type Limiter struct {
	every time.Duration
	now   func() time.Time

	mu   sync.Mutex
	keys map[string]*seen
	// forgot is when the keys were last looked through for ones to
	// forget: at most once per interval, so that a flood of new keys
	// costs no scan of them all per event.
	forgot time.Time
}

// seen is what a Limiter knows of one key.
type seen struct {
	logged     time.Time // when its last line was logged
	suppressed int       // events since then that were not
}

// New returns a Limiter that logs each key at most once per every
// (DefaultInterval if every <= 0), on the clock now (time.Now if nil; a
// test drives its own).
func New(every time.Duration, now func() time.Time) *Limiter {
	if every <= 0 {
		every = DefaultInterval
	}
	if now == nil {
		now = time.Now
	}
	return &Limiter{every: every, now: now, keys: map[string]*seen{}}
}

// Allow reports whether an event of key is to be logged now: its first,
// or the first one at least the interval after the last one logged. When
// it is, suppressed is how many of the key's events were not logged since
// that one; when it is not, the event is counted as suppressed.
func (l *Limiter) Allow(key string) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	s, known := l.keys[key]
	if !known {
		if len(l.keys) >= MaxKeys && now.Sub(l.forgot) >= l.every {
			l.forgetLocked(now)
		}
		if len(l.keys) >= MaxKeys {
			key = overflowKey
			s, known = l.keys[key]
		}
	}
	if !known {
		l.keys[key] = &seen{logged: now}
		return true, 0
	}
	if now.Sub(s.logged) < l.every {
		s.suppressed++
		return false, 0
	}
	suppressed = s.suppressed
	s.logged, s.suppressed = now, 0
	return true, suppressed
}

// forgetLocked forgets the keys not logged within the interval (their
// next event is logged as a first one; the count of their suppressed
// events is lost); l.mu is held.
func (l *Limiter) forgetLocked(now time.Time) {
	l.forgot = now
	for k, s := range l.keys {
		if now.Sub(s.logged) >= l.every {
			delete(l.keys, k)
		}
	}
}

// Log logs msg with args at level on log if Allow(key) lets it, with
// "suppressed" (the events of the key left out since its last line) and
// "suppressed-interval" added when some were.
func (l *Limiter) Log(log hclog.Logger, level hclog.Level, key, msg string, args ...any) {
	ok, suppressed := l.Allow(key)
	if !ok {
		return
	}
	if suppressed > 0 {
		args = append(args[:len(args):len(args)], "suppressed", suppressed, "suppressed-interval", l.every)
	}
	log.Log(level, msg, args...)
}
