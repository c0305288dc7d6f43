package driver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/election"
)

// Config is what an Elector needs.
type Config struct {
	Election election.Config
	// Tick is the length of one election tick; 100 ms if 0 (the timing of
	// election.DefaultConfig assumes about that).
	Tick time.Duration
	// Terms holds the highest term this master has acknowledged or
	// claimed; every Save must be durable before it returns, since the
	// messages that depend on it go out right after. Nil keeps it in
	// memory (tests only: a restart forgets it).
	Terms TermStore
	// Send delivers one message to another master (required). It is
	// called from one goroutine per peer, so a slow or dead peer delays no
	// one else; its error is only logged (the algorithm tolerates loss).
	Send func(ctx context.Context, m election.Message) error
	Log  hclog.Logger
	// Now is the clock (time.Now if nil; tests move it). Ticks are counted
	// from the difference of two readings, which for time.Now is the
	// monotonic clock: it keeps running while the process is paused.
	Now func() time.Time
}

// Elector runs an election.Node: it ticks it from a monotonic clock,
// feeds it the messages that arrive, persists its term and sends what it
// says. It is the only place where the election meets time and I/O.
type Elector struct {
	cfg Config
	log hclog.Logger

	mu     sync.Mutex
	node   *election.Node
	start  time.Time // ticks are counted from here, on the monotonic clock
	ticks  int64     // ticks fed so far
	state  election.State
	queues map[election.ID]chan election.Message
	// unsent counts messages queued and not yet handed to Send or
	// dropped; tests wait for it to reach zero between ticks.
	unsent atomic.Int64
	fatal  error
	failed chan struct{}
	failMu sync.Once
}

// StoppedAtKey is the key of an "acting stopped" line that gives the
// moment the tick that ended acting was due (see setStateLocked).
const StoppedAtKey = "stopped-at"

// sendQueue bounds the messages waiting for one peer; more are dropped
// (the algorithm repeats what matters).
const sendQueue = 32

// New loads the persisted term and makes the node.
func New(cfg Config) (*Elector, error) {
	if cfg.Send == nil {
		return nil, errors.New("election driver: Config.Send is nil")
	}
	if cfg.Tick == 0 {
		cfg.Tick = 100 * time.Millisecond
	}
	if cfg.Terms == nil {
		cfg.Terms = NewMemTermStore(0)
	}
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	persisted, err := cfg.Terms.Load()
	if err != nil {
		return nil, err
	}
	node, err := election.New(cfg.Election, persisted)
	if err != nil {
		return nil, err
	}
	e := &Elector{
		cfg: cfg, log: cfg.Log, node: node, start: cfg.Now(), state: node.State(),
		queues: map[election.ID]chan election.Message{}, failed: make(chan struct{}),
	}
	for _, p := range cfg.Election.Peers {
		if p != cfg.Election.Self {
			e.queues[p] = make(chan election.Message, sendQueue)
		}
	}
	e.log.Info("election: listening for a leader", "id", cfg.Election.Self, "peers", cfg.Election.Peers, "term", persisted)
	return e, nil
}

// Serve ticks the node and sends its messages until ctx ends (then it
// returns nil) or the term cannot be persisted (then it returns that
// error: a master that cannot keep its promises must stop).
func (e *Elector) Serve(ctx context.Context) error {
	var wg sync.WaitGroup
	for id, q := range e.queues {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.sender(ctx, id, q)
		}()
	}
	defer wg.Wait()
	t := time.NewTicker(e.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-e.failed:
			return e.fatal
		case <-t.C:
			e.mu.Lock()
			e.catchUpLocked()
			e.mu.Unlock()
		}
	}
}

// Receive hands the node a message from another master.
func (e *Elector) Receive(m election.Message) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.catchUpLocked()
	e.applyLocked(e.node.Receive(m))
}

// ConfirmDead tells the node that the runtime saw master id's process
// exited. Call it on every observation, at least every lease.
func (e *Elector) ConfirmDead(id election.ID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.catchUpLocked()
	e.applyLocked(e.node.ConfirmDead(id))
}

// Acting reports whether this master may restart something right now. It
// first feeds the node every tick that has passed, so a master that was
// paused does not act on a lease that ran out while it slept.
func (e *Elector) Acting() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.catchUpLocked()
	return e.state.Acting && e.fatal == nil
}

// State is the node's state after every tick that has passed.
func (e *Elector) State() election.State {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.catchUpLocked()
	return e.state
}

// catchUpLocked feeds the ticks the monotonic clock says have passed.
func (e *Elector) catchUpLocked() {
	due := int64(e.cfg.Now().Sub(e.start) / e.cfg.Tick)
	for e.ticks < due && e.fatal == nil {
		e.ticks++
		e.applyAtLocked(e.node.Tick(), e.start.Add(time.Duration(e.ticks)*e.cfg.Tick))
	}
}

// applyLocked carries out an Output in the order the election needs:
// persist, then state, then send.
func (e *Elector) applyLocked(out election.Output) { e.applyAtLocked(out, time.Time{}) }

// applyAtLocked is applyLocked for the Output of the tick due at tick (zero:
// not a tick's).
func (e *Elector) applyAtLocked(out election.Output, tick time.Time) {
	if e.fatal != nil {
		return
	}
	if out.Persist != nil {
		if err := e.cfg.Terms.Save(*out.Persist); err != nil {
			e.fatal = fmt.Errorf("persist term %d: %w", *out.Persist, err)
			e.log.Error("cannot persist the term; stopping", "error", e.fatal)
			e.failMu.Do(func() { close(e.failed) })
			return
		}
	}
	e.setStateLocked(out.State, tick)
	for _, m := range out.Send {
		q, ok := e.queues[m.To]
		if !ok {
			continue
		}
		e.unsent.Add(1)
		select {
		case q <- m:
		default: // the peer is slow or gone; the algorithm repeats itself
			e.unsent.Add(-1)
		}
	}
}

// setStateLocked logs every change. The "acting started" and "acting
// stopped" lines are what the election chaos checker reads (as JSON, with
// the keys id, term, role and leader). The role is logged by name: hclog's
// text format names it anyway, its JSON format would write its number.
//
// Acting that a tick ended (a lease run out) stopped when that tick was
// due, however late the ticker or the next question fed it: Acting feeds
// every due tick before it answers, so it answered false from then on.
// That moment goes on the line as "stopped-at" (RFC 3339, UTC): the line
// itself may be written much later by a process starved of CPU, and the
// checker would otherwise see this master act after its successor began.
func (e *Elector) setStateLocked(s election.State, tick time.Time) {
	old := e.state
	e.state = s
	if old == s {
		return
	}
	if old.Acting && (!s.Acting || s.Term != old.Term) {
		kv := []any{"id", e.cfg.Election.Self, "term", old.Term, "role", s.Role.String()}
		if !tick.IsZero() {
			kv = append(kv, StoppedAtKey, tick.UTC().Format(time.RFC3339Nano))
		}
		e.log.Info("acting stopped", kv...)
	}
	if old.Role != s.Role || old.Leader != s.Leader || old.Term != s.Term {
		e.log.Info("election state", "id", e.cfg.Election.Self, "role", s.Role.String(), "leader", s.Leader, "term", s.Term)
	}
	if s.Acting && (!old.Acting || s.Term != old.Term) {
		e.log.Info("acting started", "id", e.cfg.Election.Self, "term", s.Term)
	}
}

// sender delivers the queued messages for one peer, one at a time.
func (e *Elector) sender(ctx context.Context, to election.ID, q chan election.Message) {
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-q:
			sctx, cancel := context.WithTimeout(ctx, 2*e.cfg.Tick)
			err := e.cfg.Send(sctx, m)
			cancel()
			e.unsent.Add(-1)
			switch {
			case err != nil && !failing:
				failing = true
				e.log.Debug("election message not delivered", "to", to, "kind", m.Kind.String(), "error", err)
			case err == nil && failing:
				failing = false
				e.log.Debug("election messages delivered again", "to", to)
			}
		}
	}
}
