package backoff

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/wololo/wololo/internal/lifetime"
)

// Retry is the policy of a call that is tried again while it fails for a
// while (a gateway restarting, a neighbour not up yet): wait First after
// the first failure, twice as long after every further one up to Max, and
// give up after Attempts failures in a row. It is the one retry loop of
// the module: the client's calls, uploads and watches and the node's
// announcements, introductions, drops and failure reports all go through
// Do.
type Retry struct {
	// Attempts bounds the failures in a row; 0 is no bound (until the
	// error is not retryable or the context ends).
	Attempts int
	// First is the wait after the first failure; it doubles after every
	// further failure, up to Max.
	First, Max time.Duration
	// Jitter adds to each wait a random share of it, up to Jitter (0.5:
	// up to half again), so that callers that failed together do not
	// all try again together.
	Jitter float64
	// OnRetry, if set, hears every failure that is tried again, before the
	// wait: the error, the number of the attempt to come (2 for the first
	// retry) and the wait. It is where a caller says what it retries.
	OnRetry func(err error, next int, wait time.Duration)

	// sleep waits d or until ctx ends (its error then); tests fake it.
	sleep func(ctx context.Context, d time.Duration) error
	// random is in [0, 1), for the jitter; tests fake it.
	random func() float64
}

// Progressed marks the error of an attempt that got somewhere before it
// failed (an upload that moved its committed offset): Do counts its
// failures in a row and its waits from the start again. Do returns and
// judges the error itself, never the mark. Progressed(nil) is nil.
func Progressed(err error) error {
	if err == nil {
		return nil
	}
	return progressed{err}
}

type progressed struct{ err error }

func (p progressed) Error() string { return p.err.Error() }
func (p progressed) Unwrap() error { return p.err }

// Do calls f until it returns nil, or an error that retryable refuses (nil
// retryable: every error is tried again), or fails Attempts times in a row,
// or ctx ends; it returns f's last error, or ctx's when ctx ends during a
// wait.
func (r Retry) Do(ctx context.Context, retryable func(error) bool, f func(ctx context.Context) error) error {
	sleep, random := r.sleep, r.random
	if sleep == nil {
		sleep = lifetime.Sleep
	}
	if random == nil {
		random = rand.Float64
	}
	failures, wait := 0, r.First
	for {
		err := f(ctx)
		if err == nil {
			return nil
		}
		if p, ok := err.(progressed); ok {
			err, failures, wait = p.err, 0, r.First
		}
		failures++
		if (retryable != nil && !retryable(err)) || (r.Attempts > 0 && failures >= r.Attempts) || ctx.Err() != nil {
			return err
		}
		d := wait
		if r.Jitter > 0 {
			d += time.Duration(random() * r.Jitter * float64(wait))
		}
		if r.OnRetry != nil {
			r.OnRetry(err, failures+1, d)
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
		wait = min(2*wait, r.Max)
	}
}
