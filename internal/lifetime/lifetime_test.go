package lifetime

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestLifetime(t *testing.T) {
	t.Run("serve ends the goroutines with its context", func(t *testing.T) {
		var l Lifetime
		var ended atomic.Int32
		for i := 0; i < 3; i++ {
			if _, ok := l.Go(func(ctx context.Context) { <-ctx.Done(); ended.Add(1) }); !ok {
				t.Fatal("Go refused before Serve")
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := l.Serve(ctx); err != nil {
			t.Fatalf("Serve = %v", err)
		}
		if ended.Load() != 3 {
			t.Fatalf("%d of 3 goroutines ended before Serve returned", ended.Load())
		}
		if _, ok := l.Go(func(context.Context) { t.Error("ran after Serve returned") }); ok {
			t.Fatal("Go accepted after Serve returned")
		}
	})
	t.Run("a failure ends serve with its error", func(t *testing.T) {
		var l Lifetime
		boom := errors.New("boom")
		l.Go(func(ctx context.Context) { l.Fail(boom); <-ctx.Done() })
		l.Go(func(ctx context.Context) { l.Fail(errors.New("second")); <-ctx.Done() })
		done := make(chan error, 1)
		go func() { done <- l.Serve(context.Background()) }()
		select {
		case err := <-done:
			if err == nil || (!errors.Is(err, boom) && err.Error() != "second") {
				t.Fatalf("Serve = %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Serve did not return after a failure")
		}
	})
	t.Run("one goroutine stops alone", func(t *testing.T) {
		var l Lifetime
		stopped := make(chan struct{})
		cancel, _ := l.Go(func(ctx context.Context) { <-ctx.Done(); close(stopped) })
		cancel()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Fatal("cancel did not stop the goroutine")
		}
		l.Wait()
	})
}

// TestSleep: Sleep waits its time out under a live context, and returns
// the context's error as soon as it ends.
func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep under a live context: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep under an ended context: %v, want context.Canceled", err)
	}
}
