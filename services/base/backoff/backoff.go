// Package backoff holds Wololo's two waiting policies: Retry, the one
// retry loop of a call that fails for a while (retry.go), and Policy, the
// restart backoff that Wololo's two supervisors share: the masters'
// Supervisor (services/roles/master), which restarts the processes of a
// deployment, and the local runner (services/roles/local), which restarts
// its children when no master does. One process that keeps failing waits
// First, then twice as long after every failure up to Max; one that had
// stayed up for Stable starts again from First; LoopCount failures within
// LoopWindow are a crash loop, which the caller reports loudly and which
// waits Max.
//
// Policy is pure: the caller tells it when each failure happened and how
// long the process had been up, and it answers how long to wait. No clock,
// goroutine or I/O inside, so the callers' tests drive it with made-up
// times. What the wait is measured from is the caller's business: the
// runner sleeps it before the restart, the Supervisor restarts at once and
// lets the next restart of the same process come no sooner than it.
// Retry.Do sleeps between attempts, through a function its tests replace;
// it touches nothing else.
package backoff

import "time"

// Policy bounds the waits between restarts of one process.
type Policy struct {
	// First is the first wait; it doubles with every failure, up to Max.
	First, Max time.Duration
	// Stable: a failure after at least this much uptime starts again from
	// First.
	Stable time.Duration
	// LoopCount failures within LoopWindow (the one being recorded
	// included) make a crash loop: the wait is Max, and stays Max until
	// the process has been up for Stable.
	LoopCount  int
	LoopWindow time.Duration
}

// Decision is what Failed says about one failure.
type Decision struct {
	// Delay is the wait before the next restart.
	Delay time.Duration
	// CrashLoop: LoopCount failures or more fell within LoopWindow.
	CrashLoop bool
	// Recent counts the failures within LoopWindow, this one included.
	Recent int
}

// Backoff is one process's restart state. It is not safe for concurrent
// use: the caller holds the lock it already holds for that process.
type Backoff struct {
	policy   Policy
	next     time.Duration
	failures []time.Time // within LoopWindow of the last one
}

// New returns the state of a process that has not failed yet.
func New(p Policy) *Backoff {
	return &Backoff{policy: p, next: p.First}
}

// Policy is the policy b was made with.
func (b *Backoff) Policy() Policy { return b.policy }

// Failed records a failure at now of a process that had been up for
// uptime, and says how long to wait before the next restart.
func (b *Backoff) Failed(now time.Time, uptime time.Duration) Decision {
	if uptime >= b.policy.Stable {
		b.next = b.policy.First
	}
	kept := b.failures[:0]
	for _, t := range b.failures {
		if now.Sub(t) < b.policy.LoopWindow {
			kept = append(kept, t)
		}
	}
	b.failures = append(kept, now)
	loop := len(b.failures) >= b.policy.LoopCount
	if loop {
		b.next = b.policy.Max
	}
	d := Decision{Delay: b.next, CrashLoop: loop, Recent: len(b.failures)}
	b.next = min(2*b.next, b.policy.Max)
	return d
}

// CrashLoop reports whether the failures recorded are a crash loop, as
// the last Failed found them (with LoopCount of 1 or more, false before
// any failure).
func (b *Backoff) CrashLoop() bool {
	return len(b.failures) >= b.policy.LoopCount
}
