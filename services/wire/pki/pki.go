// Package pki is the deployment's own certificate authority and the
// identities it vouches for. Every Wololo process holds a certificate from
// the deployment's CA; its identity is the certificate's subject: the common
// name is the name (an instance such as "shard-1", a master "master-2",
// a client "alice") and the one organizational unit is the kind (Instance,
// Master, Client, Operator). The kind keeps a client's certificate named
// "shard-1" from passing as that instance.
//
// It makes the CA and certificates with Go's own crypto (ECDSA P-256), keeps
// them as PEM files (files.go), builds the tls.Configs of both planes and
// of their clients (tls.go), reads the verified identity of a call's peer
// from its context, keeps the CA's revocation list (revoke.go), and signs
// and checks bearer tokens, the same identities for HTTP callers that
// present no certificate (token.go, NAME.token 0600 beside NAME.pem).
//
// # Who may serve as what
//
// A client dialing a process must learn that it reached the process it
// meant, not merely some holder of the CA's certificates: a shard's key
// must not pose as the gateway and collect uploads, nor the gateway's as a
// shard. So a dialer checks the server's identity itself, not only a host
// name in its certificate (tls.go):
//
//   - a process dialing another by its name (instances, masters, an
//     operator's Status call) accepts only the certificate whose common
//     name is that name, of kind instance or master;
//   - a client dialing the gateway's public port accepts only an instance
//     certificate that carries GatewayRole, a URI name the CA puts on the
//     gateway instance's certificate and on no other.
//
// The gateway is the one process dialed by a host name ("localhost", its
// public name), so only its certificate carries the loopback names and the
// extra hosts of `wololo certs --host`; every other server certificate
// names only its holder. Why a role in the certificate rather than the
// client checking the gateway's instance name against the topology: a
// client does not load the topology (a deployment may name its gateway
// stage as it likes), while the CA that issues the gateway's certificate
// does.
//
// It decides who someone is, never what they may do: the policies live with
// the services (services/wire/rpc for a plane's callers, transport.Server,
// through rpc.PeerInstance, for a stream's claims, the masters for election
// messages, the gateway for job ownership). It imports nothing of Wololo.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Kind says what an identity is.
type Kind string

// The kinds of identity.
const (
	// Instance is a gateway or shard process.
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

// serves: instances and masters are servers; clients and operators only
// dial.
func (k Kind) serves() bool { return k == Instance || k == Master }

// GatewayRole is the URI subject alternative name only the gateway
// instance's certificate carries (Spec.Gateway), and what a client dialing
// the public port checks (Credentials.GatewayTLS).
var GatewayRole = &url.URL{Scheme: "wololo", Host: "role", Path: "/gateway"}

// loopback are the names a process on the same host dials the gateway
// under.
var loopback = []string{"localhost", "127.0.0.1", "::1"}

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
	// dir holds the CA's certificate and revocation list, keyDir its key
	// and its index of issued certificates; both "" for a CA kept in
	// memory (no index, no list).
	dir, keyDir string
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

// Spec is what a certificate is for: whose it is and, for the gateway, the
// role and names it is dialed under.
type Spec struct {
	ID Identity
	// Gateway marks the gateway instance's certificate: it alone carries
	// GatewayRole, the loopback names and Hosts (see the package doc).
	Gateway bool
	// Hosts are further names or IPs the gateway is dialed under (its
	// public host name); only with Gateway.
	Hosts []string
}

// validate checks the identity and that only the gateway has hosts.
func (s Spec) validate() error {
	if err := s.ID.Validate(); err != nil {
		return err
	}
	if s.Gateway && s.ID.Kind != Instance {
		return fmt.Errorf("%s: only an instance can be the gateway", s.ID)
	}
	if len(s.Hosts) > 0 && !s.Gateway {
		return fmt.Errorf("%s: extra host names go on the gateway's certificate only", s.ID)
	}
	return nil
}

// names are the subject alternative names of s's certificate, in the
// order Issue writes them: a server's own name (what its peers dial it
// under), and for the gateway the loopback names, the hosts and the role.
func (s Spec) names() (dns []string, ips []net.IP, uris []*url.URL) {
	if !s.ID.Kind.serves() {
		return nil, nil, nil
	}
	hosts := []string{s.ID.Name}
	if s.Gateway {
		hosts = append(append(hosts, loopback...), s.Hosts...)
		uris = []*url.URL{GatewayRole}
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !slices.ContainsFunc(ips, ip.Equal) {
				ips = append(ips, ip)
			}
		} else if h != "" && !slices.Contains(dns, h) {
			dns = append(dns, h)
		}
	}
	return dns, ips, uris
}

// matches: cert carries exactly the names s asks for (Ensure reissues a
// certificate whose names differ: a new --host, a gateway moved).
func (s Spec) matches(cert *x509.Certificate) bool {
	dns, ips, uris := s.names()
	sameIPs := slices.EqualFunc(ips, cert.IPAddresses, func(a, b net.IP) bool { return a.Equal(b) })
	sameURIs := slices.EqualFunc(uris, cert.URIs, func(a, b *url.URL) bool { return a.String() == b.String() })
	return slices.Equal(dns, cert.DNSNames) && sameIPs && sameURIs
}

// Issued is a certificate and its key, in PEM, and the certificate parsed.
type Issued struct {
	CertPEM, KeyPEM []byte
	Cert            *x509.Certificate
}

// Issue makes a certificate for id alone: Spec{ID: id}.
func (ca *CA) Issue(id Identity) (Issued, error) { return ca.IssueSpec(Spec{ID: id}) }

// IssueSpec makes a certificate as s says. Instances and masters get
// server and client use, clients and operators client use only; the
// subject alternative names are Spec.names.
func (ca *CA) IssueSpec(s Spec) (Issued, error) {
	if err := s.validate(); err != nil {
		return Issued{}, err
	}
	id := s.ID
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
	if id.Kind.serves() {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		tmpl.DNSNames, tmpl.IPAddresses, tmpl.URIs = s.names()
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return Issued{}, fmt.Errorf("certificate for %s: %w", id, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Issued{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Issued{}, err
	}
	return Issued{CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("EC PRIVATE KEY", keyDER), Cert: cert}, nil
}

// Credentials builds what a process holding a certificate of id alone
// needs.
func (ca *CA) Credentials(id Identity) (*Credentials, error) {
	return ca.CredentialsFor(Spec{ID: id})
}

// CredentialsFor builds what a process holding a certificate as s says
// needs (the gateway: Spec{Gateway: true}).
func (ca *CA) CredentialsFor(s Spec) (*Credentials, error) {
	is, err := ca.IssueSpec(s)
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
