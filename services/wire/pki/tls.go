package pki

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// Credentials are a process's certificate, the CA it trusts and, when
// loaded from a directory, the CA's revocation list it checks every peer
// against.
type Credentials struct {
	Self    Identity
	roots   *x509.CertPool
	cas     []*x509.Certificate // the CA file's certificates, whose keys check tokens
	cert    tls.Certificate
	revoked *Revocations // nil: none checked
}

// ErrRevoked is what a peer whose certificate the CA revoked gets.
var ErrRevoked = errors.New("the certificate is revoked")

// NewCredentials reads a CA certificate, a certificate and its key (PEM),
// and checks that the CA vouches for the certificate.
func NewCredentials(caPEM, certPEM, keyPEM []byte) (*Credentials, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate in the CA file")
	}
	cas := parseCerts(caPEM)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("certificate and key: %w", err)
	}
	leaf := cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, err
		}
		cert.Leaf = leaf
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, fmt.Errorf("the certificate is not the CA's: %w", err)
	}
	id, err := IdentityOf(leaf)
	if err != nil {
		return nil, err
	}
	return &Credentials{Self: id, roots: roots, cas: cas, cert: cert}, nil
}

// Leaf is the credentials' own certificate.
func (c *Credentials) Leaf() *x509.Certificate { return c.cert.Leaf }

// CheckRevocations makes every TLS config of c (both sides) and CheckPeer
// refuse a peer whose certificate r lists.
func (c *Credentials) CheckRevocations(r *Revocations) { c.revoked = r }

// ReloadRevocations reads c's revocation list again now if it changed
// (Revocations.Reload), and reports whether it revokes more than before;
// false without a list. A server calls it every ReloadEvery, so that the
// calls of a certificate revoked meanwhile end (OnRevocation) even when
// no call asks; a test calls it to take a revocation in at once.
func (c *Credentials) ReloadRevocations() bool {
	if c.revoked == nil {
		return false
	}
	return c.revoked.Reload()
}

// OnRevocation has f called after every revocation list read anew that
// revokes a certificate the last did not (Revocations.OnChange); stop
// ends that. Without a list it is never called.
func (c *Credentials) OnRevocation(f func()) (stop func()) {
	if c.revoked == nil {
		return func() {}
	}
	return c.revoked.OnChange(f)
}

// SetLog is where c's revocation list says it reloaded, or could not.
func (c *Credentials) SetLog(log hclog.Logger) {
	if c.revoked != nil {
		c.revoked.SetLog(log)
	}
}

// IdentityOf reads the identity a certificate carries.
func IdentityOf(cert *x509.Certificate) (Identity, error) {
	if len(cert.Subject.OrganizationalUnit) != 1 {
		return Identity{}, fmt.Errorf("certificate %q carries no kind", cert.Subject.CommonName)
	}
	id := Identity{Kind: Kind(cert.Subject.OrganizationalUnit[0]), Name: cert.Subject.CommonName}
	return id, id.Validate()
}

// ServerTLS is the server side of both planes: TLS 1.3 with this
// certificate, and a client certificate verified against the CA (and the
// revocation list) whenever one is presented (one from elsewhere, or
// revoked, fails the handshake). A missing one does not fail the
// handshake: the server's policy then refuses every call but health with
// Unauthenticated, a status a client can act on, where a handshake alert
// would reach it as Unavailable, "try again".
func (c *Credentials) ServerTLS() *tls.Config {
	return c.serverTLS(false)
}

// PublicServerTLS is ServerTLS for the gateway's public plane, but for
// one thing: a revoked client's certificate passes the handshake, so that
// its calls are refused with PermissionDenied saying the certificate was
// revoked (services/wire/rpc checks CheckPeer on every call), where a
// failed handshake reaches the client as Unavailable, "is the gateway
// running?", and is retried. A client is counted against the per-address
// caps like any client, and is let through nothing but health. Any other
// kind's revoked certificate (an instance's, a master's, the operator's:
// exempt from those caps once verified) still fails the handshake.
func (c *Credentials) PublicServerTLS() *tls.Config {
	return c.serverTLS(true)
}

func (c *Credentials) serverTLS(tellClients bool) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{c.cert}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: c.roots,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return nil
			}
			err := c.checkRevoked(cs.PeerCertificates[0])
			if err != nil && tellClients {
				if id, ierr := IdentityOf(cs.PeerCertificates[0]); ierr == nil && id.Kind == Client {
					return nil
				}
			}
			return err
		},
	}
}

// ClientTLS is the client side for dialing the process named name (an
// instance or a master, by its name): this certificate presented, the
// server's verified against the CA under name, and then its identity: only
// the certificate of name itself, of a kind that serves, is taken, so that
// a name another certificate also carries can never let that one pass.
func (c *Credentials) ClientTLS(name string) *tls.Config {
	return c.dial(name, func(id Identity, _ *x509.Certificate) error {
		if id.Name != name || !id.Kind.serves() {
			return fmt.Errorf("the server is %s, not %q", id, name)
		}
		return nil
	})
}

// GatewayTLS is the client side for dialing the gateway's public port
// under host (the host of the address: "localhost", an IP, its public
// name): the server's certificate verified against the CA under host, and
// then as the gateway's: an instance's that carries GatewayRole. Any other
// process's certificate of the same CA is refused, so that no shard or
// master can pose as the gateway and collect uploads.
func (c *Credentials) GatewayTLS(host string) *tls.Config {
	return c.dial(host, func(id Identity, leaf *x509.Certificate) error {
		if id.Kind != Instance || !IsGateway(leaf) {
			return fmt.Errorf("the server at %s is %s, not the gateway (its certificate lacks the gateway's role)", host, id)
		}
		return nil
	})
}

// IsGateway says whether cert carries GatewayRole.
func IsGateway(cert *x509.Certificate) bool {
	for _, u := range cert.URIs {
		if u.String() == GatewayRole.String() {
			return true
		}
	}
	return false
}

// dial is a client config verifying the server under serverName (Go's
// own chain and name check) and then by check, and the revocation list.
func (c *Credentials) dial(serverName string, check func(Identity, *x509.Certificate) error) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{c.cert}, RootCAs: c.roots, ServerName: serverName,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
				return errors.New("tls: the server's certificate was not verified")
			}
			leaf := cs.VerifiedChains[0][0]
			id, err := IdentityOf(leaf)
			if err != nil {
				return fmt.Errorf("tls: the server's certificate: %w", err)
			}
			if err := check(id, leaf); err != nil {
				return fmt.Errorf("tls: %w", err)
			}
			return c.checkRevoked(leaf)
		},
	}
}

func (c *Credentials) checkRevoked(cert *x509.Certificate) error {
	if c.revoked != nil && c.revoked.Revoked(cert) {
		return fmt.Errorf("tls: %q (serial %s): %w", cert.Subject.CommonName, cert.SerialNumber.Text(16), ErrRevoked)
	}
	return nil
}

// PeerLeaf is the certificate a call's peer presented and the server
// verified, if any: what CheckPeer checks.
func PeerLeaf(ctx context.Context) (*x509.Certificate, bool) { return peerLeaf(ctx) }

// RevokedCert reports whether cert is on c's revocation list (false
// without one): CheckPeer for a certificate already at hand.
func (c *Credentials) RevokedCert(cert *x509.Certificate) bool {
	return c.revoked != nil && c.revoked.Revoked(cert)
}

// CheckPeer fails with ErrRevoked when the certificate a call's peer
// presented is on the revocation list: the handshake checks it once per
// connection, CheckPeer on every call, so that a connection opened before
// the revocation (or a revoked client's, PublicServerTLS) gets no call
// through.
func (c *Credentials) CheckPeer(ctx context.Context) error {
	if leaf, ok := peerLeaf(ctx); ok {
		return c.checkRevoked(leaf)
	}
	return nil
}

// Peer returns the verified identity of a call's peer, if it presented a
// certificate the server verified.
func Peer(ctx context.Context) (Identity, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return Identity{}, false
	}
	return AuthIdentity(p.AuthInfo)
}

// AuthIdentity is Peer for what a server handshake returned: the verified
// identity, if the peer presented a certificate the server verified.
func AuthIdentity(auth credentials.AuthInfo) (Identity, bool) {
	leaf, ok := authLeaf(auth)
	if !ok {
		return Identity{}, false
	}
	id, err := IdentityOf(leaf)
	if err != nil {
		return Identity{}, false
	}
	return id, true
}

func peerLeaf(ctx context.Context) (*x509.Certificate, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil, false
	}
	return authLeaf(p.AuthInfo)
}

// authLeaf is the verified certificate of a handshake's peer.
func authLeaf(auth credentials.AuthInfo) (*x509.Certificate, bool) {
	info, ok := auth.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return nil, false
	}
	return info.State.VerifiedChains[0][0], true
}
