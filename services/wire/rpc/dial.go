package rpc

import (
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/keepalive"

	"github.com/wololo/wololo/services/wire/pki"
)

// Keepalive settings: a dead peer surfaces as a stream error within about
// KeepaliveTime+KeepaliveTimeout instead of a hang.
const (
	KeepaliveTime    = 5 * time.Second
	KeepaliveTimeout = 3 * time.Second
)

// RecoveringService is the gRPC health service name that a process still
// recovering its state reports SERVING while its overall health ("") is
// NOT_SERVING (Options.Recovering), so that a caller can tell a process
// that is loading from one that is down: the client, the masters and the
// node check it.
const RecoveringService = "wololo.recovering"

// Resolver maps an instance name to a dialable address.
type Resolver func(instance string) (string, error)

// StaticResolver resolves from a fixed map.
func StaticResolver(addrs map[string]string) Resolver {
	return func(instance string) (string, error) {
		a, ok := addrs[instance]
		if !ok {
			return "", fmt.Errorf("no address for instance %q", instance)
		}
		return a, nil
	}
}

// NewClient connects to addr ("host:port") with DialOptions. It dials
// through the passthrough resolver, so every (re)connect looks the host
// name up again: a restarted container may come back with another IP, and
// gRPC's own DNS resolver would keep the old one for up to 30 s.
// A "unix://PATH" address is a Unix socket (the local ProcessService,
// protected by its file mode), always plain.
//
// With tlsConfig (pki.Credentials.ClientTLS) the connection is TLS,
// presenting the config's certificate; nil dials plain TCP (--insecure).
func NewClient(addr string, tlsConfig *tls.Config) (*grpc.ClientConn, error) {
	if strings.HasPrefix(addr, "unix:") {
		return grpc.NewClient(addr, DialOptions(nil)...)
	}
	return grpc.NewClient("passthrough:///"+addr, DialOptions(tlsConfig)...)
}

// DialOptions are the client options every Wololo connection uses: TLS
// (nil: plain), keepalive, and a short reconnect backoff so that a
// restarted peer is found again within a second or two.
func DialOptions(tlsConfig *tls.Config) []grpc.DialOption {
	creds := insecure.NewCredentials()
	if tlsConfig != nil {
		creds = TLSCredentials(tlsConfig)
	}
	return []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithWriteBufferSize(writeBufferSize),
		experimental.WithBufferPool(dirtyPool),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: KeepaliveTime, Timeout: KeepaliveTimeout, PermitWithoutStream: true}),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 2 * time.Second,
		}),
	}
}

// TLSCredentials are gRPC's TLS credentials of config, with the records of
// each write sent in one system call (coalescedTLS): what every Wololo
// connection, client or server side, uses.
func TLSCredentials(config *tls.Config) credentials.TransportCredentials {
	return coalescedTLS{credentials.NewTLS(config)}
}

// ServerOptions are the server options matching DialOptions (without the
// credentials: grpc.Creds(TLSCredentials(...)) where there are some).
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.WriteBufferSize(writeBufferSize),
		experimental.BufferPool(dirtyPool),
		// Stop waits for handlers to return, so none writes to a closed store.
		grpc.WaitForHandlers(true),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: KeepaliveTime, Timeout: KeepaliveTimeout}),
	}
}

// Pool shares one client connection per peer address.
type Pool struct {
	resolve Resolver
	creds   *pki.Credentials
	mu      sync.Mutex
	conns   map[string]*grpc.ClientConn
}

// NewPool returns a pool that resolves instances with resolve and dials
// them with creds: TLS presenting creds' certificate, each peer's verified
// under its instance name, so that a connection reaches the instance it is
// for and no other. Nil creds dial plain TCP (--insecure).
func NewPool(resolve Resolver, creds *pki.Credentials) *Pool {
	return &Pool{resolve: resolve, creds: creds, conns: map[string]*grpc.ClientConn{}}
}

// TLSFor is the client TLS config for dialing instance with creds; nil
// without creds.
func TLSFor(creds *pki.Credentials, instance string) *tls.Config {
	if creds == nil {
		return nil
	}
	return creds.ClientTLS(instance)
}

// Resolve returns an instance's current address.
func (p *Pool) Resolve(instance string) (string, error) { return p.resolve(instance) }

// Conn returns the connection to an instance and the address it reaches.
func (p *Pool) Conn(instance string) (*grpc.ClientConn, string, error) {
	addr, err := p.resolve(instance)
	if err != nil {
		return nil, "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := instance + "@" + addr
	if c, ok := p.conns[key]; ok {
		return c, addr, nil
	}
	c, err := NewClient(addr, TLSFor(p.creds, instance))
	if err != nil {
		return nil, "", fmt.Errorf("dial %s at %s: %w", instance, addr, err)
	}
	p.conns[key] = c
	return c, addr, nil
}

// Close closes every connection.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, c := range p.conns {
		_ = c.Close()
		delete(p.conns, addr)
	}
}
