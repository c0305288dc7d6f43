// Package pki is the deployment's own certificate authority and the
// identities it vouches for. Every Wololo process holds a certificate from
// the deployment's CA; its identity is the certificate's subject: the common
// name is the name (an instance such as "q3-joiner-1", a master "master-2",
// a client "alice") and the one organizational unit is the kind (Instance,
// Master, Client, Operator). The kind keeps a client's certificate named
// "q3-joiner-1" from passing as that instance.
//
// It makes the CA and certificates with Go's own crypto (ECDSA P-256), keeps
// them as PEM files in one directory (ca.pem, ca.key, NAME.pem, NAME.key,
// keys 0600 in a 0700 directory), builds the tls.Configs of both planes
// (TLS 1.3, client certificates verified against the CA) and reads the
// verified identity of a call's peer from its context.
//
// It decides who someone is, never what they may do: the policies live with
// the services (rpcserver for a plane's callers, transport.Server for a
// stream's claims, the masters for election messages, the gateway for job
// ownership). It imports nothing of Wololo.
package pki

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// Kind says what an identity is.
type Kind string

// The kinds of identity.
const (
	// Instance is a process of the graph (gateway, workers).
	Instance Kind = "instance"
	// Master is a master ("master-N").
	Master Kind = "master"
	// Client is a user of the JobService.
	Client Kind = "client"
	// Operator may read Status and reflection on the internal plane
	// (grpcurl), and nothing else.
	Operator Kind = "operator"
)

// Identity is who a certificate says its holder is.
type Identity struct {
	Kind Kind
	Name string
}

func (id Identity) String() string { return string(id.Kind) + " " + strconv.Quote(id.Name) }

// validName is the charset of every identity name: it is also a file name.
var validName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,62}$`)

// Validate checks the kind and that the name is usable as a file name.
func (id Identity) Validate() error {
	switch id.Kind {
	case Instance, Master, Client, Operator:
	default:
		return fmt.Errorf("identity %q: unknown kind %q", id.Name, id.Kind)
	}
	if !validName.MatchString(id.Name) || id.Name == CAName {
		return fmt.Errorf("identity name %q: want 1-63 of [a-zA-Z0-9._-], starting with a letter or digit, not %q", id.Name, CAName)
	}
	return nil
}

// CAName is the file stem of the CA's certificate and key.
const CAName = "ca"

// Validity of what NewCA and Issue make.
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	CertValidity = 2 * 365 * 24 * time.Hour
)

// CA is a certificate authority that can issue.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// NewCA makes a new self-signed CA.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ca key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name, Organization: []string{"Wololo"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(CAValidity),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("ca certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, key: key, pem: pemBlock("CERTIFICATE", der)}, nil
}

// PEM is the CA's certificate in PEM, what every process trusts.
func (ca *CA) PEM() []byte { return ca.pem }

// Issued is a certificate and its key, in PEM.
type Issued struct {
	CertPEM, KeyPEM []byte
}

// Issue makes a certificate for id. Instances and masters get server and
// client use, with the name itself, "localhost", the loopback addresses and
// the extra hosts (names or IPs) as subject alternative names; clients and
// operators get client use only.
func (ca *CA) Issue(id Identity, hosts ...string) (Issued, error) {
	if err := id.Validate(); err != nil {
		return Issued{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Issued{}, fmt.Errorf("key for %s: %w", id, err)
	}
	serial, err := newSerial()
	if err != nil {
		return Issued{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: id.Name, OrganizationalUnit: []string{string(id.Kind)}, Organization: []string{"Wololo"}},
		NotBefore:    now.Add(-time.Hour), NotAfter: now.Add(CertValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if id.Kind == Instance || id.Kind == Master {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		for _, h := range append([]string{id.Name, "localhost", "127.0.0.1", "::1"}, hosts...) {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else if h != "" {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return Issued{}, fmt.Errorf("certificate for %s: %w", id, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Issued{}, err
	}
	return Issued{CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("EC PRIVATE KEY", keyDER)}, nil
}

// Credentials builds what a process holding this certificate needs.
func (ca *CA) Credentials(id Identity, hosts ...string) (*Credentials, error) {
	is, err := ca.Issue(id, hosts...)
	if err != nil {
		return nil, err
	}
	return NewCredentials(ca.pem, is.CertPEM, is.KeyPEM)
}

func newSerial() (*big.Int, error) {
	s, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	return s, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// Credentials are a process's certificate and the CA it trusts.
type Credentials struct {
	Self  Identity
	roots *x509.CertPool
	cert  tls.Certificate
}

// NewCredentials reads a CA certificate, a certificate and its key (PEM),
// and checks that the CA vouches for the certificate.
func NewCredentials(caPEM, certPEM, keyPEM []byte) (*Credentials, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate in the CA file")
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("certificate and key: %w", err)
	}
	leaf := cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, err
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, fmt.Errorf("the certificate is not the CA's: %w", err)
	}
	id, err := IdentityOf(leaf)
	if err != nil {
		return nil, err
	}
	return &Credentials{Self: id, roots: roots, cert: cert}, nil
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
// certificate, and a client certificate verified against the CA whenever
// one is presented (one from elsewhere fails the handshake). A missing one
// does not fail the handshake: the server's policy then refuses every call
// but health with Unauthenticated, a status a client can act on, where a
// handshake alert would reach it as Unavailable, "try again".
func (c *Credentials) ServerTLS() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{c.cert}, ClientCAs: c.roots, ClientAuth: tls.VerifyClientCertIfGiven}
}

// ClientTLS is the client side: this certificate presented, the server's
// verified against the CA under serverName (an instance's name when dialing
// an instance; the host of the address for the gateway's public port).
func (c *Credentials) ClientTLS(serverName string) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{c.cert}, RootCAs: c.roots, ServerName: serverName}
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
	info, ok := auth.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return Identity{}, false
	}
	id, err := IdentityOf(info.State.VerifiedChains[0][0])
	if err != nil {
		return Identity{}, false
	}
	return id, true
}

// Files in a certificate directory.

// CertPath and KeyPath are where a name's certificate and key live in dir.
func CertPath(dir, name string) string { return filepath.Join(dir, name+".pem") }

// KeyPath: see CertPath.
func KeyPath(dir, name string) string { return filepath.Join(dir, name+".key") }

// Load reads the credentials of name from dir (ca.pem, NAME.pem, NAME.key).
func Load(dir, name string) (*Credentials, error) {
	caPEM, err := os.ReadFile(CertPath(dir, CAName))
	if err != nil {
		return nil, fmt.Errorf("tls: %w (make them with `wololo certs --dir %s`)", err, dir)
	}
	certPEM, err := os.ReadFile(CertPath(dir, name))
	if err != nil {
		return nil, fmt.Errorf("tls: %w (make them with `wololo certs --dir %s`)", err, dir)
	}
	keyPEM, err := os.ReadFile(KeyPath(dir, name))
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	c, err := NewCredentials(caPEM, certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tls: %s in %s: %w", name, dir, err)
	}
	return c, nil
}

// LoadCA reads the CA (ca.pem and ca.key) from dir.
func LoadCA(dir string) (*CA, error) {
	certPEM, err := os.ReadFile(CertPath(dir, CAName))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(KeyPath(dir, CAName))
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("ca in %s: not PEM", dir)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("ca certificate in %s: %w", dir, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("ca key in %s: %w", dir, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("%s is not a CA certificate", CertPath(dir, CAName))
	}
	return &CA{Cert: cert, key: key, pem: certPEM}, nil
}

// OpenCA loads the CA in dir, or makes and writes one if dir has none.
// It reports whether it made it.
func OpenCA(dir string) (*CA, bool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("certificate directory: %w", err)
	}
	ca, err := LoadCA(dir)
	if err == nil {
		return ca, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	if ca, err = NewCA("Wololo CA"); err != nil {
		return nil, false, err
	}
	keyDER, err := x509.MarshalECPrivateKey(ca.key)
	if err != nil {
		return nil, false, err
	}
	if err := writeFile(KeyPath(dir, CAName), pemBlock("EC PRIVATE KEY", keyDER), 0o600); err != nil {
		return nil, false, err
	}
	if err := writeFile(CertPath(dir, CAName), ca.pem, 0o644); err != nil {
		return nil, false, err
	}
	return ca, true, nil
}

// Ensure writes a certificate for id into dir unless a valid one of the
// CA's for the same identity is there already (valid for at least a month
// more). It reports whether it wrote one.
func (ca *CA) Ensure(dir string, id Identity, hosts ...string) (bool, error) {
	if c, err := Load(dir, id.Name); err == nil && c.Self == id && c.fresh(ca) {
		return false, nil
	}
	is, err := ca.Issue(id, hosts...)
	if err != nil {
		return false, err
	}
	if err := writeFile(KeyPath(dir, id.Name), is.KeyPEM, 0o600); err != nil {
		return false, err
	}
	return true, writeFile(CertPath(dir, id.Name), is.CertPEM, 0o644)
}

// fresh: issued by ca and valid for a month more.
func (c *Credentials) fresh(ca *CA) bool {
	leaf, err := x509.ParseCertificate(c.cert.Certificate[0])
	if err != nil || time.Until(leaf.NotAfter) < 30*24*time.Hour {
		return false
	}
	return leaf.CheckSignatureFrom(ca.Cert) == nil
}

// writeFile writes through a temporary file and a rename, so that a reader
// never sees half a key.
func writeFile(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
