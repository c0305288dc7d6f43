// Package lifetime runs the goroutines of a Serve(ctx) unit that start on
// demand (a stage's job actors, a sender's links, a node's and a master's
// helpers) and ends them together: see Lifetime. Sleep is the wait such
// a goroutine makes that its context cuts short.
//
// It is a generic leaf: it imports nothing of this module and knows
// nothing of what the goroutines do, so that any package may use it
// (imports_test.go: internal/... but testkit is importable by all).
package lifetime

import (
	"context"
	"sync"
)

// Lifetime is the lifecycle of a Serve unit whose goroutines start on
// demand, from calls that come before or during Serve (a stage's job
// actors, a sender's links): each goroutine runs under a context of its
// own; Serve ends them all when its ctx ends or one of them reports a fatal
// error with Fail, waits for them, and returns that error. No goroutine
// starts once Serve has returned. The zero Lifetime is ready to use.
type Lifetime struct {
	once  sync.Once
	fatal chan error

	mu      sync.Mutex
	stopped bool
	next    int
	cancels map[int]context.CancelFunc
	wg      sync.WaitGroup
}

func (l *Lifetime) init() {
	l.once.Do(func() { l.fatal = make(chan error, 1) })
}

// Go runs fn in a goroutine of its own until fn returns, cancel is called,
// or Serve ends. ok is false (and fn does not run) once Serve has returned.
func (l *Lifetime) Go(fn func(ctx context.Context)) (cancel context.CancelFunc, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return func() {}, false
	}
	if l.cancels == nil {
		l.cancels = map[int]context.CancelFunc{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	id := l.next
	l.next++
	l.cancels[id] = cancel
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer func() {
			l.mu.Lock()
			delete(l.cancels, id)
			l.mu.Unlock()
			cancel()
		}()
		fn(ctx)
	}()
	return cancel, true
}

// Fail ends Serve with err (the first one; later ones are dropped).
func (l *Lifetime) Fail(err error) {
	l.init()
	select {
	case l.fatal <- err:
	default:
	}
}

// Serve blocks until ctx ends (nil) or Fail is called (its error), then
// ends every goroutine started with Go and waits for them.
func (l *Lifetime) Serve(ctx context.Context) error {
	l.init()
	var err error
	select {
	case <-ctx.Done():
	case err = <-l.fatal:
	}
	l.mu.Lock()
	l.stopped = true
	for _, cancel := range l.cancels {
		cancel()
	}
	l.mu.Unlock()
	l.wg.Wait()
	if err == nil {
		select {
		case err = <-l.fatal: // a goroutine failed as ctx ended
		default:
		}
	}
	return err
}

// Wait blocks until every goroutine started so far has returned.
func (l *Lifetime) Wait() { l.wg.Wait() }
