package gateway

import (
	"context"
	"sync"
)

// compileSlots bounds the CreateJob calls that compile and plan queries at
// once (jobs.create: CPU, and memory that grows with the queries), per
// client and in total, so that no client's compiles can take the
// gateway's CPU from the other calls (a Status, an upload, another
// client's CreateJob). A call past its client's bound
// (--client-max-compiles) is refused at once, ResourceExhausted naming
// the flag, rather than queued: a client never has more calls waiting
// than its bound. A call within it waits for one of the total slots
// (--max-compiles) as long as its context allows, and is then refused,
// ResourceExhausted naming that flag (a client whose deadline passed
// hears DeadlineExceeded from its own side); the waiting calls are at
// most the clients times their bound. Waiting rather than refusing at
// once: a burst of legitimate CreateJobs from several clients is served
// in turn, not refused, and the wait costs no CPU.
type compileSlots struct {
	perClient int
	total     chan struct{} // a token per compile running
	mu        sync.Mutex
	byOwner   map[string]int // calls holding or waiting for a slot, per client
}

func newCompileSlots(perClient, total int) *compileSlots {
	return &compileSlots{perClient: perClient, total: make(chan struct{}, total), byOwner: map[string]int{}}
}

// acquire takes a compile slot for the owner's call, or refuses it (see
// compileSlots). release gives it back; call it exactly once.
func (s *compileSlots) acquire(ctx context.Context, owner string) (release func(), err error) {
	if err := s.enter(owner); err != nil {
		return nil, err
	}
	select {
	case s.total <- struct{}{}:
		return func() { <-s.total; s.leave(owner) }, nil
	case <-ctx.Done():
		s.leave(owner)
		return nil, errorf(ErrFull, "the gateway compiles %d jobs' queries at once, its limit (--max-compiles), and none finished before this call ended (%v)", cap(s.total), ctx.Err())
	}
}

// enter counts a call of the owner's, unless it has as many as it may.
func (s *compileSlots) enter(owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.byOwner[owner]; n >= s.perClient {
		return errorf(ErrFull, "this client has %d CreateJob calls compiling queries, its limit (--client-max-compiles); retry when one has answered", n)
	}
	s.byOwner[owner]++
	return nil
}

func (s *compileSlots) leave(owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byOwner[owner]--; s.byOwner[owner] == 0 {
		delete(s.byOwner, owner)
	}
}
