package testkit

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// bufSize is each in-memory connection's buffer in either direction.
const bufSize = 1 << 20

// BufNet is an in-memory network for the gRPC servers and clients of a
// test (google.golang.org/grpc/test/bufconn): no port, no TCP, nothing
// another test on the machine can reach or take. Servers listen under
// addresses the test chooses; clients dial them through Conn or
// DialOptions, with plain (insecure) credentials and a reconnect backoff
// of milliseconds. An address may be listened on again once its listener
// is closed, as a restarted process comes back at its address, and Cut
// breaks every connection open, as a failing network does. Every listener
// and connection is closed by t.Cleanup.
//
// A test that needs real TCP or TLS (a handshake, a port, a proxy between
// processes) has no use for it.
type BufNet struct {
	t testing.TB

	mu        sync.Mutex
	listeners map[string]*bufListener
	clients   map[string]*grpc.ClientConn
	open      map[net.Conn]bool // the client ends of the connections dialled
}

// NewBufNet returns an empty in-memory network, torn down with t.
func NewBufNet(t testing.TB) *BufNet {
	n := &BufNet{t: t, listeners: map[string]*bufListener{}, clients: map[string]*grpc.ClientConn{}, open: map[net.Conn]bool{}}
	t.Cleanup(n.close)
	return n
}

// BufListener is an in-memory listener for one gRPC server under test and
// a function giving a client connection to it (the same one on every
// call), both closed by t.Cleanup: BufNet for a test with one server.
func BufListener(t testing.TB) (net.Listener, func() *grpc.ClientConn) {
	n := NewBufNet(t)
	const addr = "bufnet"
	return n.Listen(addr), func() *grpc.ClientConn { return n.Conn(addr) }
}

// Listen returns a listener at addr. A listener still open at addr fails
// the test: close it (stop its server) first.
func (n *BufNet) Listen(addr string) net.Listener {
	n.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if l, ok := n.listeners[addr]; ok {
		select {
		case <-l.closed:
		default:
			n.t.Fatalf("testkit.BufNet: %s is already listened on", addr)
		}
	}
	l := &bufListener{Listener: bufconn.Listen(bufSize), closed: make(chan struct{})}
	n.listeners[addr] = l
	return l
}

// bufListener says when it is closed, so that its address may be listened
// on again.
type bufListener struct {
	*bufconn.Listener
	once   sync.Once
	closed chan struct{}
}

func (l *bufListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// dial connects to the listener at addr, as it is at the time of the
// dial: a client reconnecting after a restart reaches the new listener.
func (n *BufNet) dial(ctx context.Context, addr string) (net.Conn, error) {
	n.mu.Lock()
	l, ok := n.listeners[addr]
	n.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("testkit.BufNet: nothing listens on %s", addr)
	}
	c, err := l.DialContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("testkit.BufNet: dial %s: %w", addr, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.open[c] = true
	return &trackedConn{Conn: c, net: n}, nil
}

// trackedConn forgets itself on Close, so that Cut counts only open ones.
type trackedConn struct {
	net.Conn
	net  *BufNet
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.net.mu.Lock()
		delete(c.net.open, c.Conn)
		c.net.mu.Unlock()
	})
	return c.Conn.Close()
}

// DialOptions are what a gRPC client needs to reach the network's
// listeners: a target "passthrough:///ADDR" (or plain "ADDR") reaches the
// listener at ADDR.
func (n *BufNet) DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithContextDialer(n.dial),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 10 * time.Millisecond, Multiplier: 1.6, MaxDelay: 200 * time.Millisecond},
			MinConnectTimeout: time.Second,
		}),
	}
}

// Conn returns a client connection to addr, one per address, closed by
// t.Cleanup. It connects lazily, so addr need not be listened on yet.
func (n *BufNet) Conn(addr string) *grpc.ClientConn {
	n.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if c, ok := n.clients[addr]; ok {
		return c
	}
	c, err := grpc.NewClient("passthrough:///"+addr, n.DialOptions()...)
	if err != nil {
		n.t.Fatalf("testkit.BufNet: client of %s: %v", addr, err)
	}
	n.clients[addr] = c
	return c
}

// Cut closes every connection open on the network and returns how many;
// new ones are still made. The streams on them break, as on a network
// failure.
func (n *BufNet) Cut() int {
	n.mu.Lock()
	conns := make([]net.Conn, 0, len(n.open))
	for c := range n.open {
		conns = append(conns, c)
	}
	clear(n.open)
	n.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	return len(conns)
}

func (n *BufNet) close() {
	n.mu.Lock()
	clients, listeners := n.clients, n.listeners
	n.clients, n.listeners = map[string]*grpc.ClientConn{}, map[string]*bufListener{}
	n.mu.Unlock()
	for _, c := range clients {
		_ = c.Close()
	}
	for _, l := range listeners {
		_ = l.Close()
	}
}
