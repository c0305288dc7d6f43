package rpc

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/credentials"

	"github.com/wololo/wololo/services/wire/pki"
)

// connTable is the bookkeeping of a listener's connections per peer
// address (see the package doc, "Floods"): a connection is pending from
// its accept until its handshake shows who it is, then counted under its
// caller (capped), or not at all for the deployment's own processes.
//
// Pending connections are capped per address too, but by closing the
// OLDEST pending one to make room rather than refusing the new one: a
// connection's peer is unknown until its handshake ends, so refusing new
// ones would let a peer that opens connections and never handshakes shut
// everyone else at its address out (on one host, 127.0.0.1: the masters
// and the clients), while a real handshake takes milliseconds and is
// through before the flood has opened max more. Not safe for concurrent
// use; C is a connection (comparable: the listener's, or a test's ints).
type connTable[C comparable] struct {
	max     int
	pending map[string][]C // per address, oldest first
	state   map[C]connState
	counted *keyedCounter[caller]
}

type connState struct {
	addr    string
	pending bool
	counted bool
	who     caller
}

func newConnTable[C comparable](max int) *connTable[C] {
	return &connTable[C]{max: max, pending: map[string][]C{}, state: map[C]connState{}, counted: newKeyedCounter[caller](max)}
}

// accept adds c, accepted from addr, as pending; if addr already had max
// pending, the oldest of them is evicted: it is no longer pending, its
// handshake will be refused, and the caller closes it.
func (t *connTable[C]) accept(addr string, c C) (evicted C, ok bool) {
	if q := t.pending[addr]; len(q) >= t.max {
		evicted, ok = q[0], true
		t.unpend(evicted)
	}
	t.pending[addr] = append(t.pending[addr], c)
	t.state[c] = connState{addr: addr, pending: true}
	return evicted, ok
}

// handshaken records that c's handshake showed who (exempt: a process of
// the deployment). False if c is to be closed instead: it was evicted
// while it handshook, or who already holds max connections.
func (t *connTable[C]) handshaken(c C, who caller, exempt bool) bool {
	st, ok := t.state[c]
	if !ok || !st.pending {
		return false
	}
	t.unpend(c)
	if exempt {
		return true
	}
	if !t.counted.acquire(who) {
		return false
	}
	t.state[c] = connState{addr: st.addr, counted: true, who: who}
	return true
}

// closed forgets c and gives back what it held.
func (t *connTable[C]) closed(c C) {
	st, ok := t.state[c]
	if !ok {
		return
	}
	if st.pending {
		t.unpend(c)
	}
	if st.counted {
		t.counted.release(st.who)
	}
	delete(t.state, c)
}

// unpend takes c out of its address's pending queue.
func (t *connTable[C]) unpend(c C) {
	st := t.state[c]
	q := t.pending[st.addr]
	for i, p := range q {
		if p == c {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(t.pending, st.addr)
	} else {
		t.pending[st.addr] = q
	}
	st.pending = false
	t.state[c] = st
}

// sizes is how many connections are pending and how many counted, for
// tests.
func (t *connTable[C]) sizes() (pending, counted int) {
	for _, q := range t.pending {
		pending += len(q)
	}
	for _, n := range t.counted.n {
		counted += n
	}
	return pending, counted
}

// connLimiter applies a connTable to a listener (limitedListener) and to
// the server's handshakes (limitedCreds).
type connLimiter struct {
	mu     sync.Mutex
	table  *connTable[*trackedConn]
	max    int
	report func(reason string, c caller, err error)
}

// The reasons a connection is refused, for the log and the metrics.
const (
	reasonTooMany         = "too-many-connections"
	reasonEvicted         = "handshake-evicted"
	reasonHandshakeFailed = "handshake-failed"
)

// limitedListener is a listener whose connections a connLimiter tracks.
type limitedListener struct {
	net.Listener
	l *connLimiter
}

// trackedConn is an accepted connection; closing it gives its place back.
type trackedConn struct {
	net.Conn
	l    *connLimiter
	addr string
	once sync.Once
	// evicted is set when the listener closed it in its handshake.
	evicted atomic.Bool
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.table.closed(c)
		c.l.mu.Unlock()
	})
	return err
}

func (l limitedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l.l, addr: hostOf(c.RemoteAddr())}
	l.l.mu.Lock()
	old, evicted := l.l.table.accept(tc.addr, tc)
	l.l.mu.Unlock()
	if evicted {
		old.evicted.Store(true)
		old.Close()
		l.l.report(reasonEvicted, caller{addr: old.addr}, fmt.Errorf("a connection from %s still in its handshake was closed: %d newer ones from that address came (--max-conns-per-addr)", old.addr, l.l.max))
	}
	return tc, nil
}

// limitedCreds are a server's transport credentials that, once a
// handshake on a trackedConn has shown who the peer is, count the
// connection under its caller or refuse it.
type limitedCreds struct {
	credentials.TransportCredentials
	l *connLimiter
}

func (c limitedCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ServerHandshake(raw)
	tc, tracked := raw.(*trackedConn)
	if !tracked {
		return conn, info, err
	}
	if err != nil {
		if !tc.evicted.Load() { // an eviction was reported as one
			c.l.report(reasonHandshakeFailed, caller{addr: tc.addr}, err)
		}
		return nil, nil, err
	}
	id, known := pki.AuthIdentity(info)
	who, exempt := callerOf(tc.addr, id, known)
	c.l.mu.Lock()
	ok := c.l.table.handshaken(tc, who, exempt)
	c.l.mu.Unlock()
	if !ok {
		conn.Close()
		if tc.evicted.Load() {
			return nil, nil, fmt.Errorf("connection from %s closed in its handshake for newer ones (--max-conns-per-addr)", tc.addr)
		}
		err := fmt.Errorf("more than %d connections of %s (--max-conns-per-addr)", c.l.max, who)
		c.l.report(reasonTooMany, who, err)
		return nil, nil, err
	}
	return conn, info, nil
}

func (c limitedCreds) Clone() credentials.TransportCredentials {
	return limitedCreds{c.TransportCredentials.Clone(), c.l}
}
