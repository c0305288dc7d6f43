package local

import "time"

// RestartPolicy is how the runner restarts a child that died: after
// MinBackoff, doubling for every death up to MaxBackoff; a child that stayed
// up for StableAfter starts again from MinBackoff. LoopDeaths deaths within
// LoopWindow is a crash loop: logged loudly, restarted at MaxBackoff.
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

// backoff is one instance's restart state. It is a pure function of the
// deaths it is told about; no clocks or goroutines inside.
type backoff struct {
	policy RestartPolicy
	next   time.Duration
	deaths []time.Time // within the loop window
}

func newBackoff(p RestartPolicy) *backoff {
	p = p.withDefaults()
	return &backoff{policy: p, next: p.MinBackoff}
}

// died records a death at now of a process that had been up for uptime and
// returns how long to wait before the restart, whether the instance is in a
// crash loop, and how many deaths fall within the loop window.
func (b *backoff) died(now time.Time, uptime time.Duration) (delay time.Duration, crashLoop bool, recent int) {
	if uptime >= b.policy.StableAfter {
		b.next = b.policy.MinBackoff
	}
	delay = b.next
	b.next = min(2*b.next, b.policy.MaxBackoff)
	keep := b.deaths[:0]
	for _, t := range b.deaths {
		if now.Sub(t) < b.policy.LoopWindow {
			keep = append(keep, t)
		}
	}
	b.deaths = append(keep, now)
	if len(b.deaths) >= b.policy.LoopDeaths {
		return b.policy.MaxBackoff, true, len(b.deaths)
	}
	return delay, false, len(b.deaths)
}
