package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/wire/pki"
)

func TestCheckServer(t *testing.T) {
	for _, c := range []struct {
		addr string
		want string // "" for accepted
	}{
		{"127.0.0.1:7100", ""},
		{"localhost:7100", ""},
		{"[::1]:7100", ""},
		{"gateway.example.com:443", ""},
		{"127.0.0.1", "want host:port (such as 127.0.0.1:7100): missing port in address"},
		{"localhost", "want host:port"},
		{"http://127.0.0.1:7100", "not a URL"},
		{"127.0.0.1:http", "not a number"},
		{"127.0.0.1:0", "not a number in 1-65535"},
		{"127.0.0.1:70000", "not a number in 1-65535"},
		{"127.0.0.1:", "not a number"},
		{"::1:7100", "want host:port"},
		{"my host:7100", "not a host name"},
	} {
		err := CheckServer(c.addr)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v, want accepted", c.addr, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "<nil>") || cli.ExitCode(err) != cli.ExitUsage):
			t.Errorf("%q: %v (exit %d), want a usage error saying %q", c.addr, err, cli.ExitCode(err), c.want)
		}
	}
}

func TestClassifyDial(t *testing.T) {
	refusedErr := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	for _, c := range []struct {
		name string
		err  error
		want failure
		say  string
	}{
		{"refused", refusedErr, refused, "nothing listens on h:1"},
		{"unknown host", &net.OpError{Op: "dial", Err: &net.DNSError{Name: "nosuch.invalid", Err: "no such host", IsNotFound: true}}, unknownHost, `"nosuch.invalid" is unknown`},
		{"dns timeout", &net.OpError{Op: "dial", Err: &net.DNSError{Name: "slow", Err: "i/o timeout", IsTimeout: true}}, silent, "i/o timeout"},
		{"timeout", fmt.Errorf("dial: %w", os.ErrDeadlineExceeded), silent, "i/o timeout"},
	} {
		d := classifyDial("h:1", c.err)
		if d.kind != c.want || !strings.Contains(d.what, c.say) {
			t.Errorf("%s: %+v, want kind %d saying %q", c.name, d, c.want, c.say)
		}
	}
}

func TestClassifyHandshake(t *testing.T) {
	ca, err := pki.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := pki.NewCA("someone else")
	issue := func(ca *pki.CA, s pki.Spec) *x509.Certificate {
		t.Helper()
		is, err := ca.IssueSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		return is.Cert
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM())
	gateway := issue(ca, pki.Spec{ID: pki.Identity{Kind: pki.Instance, Name: "gateway-0"}, Gateway: true})
	shard := issue(ca, pki.Spec{ID: pki.Identity{Kind: pki.Instance, Name: "shard-0"}})
	master := issue(ca, pki.Spec{ID: pki.Identity{Kind: pki.Master, Name: "master-1"}})
	foreign := issue(other, pki.Spec{ID: pki.Identity{Kind: pki.Instance, Name: "gateway-0"}, Gateway: true})
	httpHeader := tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}
	copy(httpHeader.RecordHeader[:], "HTTP/")
	garbage := tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}
	copy(garbage.RecordHeader[:], "\x00\x00\x12\x04\x00")
	for _, c := range []struct {
		name string
		err  error
		leaf *x509.Certificate
		want failure
		say  string
	}{
		{"the gateway", nil, gateway, answered, ""},
		{"an admin HTTP port", httpHeader, nil, notGateway, "answers plain HTTP, as a process's admin HTTP port does"},
		{"plaintext gRPC", garbage, nil, notGateway, "does not speak TLS"},
		{"a shard's internal port", nil, shard, notGateway, `an internal port of instance "shard-0" (its certificate says so)`},
		{"a master's port", nil, master, notGateway, `the port of master "master-1"`},
		{"another CA", nil, foreign, notGateway, "did not sign"},
		{"no certificate", nil, nil, notGateway, "presents no certificate"},
		{"a reset", errors.New("connection reset by peer"), nil, silent, "reset"},
	} {
		d := classifyHandshake("h:1", c.err, c.leaf, roots)
		if d.kind != c.want || !strings.Contains(d.what, c.say) {
			t.Errorf("%s: %+v, want kind %d saying %q", c.name, d, c.want, c.say)
		}
		if c.want == notGateway && !strings.Contains(d.what, "7100") {
			t.Errorf("%s: %q does not name the gateway's public port", c.name, d.what)
		}
	}
}

func TestJudgeBeforeAndAfterReaching(t *testing.T) {
	s := &Session{Server: "h:1", Reach: 30 * time.Second}
	for _, c := range []struct {
		kind    failure
		waited  time.Duration
		reached bool
		code    int // 0: go on waiting
	}{
		{notGateway, 0, false, cli.ExitUsage},
		{notGateway, 0, true, 0}, // a gateway restarting, or something briefly in its place
		{refused, time.Second, false, 0},
		{refused, RefusedGrace, false, cli.ExitUnreachable},
		{refused, RefusedGrace, true, 0}, // a gateway restarting
		{unknownHost, RefusedGrace, false, cli.ExitUsage},
		{silent, 20 * time.Second, false, 0},
		{answered, 20 * time.Second, false, 0},
	} {
		s.reached = c.reached
		err := s.judge(diagnosis{kind: c.kind, what: "x"}, c.waited)
		if got := cli.ExitCode(err); (err == nil) != (c.code == 0) || err != nil && got != c.code {
			t.Errorf("kind %d after %s (reached %t): %v (exit %d), want exit %d", c.kind, c.waited, c.reached, err, got, c.code)
		}
	}
}

func TestHintsPaste(t *testing.T) {
	o := SubmitOptions{Matches: "in/m.csv", Players: "my data/p.csv", Out: "out"}
	o.Again = Invocation{Program: "./bin/wololo", Gateway: gatewayArgs("127.0.0.1:7200", "deploy/tls", "alice", false)}
	got := resumeHint(o, "j1")
	for _, want := range []string{
		"`./bin/wololo client submit --job j1 --matches in/m.csv --players 'my data/p.csv' --out out --server 127.0.0.1:7200 --tls-dir deploy/tls --name alice`",
		"`./bin/wololo client watch --job j1 --server 127.0.0.1:7200 --tls-dir deploy/tls --name alice`",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("hint %q lacks %q", got, want)
		}
	}
	o.Again = Invocation{Program: "wololo", Gateway: gatewayArgs(DefaultServer, DefaultTLSDir, "client", false)}
	if got := resumeHint(o, "j1"); strings.Contains(got, "--server") || strings.Contains(got, "--tls-dir") || strings.Contains(got, "--name") {
		t.Errorf("defaults repeated: %q", got)
	}
	if got := gatewayArgs(DefaultServer, DefaultTLSDir, "client", true); strings.Join(got, " ") != "--insecure" {
		t.Errorf("insecure: %q", got)
	}
	for in, want := range map[string]string{"a": "a", "": "''", "it's": `'it'\''s'`, "$HOME": "'$HOME'", "a/b-c_d.e:7": "a/b-c_d.e:7"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestProbePresentsNoCertificateUnverified is issue 37's W11: the probe's
// handshake that reads what an unverified server presents sends no
// client certificate, so a server of another CA (a typo'd address, a
// server posing as the gateway) learns nothing of the client's; the
// probe's second handshake, which verifies the server against the
// deployment's CA first, presents it to the real gateway.
func TestProbePresentsNoCertificateUnverified(t *testing.T) {
	ca, err := pki.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := pki.NewCA("someone else")
	alice, err := ca.Credentials(pki.Identity{Kind: pki.Client, Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		ca        *pki.CA
		want      failure
		presented []int // client certificates each handshake the server took saw
	}{
		{"a server of another CA", other, notGateway, []int{0}},
		{"the gateway", ca, answered, []int{0, 1}},
	} {
		creds, err := c.ca.CredentialsFor(pki.Spec{ID: pki.Identity{Kind: pki.Instance, Name: "gateway-0"}, Gateway: true})
		if err != nil {
			t.Fatal(err)
		}
		// A server that asks for a client certificate and takes any,
		// unverified, to see what a client sends it.
		cfg := creds.ServerTLS()
		cfg.ClientAuth, cfg.ClientCAs, cfg.VerifyConnection = tls.RequestClientCert, nil, nil
		cfg.NextProtos = []string{"h2"}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		seen := make(chan int, 8)
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				s := tls.Server(conn, cfg)
				s.SetDeadline(time.Now().Add(5 * time.Second))
				if s.Handshake() == nil {
					seen <- len(s.ConnectionState().PeerCertificates)
				}
				s.Close()
			}
		}()
		d := probe(t.Context(), l.Addr().String(), alice.GatewayTLS("127.0.0.1"))
		l.Close()
		if d.kind != c.want {
			t.Errorf("%s: the probe found %+v, want kind %d", c.name, d, c.want)
		}
		var got []int
		for len(got) < len(c.presented) {
			select {
			case n := <-seen:
				got = append(got, n)
				continue
			case <-time.After(5 * time.Second):
			}
			break
		}
		if fmt.Sprint(got) != fmt.Sprint(c.presented) {
			t.Errorf("%s: the client presented %v certificates in the server's handshakes, want %v", c.name, got, c.presented)
		}
	}
}
