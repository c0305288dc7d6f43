package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/wire/pki"
)

// Reaching the gateway. gRPC retries every connection failure alike until
// the wait ends, which turns a typo into 30 silent seconds and exit 5
// ("try again"). So a client that cannot connect at once probes the
// address itself, with a plain dial and a TLS handshake that verifies
// nothing but reads what the server presents, and tells the failures
// apart:
//
//   - a malformed address is a usage error before anything is dialed
//     (CheckServer);
//   - a name that does not resolve, or a port where nothing listens, is
//     retried only for RefusedGrace (a gateway restarting refuses for a
//     moment), saying so on stderr; then an unknown host is a usage error
//     and a refused port ErrUnreachable;
//   - a server that answers but is not the gateway's public port (plain
//     HTTP such as an admin port, another process's certificate, another
//     CA's) is a usage error at once, naming what it is;
//   - anything else (no answer at all, a gateway still starting) is
//     waited for up to --connect-timeout, saying so once and then every
//     NoticeEvery.
//
// The probe sends nothing but a TLS ClientHello, and no client
// certificate, to a server it has not verified: whatever it learns from
// an unverified certificate only words an error, it is never trusted. Only
// once the server's certificate is the gateway's does a second handshake,
// which verifies it against the deployment's CA before it presents the
// client's certificate (TLS 1.3 sends it after the server's is checked),
// say what else is wrong.
// Once the session has reached the gateway, any of these is a gateway
// restarting, and is waited for up to --connect-timeout like the rest.

// RefusedGrace is how long a refused connection or an unknown host is
// retried before the session has reached the gateway once: long enough
// for a gateway started a moment before (`wololo local &` then a
// submit: it listens within a few hundred milliseconds), short enough
// that a typo in --server is said within 2 s.
const RefusedGrace = 1500 * time.Millisecond

// NoticeEvery is how often a client waiting for the gateway says so again.
const NoticeEvery = 10 * time.Second

// DefaultPublicPort is the gateway's public port in the default topology
// (`wololo local`, compose): what the errors below point to.
const DefaultPublicPort = 7100

// CheckServer refuses an address that cannot be a gateway's: not
// host:port, a URL, a port that is not a number in 1-65535. Its errors are
// usage errors (exit 2).
func CheckServer(addr string) error {
	if strings.Contains(addr, "://") {
		return fmt.Errorf("%w: --server %q: give host:port (such as 127.0.0.1:%d), not a URL", cli.ErrUsage, addr, DefaultPublicPort)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		why := err.Error()
		if ae, ok := errors.AsType[*net.AddrError](err); ok {
			why = ae.Err // "missing port in address", without the address again
		}
		return fmt.Errorf("%w: --server %q: want host:port (such as 127.0.0.1:%d): %s", cli.ErrUsage, addr, DefaultPublicPort, why)
	}
	if strings.ContainsAny(host, " /") {
		return fmt.Errorf("%w: --server %q: %q is not a host name", cli.ErrUsage, addr, host)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%w: --server %q: the port %q is not a number in 1-65535", cli.ErrUsage, addr, port)
	}
	return nil
}

// failure is what a probe of the gateway's address found.
type failure int

const (
	// answered: the address speaks TLS with the gateway's certificate (or,
	// without TLS, accepts connections): gRPC is left to finish.
	answered failure = iota
	// silent: no answer in time, or an error that may pass.
	silent
	// refused: nothing listens on the port.
	refused
	// unknownHost: the host name does not resolve.
	unknownHost
	// notGateway: something answers that is not the gateway's public
	// port; waiting cannot help.
	notGateway
)

// diagnosis is a failure and what to tell the user about it.
type diagnosis struct {
	kind failure
	what string
}

// classifyDial sorts the error of dialing addr.
func classifyDial(addr string, err error) diagnosis {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return diagnosis{unknownHost, fmt.Sprintf("the host %q is unknown (%v)", dns.Name, err)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return diagnosis{refused, fmt.Sprintf("nothing listens on %s (connection refused); the gateway's public port is %d unless the deployment chose another", addr, DefaultPublicPort)}
	}
	return diagnosis{silent, err.Error()}
}

// classifyHandshake sorts the outcome of a TLS handshake with addr that
// verified nothing: err is the handshake's error, leaf the certificate
// the server presented (nil if none), roots the CA the client trusts.
func classifyHandshake(addr string, err error, leaf *x509.Certificate, roots *x509.CertPool) diagnosis {
	other := fmt.Sprintf("; the gateway's public port is %d unless the deployment chose another (`wololo local` prints it)", DefaultPublicPort)
	var rec tls.RecordHeaderError
	if errors.As(err, &rec) {
		if strings.HasPrefix(string(rec.RecordHeader[:]), "HTTP/") {
			return diagnosis{notGateway, fmt.Sprintf("%s is not the gateway's public port: it answers plain HTTP, as a process's admin HTTP port does (the web page, /metrics)%s", addr, other)}
		}
		return diagnosis{notGateway, fmt.Sprintf("%s is not the gateway's public port: it does not speak TLS%s", addr, other)}
	}
	if err != nil {
		return diagnosis{silent, err.Error()}
	}
	if leaf == nil {
		return diagnosis{notGateway, fmt.Sprintf("%s is not the gateway's public port: it presents no certificate%s", addr, other)}
	}
	if roots != nil {
		if _, verr := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); verr != nil {
			return diagnosis{notGateway, fmt.Sprintf("the server at %s presents a certificate (%q) that the CA of --tls-dir did not sign: another deployment, or --tls-dir names another deployment's directory%s", addr, leaf.Subject.CommonName, other)}
		}
	}
	id, ierr := pki.IdentityOf(leaf)
	switch {
	case ierr != nil:
		return diagnosis{notGateway, fmt.Sprintf("%s is not the gateway's public port: its certificate is not a Wololo process's (%v)%s", addr, ierr, other)}
	case id.Kind == pki.Instance && pki.IsGateway(leaf):
		return diagnosis{answered, ""}
	case id.Kind == pki.Master:
		return diagnosis{notGateway, fmt.Sprintf("%s is the port of %s (its certificate says so), not the gateway's public port%s", addr, id, other)}
	}
	return diagnosis{notGateway, fmt.Sprintf("%s is an internal port of %s (its certificate says so), not the gateway's public port%s", addr, id, other)}
}

// probe dials addr once and, with tlsConfig, shakes hands without
// verifying anything and without presenting the client's certificate, to
// tell why gRPC cannot connect.
func probe(ctx context.Context, addr string, tlsConfig *tls.Config) diagnosis {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return diagnosis{silent, "no answer to a connection: the host is down or a firewall drops it"}
		}
		return classifyDial(addr, err)
	}
	defer raw.Close()
	if tlsConfig == nil {
		return diagnosis{answered, ""}
	}
	look := tlsConfig.Clone()
	look.InsecureSkipVerify = true // read what it presents; nothing is sent over it
	look.VerifyConnection, look.VerifyPeerCertificate = nil, nil
	// Nor is the client's certificate: a server not verified (yet) is
	// shown none, whatever it asks. The handshake below presents it, to a
	// server it has verified first.
	look.Certificates, look.GetClientCertificate = nil, nil
	look.NextProtos = []string{"h2"}
	conn := tls.Client(raw, look)
	err = conn.HandshakeContext(ctx)
	if err != nil && ctx.Err() != nil {
		return diagnosis{silent, "it accepts connections but does not answer the TLS handshake: a process that is stopped or overloaded, or not a Wololo port"}
	}
	var leaf *x509.Certificate
	if certs := conn.ConnectionState().PeerCertificates; len(certs) > 0 {
		leaf = certs[0]
	}
	dg := classifyHandshake(addr, err, leaf, tlsConfig.RootCAs)
	if dg.kind != answered {
		return dg
	}
	// The gateway's certificate: the real handshake says what else is
	// wrong (a host name it does not carry, a revoked certificate).
	real, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return classifyDial(addr, err)
	}
	defer real.Close()
	verify := tlsConfig.Clone()
	verify.NextProtos = []string{"h2"}
	if err := tls.Client(real, verify).HandshakeContext(ctx); err != nil {
		var host x509.HostnameError
		if errors.As(err, &host) {
			return diagnosis{notGateway, fmt.Sprintf("the gateway's certificate does not carry the name %q the client dials (%v): dial it by a name it carries (localhost, 127.0.0.1), or add the name with `wololo certs --host`", host.Host, err)}
		}
		var verify *tls.CertificateVerificationError
		if errors.As(err, &verify) {
			return diagnosis{notGateway, fmt.Sprintf("the gateway's certificate at %s does not pass: %v", addr, err)}
		}
		return diagnosis{silent, err.Error()}
	}
	return diagnosis{answered, ""}
}
