package local

import (
	"time"

	"github.com/wololo/wololo/services/base/backoff"
)

// RestartPolicy is how the runner restarts a child that died: at once
// when it is its only death within LoopWindow (a SIGKILLed process costs
// its job no wait: 100 ms of a shard's recovery was that wait); else after
// MinBackoff, doubling for every death up to MaxBackoff; a child that
// stayed up for StableAfter starts again from MinBackoff. LoopDeaths deaths within
// LoopWindow is a crash loop: logged loudly, restarted at MaxBackoff. It is
// a backoff.Policy (services/base/backoff, shared with the masters) under the
// runner's names.
type RestartPolicy struct {
	MinBackoff  time.Duration
	MaxBackoff  time.Duration
	StableAfter time.Duration
	LoopDeaths  int
	LoopWindow  time.Duration
}

// DefaultRestartPolicy is 100 ms → 2 s, reset after 10 s up, 5 deaths in
// 10 s is a crash loop.
var DefaultRestartPolicy = RestartPolicy{
	MinBackoff:  100 * time.Millisecond,
	MaxBackoff:  2 * time.Second,
	StableAfter: 10 * time.Second,
	LoopDeaths:  5,
	LoopWindow:  10 * time.Second,
}

func (p RestartPolicy) withDefaults() RestartPolicy {
	d := DefaultRestartPolicy
	if p.MinBackoff > 0 {
		d.MinBackoff = p.MinBackoff
	}
	if p.MaxBackoff > 0 {
		d.MaxBackoff = p.MaxBackoff
	}
	if d.MaxBackoff < d.MinBackoff {
		d.MaxBackoff = d.MinBackoff
	}
	if p.StableAfter > 0 {
		d.StableAfter = p.StableAfter
	}
	if p.LoopDeaths > 0 {
		d.LoopDeaths = p.LoopDeaths
	}
	if p.LoopWindow > 0 {
		d.LoopWindow = p.LoopWindow
	}
	return d
}

// newBackoff is one instance's restart state under p (its zero fields
// DefaultRestartPolicy's): the backoff the masters use too.
func newBackoff(p RestartPolicy) *backoff.Backoff {
	p = p.withDefaults()
	return backoff.New(backoff.Policy{
		First: p.MinBackoff, Max: p.MaxBackoff, Stable: p.StableAfter, LoopCount: p.LoopDeaths, LoopWindow: p.LoopWindow,
	})
}

// restartDelay is the wait before restarting a child that died, given
// what its backoff said of the death: none when it is the child's only
// death within LoopWindow, else the backoff's.
func restartDelay(d backoff.Decision) time.Duration {
	if d.Recent == 1 && !d.CrashLoop {
		return 0
	}
	return d.Delay
}
