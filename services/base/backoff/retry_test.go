package backoff

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

var (
	errTransient = errors.New("transient")
	errPermanent = errors.New("permanent")
)

// script is f for Do: it returns the errors in turn (nil after the last).
func script(calls *int, errs ...error) func(context.Context) error {
	return func(context.Context) error {
		*calls++
		if *calls > len(errs) {
			return nil
		}
		return errs[*calls-1]
	}
}

func isTransient(err error) bool { return errors.Is(err, errTransient) }

func TestRetry(t *testing.T) {
	policy := Retry{First: ms(200), Max: ms(1000)}
	cases := []struct {
		name   string
		policy Retry
		errs   []error
		want   error
		calls  int
		waits  []time.Duration
	}{
		{name: "succeeds at once", policy: policy, calls: 1},
		{name: "doubles up to Max", policy: policy, errs: []error{errTransient, errTransient, errTransient, errTransient, errTransient},
			calls: 6, waits: []time.Duration{ms(200), ms(400), ms(800), ms(1000), ms(1000)}},
		{name: "permanent error at once", policy: policy, errs: []error{errTransient, errPermanent, errTransient},
			want: errPermanent, calls: 2, waits: []time.Duration{ms(200)}},
		{name: "gives up after Attempts in a row", policy: Retry{Attempts: 3, First: ms(200), Max: ms(1000)},
			errs: []error{errTransient, errTransient, errTransient, errTransient}, want: errTransient, calls: 3, waits: []time.Duration{ms(200), ms(400)}},
		{name: "progress starts the count and the waits again", policy: Retry{Attempts: 3, First: ms(200), Max: ms(1000)},
			errs: []error{errTransient, errTransient, Progressed(errTransient), errTransient, errTransient},
			want: errTransient, calls: 5, waits: []time.Duration{ms(200), ms(400), ms(200), ms(400)}},
		{name: "progress then success", policy: Retry{Attempts: 3, First: ms(200), Max: ms(1000)},
			errs: []error{errTransient, Progressed(errTransient), errTransient}, calls: 4, waits: []time.Duration{ms(200), ms(200), ms(400)}},
		{name: "jitter adds its share", policy: Retry{First: ms(200), Max: ms(1000), Jitter: 0.5, random: func() float64 { return 0.5 }},
			errs: []error{errTransient, errTransient}, calls: 3, waits: []time.Duration{ms(250), ms(500)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var waits, heard []time.Duration
			var nexts []int
			r := c.policy
			r.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
			r.OnRetry = func(err error, next int, wait time.Duration) {
				if _, marked := err.(progressed); marked {
					t.Errorf("OnRetry heard the Progressed mark, not the error")
				}
				nexts, heard = append(nexts, next), append(heard, wait)
			}
			calls := 0
			err := r.Do(context.Background(), isTransient, script(&calls, c.errs...))
			if err != c.want { // the error itself, never wrapped or marked
				t.Errorf("Do = %v, want %v", err, c.want)
			}
			if calls != c.calls {
				t.Errorf("f called %d times, want %d", calls, c.calls)
			}
			if !reflect.DeepEqual(waits, c.waits) || !reflect.DeepEqual(heard, c.waits) {
				t.Errorf("waits %v, OnRetry heard %v, want %v", waits, heard, c.waits)
			}
			// The attempts OnRetry announces count from 2 and start again
			// after progress; in a row they never pass Attempts.
			for i, n := range nexts {
				if n < 2 || (r.Attempts > 0 && n > r.Attempts) {
					t.Errorf("OnRetry #%d announced attempt %d", i, n)
				}
			}
		})
	}
}

func TestRetryStopsWithTheContext(t *testing.T) {
	// Ended before a failure: the failure is returned, without a wait.
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	r := Retry{First: ms(200), Max: ms(1000), sleep: func(context.Context, time.Duration) error {
		t.Error("waited after the context ended")
		return nil
	}}
	err := r.Do(ctx, nil, func(context.Context) error { calls++; cancel(); return errTransient })
	if err != errTransient || calls != 1 {
		t.Errorf("Do = %v after %d calls, want %v after 1", err, calls, errTransient)
	}

	// Ended during a wait, with the real sleep: the context's error. It is
	// cancelled once Do has said it waits (OnRetry, past its own check of
	// the context).
	ctx, cancel = context.WithCancel(context.Background())
	waiting := make(chan struct{})
	r = Retry{First: time.Hour, Max: time.Hour, OnRetry: func(error, int, time.Duration) { close(waiting) }}
	go func() { <-waiting; cancel() }()
	start := time.Now()
	if err := r.Do(ctx, nil, func(context.Context) error { return errTransient }); !errors.Is(err, context.Canceled) {
		t.Errorf("Do = %v, want context.Canceled", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Error("the wait did not end with the context")
	}
}

func TestProgressed(t *testing.T) {
	if Progressed(nil) != nil {
		t.Error("Progressed(nil) is not nil")
	}
	wrapped := fmt.Errorf("upload: %w", errTransient)
	if p := Progressed(wrapped); !errors.Is(p, errTransient) || p.Error() != wrapped.Error() {
		t.Errorf("Progressed(%v) = %v: not the same error", wrapped, p)
	}
}
