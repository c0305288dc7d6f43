package rpc

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// logLimiter decides which refusals are logged in full, so that a flood of
// refused calls costs the log a bounded number of lines (see the package
// doc, "Floods"). Refusals are grouped by a key (what was refused, why,
// and from whom). A window opens at the first refusal; within it the
// first refusal of each key is logged in full, up to lines keys; the rest
// are only counted, and when the window ends (flush, after period) one
// summary line gives their counts. So a window costs at most lines+1
// lines, whatever the rate.
//
// Why windows rather than a token bucket: a bucket logs the first lines of
// a flood and then samples it, and the sampled lines say nothing of how
// much was dropped; a window's summary counts every refusal, by key.
// Not safe for concurrent use; the clock is the caller's (now).
type logLimiter struct {
	period  time.Duration
	lines   int // keys logged in full per window
	maxKeys int // keys counted apart per window; the rest are "others"

	open     bool
	start    time.Time
	counts   map[string]int // refusals of each key not logged in full
	logged   map[string]bool
	others   int // refusals of keys past maxKeys
	total    int
	unlogged int
}

// summary is the line that ends a window that did not log everything.
type summary struct {
	period   time.Duration
	total    int // refusals in the window
	unlogged int // of them, not logged in full
	top      []keyCount
	others   int // unlogged refusals not in top
}

type keyCount struct {
	key string
	n   int
}

// summaryKeys is how many keys a summary names.
const summaryKeys = 5

func newLogLimiter(period time.Duration, lines, maxKeys int) *logLimiter {
	return &logLimiter{period: period, lines: lines, maxKeys: maxKeys}
}

// note records a refusal of key at now: true if it is to be logged in
// full; opened is true if it opened a window, which the caller flushes at
// now+period.
func (l *logLimiter) note(key string, now time.Time) (full, opened bool) {
	if !l.open {
		l.open, l.start, opened = true, now, true
		l.counts, l.logged, l.others, l.total, l.unlogged = map[string]int{}, map[string]bool{}, 0, 0, 0
	}
	l.total++
	if !l.logged[key] && len(l.logged) < l.lines {
		l.logged[key] = true
		return true, opened
	}
	l.unlogged++
	if _, ok := l.counts[key]; ok || len(l.counts) < l.maxKeys {
		l.counts[key]++
	} else {
		l.others++
	}
	return false, opened
}

// flush ends the window if it is over at now: its summary, if anything in
// it was not logged in full.
func (l *logLimiter) flush(now time.Time) (s summary, ok bool) {
	if !l.open || now.Sub(l.start) < l.period {
		return summary{}, false
	}
	l.open = false
	if l.unlogged == 0 {
		return summary{}, false
	}
	s = summary{period: now.Sub(l.start), total: l.total, unlogged: l.unlogged, others: l.unlogged}
	for k, n := range l.counts {
		s.top = append(s.top, keyCount{k, n})
	}
	slices.SortFunc(s.top, func(a, b keyCount) int {
		return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.key, b.key))
	})
	if len(s.top) > summaryKeys {
		s.top = s.top[:summaryKeys]
	}
	for _, kc := range s.top {
		s.others -= kc.n
	}
	l.counts, l.logged = nil, nil
	return s, true
}

// most is the summary's keys with their counts, most first, for the log.
func (s summary) most() string {
	var b strings.Builder
	for i, kc := range s.top {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d x %s", kc.n, kc.key)
	}
	if s.others > 0 {
		fmt.Fprintf(&b, "; %d others", s.others)
	}
	return b.String()
}
