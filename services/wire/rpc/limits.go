package rpc

import (
	"context"
	"flag"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc/peer"

	"github.com/wololo/wololo/services/wire/pki"
)

// The defaults of Limits.
const (
	// DefaultMaxConnsPerAddr: 64 connections per peer address and caller.
	DefaultMaxConnsPerAddr = 64
	// DefaultMaxStreamsPerAddr: 256 calls at once per peer address and
	// caller; a client running 16 jobs holds about 64 (two uploads, a
	// watch and a download each).
	DefaultMaxStreamsPerAddr = 256
	// DefaultFirstFrame: a connection's handshake, and a stream's first
	// message, come within 10 s or it is ended.
	DefaultFirstFrame = 10 * time.Second
)

// Limits bound what one peer address may hold of a server (see the package
// doc, "Floods"). Zero fields take the defaults.
type Limits struct {
	// MaxConnsPerAddr caps the connections one caller holds from one peer
	// address (--max-conns-per-addr), and the connections one address
	// holds that are still in their handshake.
	MaxConnsPerAddr int
	// MaxStreamsPerAddr caps the calls (streams, unary calls) one caller
	// has open at once from one peer address (--max-streams-per-addr).
	MaxStreamsPerAddr int
	// FirstFrame ends a connection whose handshake, or a stream whose first
	// message, takes longer (--first-frame-timeout).
	FirstFrame time.Duration
}

// WithDefaults fills the zero fields.
func (l Limits) WithDefaults() Limits {
	if l.MaxConnsPerAddr == 0 {
		l.MaxConnsPerAddr = DefaultMaxConnsPerAddr
	}
	if l.MaxStreamsPerAddr == 0 {
		l.MaxStreamsPerAddr = DefaultMaxStreamsPerAddr
	}
	if l.FirstFrame == 0 {
		l.FirstFrame = DefaultFirstFrame
	}
	return l
}

// Validate checks that no limit is negative.
func (l Limits) Validate() error {
	if l.MaxConnsPerAddr < 0 || l.MaxStreamsPerAddr < 0 || l.FirstFrame < 0 {
		return fmt.Errorf("rpc limits: --max-conns-per-addr %d, --max-streams-per-addr %d and --first-frame-timeout %s must not be negative",
			l.MaxConnsPerAddr, l.MaxStreamsPerAddr, l.FirstFrame)
	}
	return nil
}

// RegisterFlags adds the flags of the limits to fs, writing into l.
func (l *Limits) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&l.MaxConnsPerAddr, "max-conns-per-addr", 0, fmt.Sprintf("connections one caller (no certificate, or one client) holds from one peer address, and handshakes one address holds open; the deployment's own processes are not counted (default %d)", DefaultMaxConnsPerAddr))
	fs.IntVar(&l.MaxStreamsPerAddr, "max-streams-per-addr", 0, fmt.Sprintf("calls one caller (no certificate, or one client) has open at once from one peer address; more are refused (ResourceExhausted); the deployment's own processes are not counted (default %d)", DefaultMaxStreamsPerAddr))
	fs.DurationVar(&l.FirstFrame, "first-frame-timeout", 0, fmt.Sprintf("end a connection whose TLS handshake, or a stream whose first message, has not come within this long (DeadlineExceeded) (default %s)", DefaultFirstFrame))
}

// caller is who a connection or a call counts as under the per-address
// caps: one peer address and, within it, the client's certificate, or none.
type caller struct {
	addr string
	// who is the verified identity, or "" for a peer without a
	// certificate.
	who string
}

func (c caller) String() string {
	if c.who == "" {
		return "no certificate at " + c.addr
	}
	return c.who + " at " + c.addr
}

// callerOf is who a peer at addr with a verified identity (known) counts
// as; exempt for the deployment's own processes (instances, masters) and
// its operator, which the caps do not count: their connections and calls
// are few, bounded by the topology, and a flood from their address must
// not cut the masters' health checks and Status off.
func callerOf(addr string, id pki.Identity, known bool) (c caller, exempt bool) {
	if !known {
		return caller{addr: addr}, false
	}
	switch id.Kind {
	case pki.Instance, pki.Master, pki.Operator:
		exempt = true
	}
	return caller{addr: addr, who: id.String()}, exempt
}

// peerOf is callerOf a call's peer.
func peerOf(ctx context.Context) (c caller, exempt bool) {
	var addr string
	if p, ok := peer.FromContext(ctx); ok {
		addr = hostOf(p.Addr)
	}
	id, known := pki.Peer(ctx)
	return callerOf(addr, id, known)
}

// hostOf is the host of a peer's address (its IP, without the port, which
// changes with every connection).
func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// keyedCounter counts what each key holds, up to max per key. It keeps no
// entry for a key that holds nothing, so its size is what is held. Not
// safe for concurrent use.
type keyedCounter[K comparable] struct {
	max int
	n   map[K]int
}

func newKeyedCounter[K comparable](max int) *keyedCounter[K] {
	return &keyedCounter[K]{max: max, n: map[K]int{}}
}

// acquire takes one for k: false, and nothing taken, if k holds max.
func (c *keyedCounter[K]) acquire(k K) bool {
	if c.n[k] >= c.max {
		return false
	}
	c.n[k]++
	return true
}

// release gives one of k's back.
func (c *keyedCounter[K]) release(k K) {
	switch c.n[k] {
	case 0:
	case 1:
		delete(c.n, k)
	default:
		c.n[k]--
	}
}

// held is what k holds.
func (c *keyedCounter[K]) held(k K) int { return c.n[k] }
