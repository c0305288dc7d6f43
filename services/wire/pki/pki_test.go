package pki

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

func TestIssueCarriesTheIdentity(t *testing.T) {
	ca, err := NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []Identity{{Instance, "q3-joiner-1"}, {Master, "master-2"}, {Client, "alice"}, {Operator, "operator"}} {
		creds, err := ca.Credentials(id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if creds.Self != id {
			t.Errorf("credentials of %s say %s", id, creds.Self)
		}
	}
	for _, bad := range []Identity{{Instance, ""}, {Client, "a/b"}, {Client, "ca"}, {Client, "..x"}, {"root", "x"}, {Client, string(make([]byte, 64))}} {
		if _, err := ca.Issue(bad); err == nil {
			t.Errorf("issued a certificate for %+v", bad)
		}
	}
}

func TestCredentialsOfAnotherCAAreRefused(t *testing.T) {
	mine, _ := NewCA("mine")
	theirs, _ := NewCA("theirs")
	is, err := theirs.Issue(Identity{Instance, "gateway-0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewCredentials(mine.PEM(), is.CertPEM, is.KeyPEM); err == nil {
		t.Fatal("credentials accepted a certificate the CA did not sign")
	}
}

// handshake runs a real TLS handshake over a pipe and returns the
// client's identity as the server verified it.
func handshake(serverCfg, clientCfg *tls.Config) (Identity, bool, error) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	srv := tls.Server(a, serverCfg)
	errs := make(chan error, 1)
	go func() {
		c := tls.Client(b, clientCfg)
		err := c.Handshake()
		if err == nil {
			// TLS 1.3: the server's verdict on the client's certificate
			// arrives with the first read.
			_, err = c.Read(make([]byte, 1))
		}
		errs <- err
	}()
	// The client's error first: it says why it refused the server.
	if err := srv.Handshake(); err != nil {
		b.Close()
		if cerr := <-errs; cerr != nil {
			return Identity{}, false, cerr
		}
		return Identity{}, false, err
	}
	if _, err := srv.Write([]byte{1}); err != nil {
		if cerr := <-errs; cerr != nil {
			return Identity{}, false, cerr
		}
		return Identity{}, false, err
	}
	if err := <-errs; err != nil {
		return Identity{}, false, err
	}
	ctx := peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{State: srv.ConnectionState()}})
	id, ok := Peer(ctx)
	return id, ok, nil
}

// TestHandshake: the server learns the client's identity, a client
// verifies the gateway by its role or by its name, and a certificate of
// another CA fails.
func TestHandshake(t *testing.T) {
	ca, _ := NewCA("test CA")
	server, _ := ca.CredentialsFor(Spec{ID: Identity{Instance, "gateway-0"}, Gateway: true})
	client, _ := ca.Credentials(Identity{Client, "alice"})
	other, _ := NewCA("other")
	stranger, _ := other.Credentials(Identity{Client, "alice"})

	if id, ok, err := handshake(server.ServerTLS(), client.GatewayTLS("127.0.0.1")); err != nil || !ok || id != (Identity{Client, "alice"}) {
		t.Fatalf("client handshake: %v %v %v", id, ok, err)
	}
	if _, _, err := handshake(server.ServerTLS(), client.ClientTLS("gateway-0")); err != nil {
		t.Fatalf("a client dialing gateway-0 by its name: %v", err)
	}
	if _, _, err := handshake(server.ServerTLS(), client.ClientTLS("q3-joiner-0")); err == nil {
		t.Fatal("a client accepted the gateway's certificate under another instance's name")
	}
	if _, _, err := handshake(server.ServerTLS(), stranger.GatewayTLS("127.0.0.1")); err == nil {
		t.Fatal("a certificate of another CA got through the handshake")
	}
	anonymous := &tls.Config{MinVersion: tls.VersionTLS13, ServerName: "gateway-0", RootCAs: client.roots}
	if id, ok, err := handshake(server.ServerTLS(), anonymous); err != nil || ok {
		t.Fatalf("a client without a certificate: %v %v %v; want a handshake and no identity", id, ok, err)
	}
	if _, ok := Peer(context.Background()); ok {
		t.Fatal("an identity without a peer")
	}
}

// oldStyle issues id a server certificate the way earlier versions did:
// the loopback names and the extra hosts on every server certificate, no
// role. A dialer must refuse it by identity, not by its names.
func oldStyle(t *testing.T, ca *CA, id Identity, hosts ...string) *Credentials {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: id.Name, OrganizationalUnit: []string{string(id.Kind)}},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		DNSNames:    append([]string{id.Name, "localhost"}, hosts...),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	c, err := NewCredentials(ca.PEM(), pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOnlyTheRightProcessServes makes the impostures of issue 22's item 9
// at the handshake: a shard's, a master's or an old-style certificate
// (which carries the loopback names and every --host) serving where a
// client expects the gateway, and the gateway's certificate, with a
// --host equal to a shard's name, serving where an instance expects that
// shard. Each is refused by the dialer; the right process is taken.
func TestOnlyTheRightProcessServes(t *testing.T) {
	ca, _ := NewCA("test CA")
	must := func(c *Credentials, err error) *Credentials {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	gateway := must(ca.CredentialsFor(Spec{ID: Identity{Instance, "gateway-0"}, Gateway: true, Hosts: []string{"wololo.example", "shard-1", "10.0.0.7"}}))
	shard := must(ca.Credentials(Identity{Instance, "shard-1"}))
	master := must(ca.Credentials(Identity{Master, "master-1"}))
	oldShard := oldStyle(t, ca, Identity{Instance, "shard-0"}, "wololo.example")
	alice := must(ca.Credentials(Identity{Client, "alice"}))
	peerShard := must(ca.Credentials(Identity{Instance, "shard-0"}))
	cases := []struct {
		name   string
		server *Credentials
		client *tls.Config
		want   string // "" for a handshake that succeeds, else part of the error
	}{
		{"the gateway on loopback", gateway, alice.GatewayTLS("127.0.0.1"), ""},
		{"the gateway under localhost", gateway, alice.GatewayTLS("localhost"), ""},
		{"the gateway under its --host", gateway, alice.GatewayTLS("wololo.example"), ""},
		{"the gateway under its --host IP", gateway, alice.GatewayTLS("10.0.0.7"), ""},
		{"a shard as the gateway", shard, alice.GatewayTLS("127.0.0.1"), "certificate"},
		{"a shard as the gateway under its own name", shard, alice.GatewayTLS("shard-1"), "not the gateway"},
		{"a master as the gateway", master, alice.GatewayTLS("master-1"), "not the gateway"},
		{"an old-style shard certificate as the gateway", oldShard, alice.GatewayTLS("127.0.0.1"), "not the gateway"},
		{"an old-style shard certificate under a shared --host", oldShard, alice.GatewayTLS("wololo.example"), "not the gateway"},
		{"the shard to an instance", shard, peerShard.ClientTLS("shard-1"), ""},
		{"the gateway, with a --host named like a shard, as that shard", gateway, peerShard.ClientTLS("shard-1"), `not "shard-1"`},
		{"an old-style certificate under a loopback name", oldShard, peerShard.ClientTLS("localhost"), `not "localhost"`},
		{"the master to its peers", master, peerShard.ClientTLS("master-1"), ""},
		{"the master as a shard", master, peerShard.ClientTLS("shard-1"), "certificate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := handshake(tc.server.ServerTLS(), tc.client)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatal("the handshake succeeded")
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("refused with %v, want %q in it", err, tc.want)
			}
		})
	}
}

// TestSpecNames: only the gateway carries the loopback names, the hosts
// and the role; hosts on anyone else are refused.
func TestSpecNames(t *testing.T) {
	ca, _ := NewCA("test CA")
	cases := []struct {
		spec    Spec
		dns     []string
		ips     int
		gateway bool
		bad     bool
	}{
		{spec: Spec{ID: Identity{Instance, "gateway-0"}, Gateway: true, Hosts: []string{"gw.example", "10.1.2.3", "localhost"}}, dns: []string{"gateway-0", "localhost", "gw.example"}, ips: 3, gateway: true},
		{spec: Spec{ID: Identity{Instance, "shard-0"}}, dns: []string{"shard-0"}},
		{spec: Spec{ID: Identity{Master, "master-2"}}, dns: []string{"master-2"}},
		{spec: Spec{ID: Identity{Client, "alice"}}},
		{spec: Spec{ID: Identity{Operator, "operator"}}},
		{spec: Spec{ID: Identity{Instance, "shard-0"}, Hosts: []string{"gw.example"}}, bad: true},
		{spec: Spec{ID: Identity{Master, "master-1"}, Gateway: true}, bad: true},
		{spec: Spec{ID: Identity{Client, "alice"}, Gateway: true}, bad: true},
	}
	for _, tc := range cases {
		is, err := ca.IssueSpec(tc.spec)
		if tc.bad {
			if err == nil {
				t.Errorf("%+v: issued", tc.spec)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", tc.spec, err)
		}
		if strings.Join(is.Cert.DNSNames, ",") != strings.Join(tc.dns, ",") || len(is.Cert.IPAddresses) != tc.ips || IsGateway(is.Cert) != tc.gateway {
			t.Errorf("%s: names %v %v %v, want %v, %d IPs, gateway %v", tc.spec.ID, is.Cert.DNSNames, is.Cert.IPAddresses, is.Cert.URIs, tc.dns, tc.ips, tc.gateway)
		}
		if !tc.spec.matches(is.Cert) {
			t.Errorf("%s: its own spec does not match it", tc.spec.ID)
		}
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode()
}

func TestFilesAndEnsure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	ca, made, err := OpenCA(dir, "")
	if err != nil || !made {
		t.Fatalf("OpenCA = %v, %v", made, err)
	}
	s := Spec{ID: Identity{Master, "master-1"}}
	if wrote, err := ca.Ensure(dir, s); err != nil || !wrote {
		t.Fatalf("Ensure = %v, %v", wrote, err)
	}
	if wrote, err := ca.Ensure(dir, s); err != nil || wrote {
		t.Fatalf("second Ensure = %v, %v; want nothing written", wrote, err)
	}
	again, made, err := OpenCA(dir, "")
	if err != nil || made || !again.Cert.Equal(ca.Cert) {
		t.Fatalf("reopened CA: made %v, %v", made, err)
	}
	creds, err := Load(dir, "master-1")
	if err != nil || creds.Self != s.ID {
		t.Fatalf("Load = %v, %v", creds, err)
	}
	for path, want := range map[string]os.FileMode{
		dir: 0o700 | os.ModeDir, CAKeyDir(dir): 0o700 | os.ModeDir, KeyPath(dir, "master-1"): 0o600,
		KeyPath(CAKeyDir(dir), CAName): 0o600, CertPath(dir, "master-1"): 0o644, RevocationPath(dir): 0o644,
	} {
		if got := mode(t, path); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
	if _, err := os.Stat(KeyPath(dir, CAName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the CA's key is among the credentials: %v", err)
	}
	// A certificate under the name of another identity's kind is replaced.
	if wrote, err := ca.Ensure(dir, Spec{ID: Identity{Client, "master-1"}}); err != nil || !wrote {
		t.Fatalf("Ensure of another kind = %v, %v", wrote, err)
	}
	if _, err := Load(dir, "nobody"); err == nil {
		t.Fatal("loaded credentials that do not exist")
	}
	if issued, err := ca.IssuedTo("master-1"); err != nil || len(issued) != 2 || issued[1].ID.Kind != Client {
		t.Fatalf("the index of master-1: %v, %v", issued, err)
	}
}

// TestEnsureReissues: what Ensure keeps and what it writes again, and that
// modes loosened since are tightened on every run.
func TestEnsureReissues(t *testing.T) {
	gw := Spec{ID: Identity{Instance, "gateway-0"}, Gateway: true, Hosts: []string{"gw.example"}}
	cases := []struct {
		name   string
		before func(t *testing.T, ca *CA, dir string)
		spec   Spec
		wrote  bool
	}{
		{"the same again", nil, gw, false},
		{"loosened modes, same certificate", func(t *testing.T, ca *CA, dir string) {
			os.Chmod(dir, 0o755)
			os.Chmod(KeyPath(dir, "gateway-0"), 0o644)
		}, gw, false},
		{"a new --host", nil, Spec{ID: gw.ID, Gateway: true, Hosts: []string{"gw.example", "gw2.example"}}, true},
		{"a --host dropped", nil, Spec{ID: gw.ID, Gateway: true}, true},
		{"no longer the gateway", nil, Spec{ID: gw.ID}, true},
		{"revoked", func(t *testing.T, ca *CA, dir string) {
			c, err := Load(dir, "gateway-0")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ca.Revoke(RevocationPath(dir), c.Leaf().SerialNumber); err != nil {
				t.Fatal(err)
			}
		}, gw, true},
		{"signed by another CA", func(t *testing.T, ca *CA, dir string) {
			other, _ := NewCA("other")
			is, _ := other.IssueSpec(gw)
			os.WriteFile(CertPath(dir, "gateway-0"), is.CertPEM, 0o644)
			os.WriteFile(KeyPath(dir, "gateway-0"), is.KeyPEM, 0o600)
		}, gw, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tls")
			ca, _, err := OpenCA(dir, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ca.Ensure(dir, gw); err != nil {
				t.Fatal(err)
			}
			if tc.before != nil {
				tc.before(t, ca, dir)
			}
			if _, _, err := OpenCA(dir, ""); err != nil { // a rerun of `wololo certs`
				t.Fatal(err)
			}
			wrote, err := ca.Ensure(dir, tc.spec)
			if err != nil || wrote != tc.wrote {
				t.Fatalf("Ensure = %v, %v; want %v", wrote, err, tc.wrote)
			}
			if got := mode(t, dir); got != 0o700|os.ModeDir {
				t.Errorf("directory mode %v after the run", got)
			}
			if got := mode(t, KeyPath(dir, "gateway-0")); got != 0o600 {
				t.Errorf("key mode %v after the run", got)
			}
			c, err := Load(dir, "gateway-0")
			if err != nil || !tc.spec.matches(c.Leaf()) {
				t.Fatalf("after the run: %v, names %v", err, c.Leaf().DNSNames)
			}
		})
	}
}

// TestOpenKeysAreRefused: Load refuses a key group or others may read,
// but for a container's secrets.
func TestOpenKeysAreRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	ca, _, err := OpenCA(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Ensure(dir, Spec{ID: Identity{Instance, "shard-0"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode os.FileMode
		ok   bool
	}{{0o600, true}, {0o400, true}, {0o640, false}, {0o604, false}, {0o644, false}, {0o660, false}, {0o601, false}} {
		if err := os.Chmod(KeyPath(dir, "shard-0"), tc.mode); err != nil {
			t.Fatal(err)
		}
		_, err := Load(dir, "shard-0")
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrKeyOpen)) {
			t.Errorf("mode %04o: Load = %v, want ok %v", tc.mode, err, tc.ok)
		}
	}
	for _, tc := range []struct {
		perm os.FileMode
		path string
		ok   bool
	}{
		{0o644, "/run/secrets/master-1.key", true},
		{0o444, "/run/secrets/shard-0.key", true},
		{0o644, "/run/secrets/sub/master-1.key", false},
		{0o644, "/home/u/deploy/tls/master-1.key", false},
		{0o600, "/home/u/deploy/tls/master-1.key", true},
	} {
		if got := keyModeOK(tc.perm, tc.path); got != tc.ok {
			t.Errorf("keyModeOK(%04o, %s) = %v", tc.perm, tc.path, got)
		}
	}
}

// TestLegacyCAKeyIsMoved: a directory of an earlier version (ca.key beside
// the credentials) has its CA key moved into DIR/ca; two keys are refused.
func TestLegacyCAKeyIsMoved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	ca, _, err := OpenCA(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(KeyPath(CAKeyDir(dir), CAName), KeyPath(dir, CAName)); err != nil {
		t.Fatal(err)
	}
	os.Chmod(KeyPath(dir, CAName), 0o644)
	again, made, err := OpenCA(dir, "")
	if err != nil || made || !again.Cert.Equal(ca.Cert) {
		t.Fatalf("reopened: %v %v", made, err)
	}
	if _, err := os.Stat(KeyPath(dir, CAName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the old key is still beside the credentials: %v", err)
	}
	if got := mode(t, KeyPath(CAKeyDir(dir), CAName)); got != 0o600 {
		t.Errorf("the moved key is %v", got)
	}
	os.WriteFile(KeyPath(dir, CAName), []byte("x"), 0o600)
	if _, err := LoadCA(dir, ""); err == nil || !strings.Contains(err.Error(), "two CA keys") {
		t.Fatalf("two CA keys: %v", err)
	}
	if _, _, err := OpenCA(dir, dir); err == nil {
		t.Fatal("the CA's key kept among the credentials")
	}
	// Another --ca-dir keeps the key wherever the operator says.
	elsewhere := filepath.Join(t.TempDir(), "offline")
	dir2 := filepath.Join(t.TempDir(), "tls")
	if _, _, err := OpenCA(dir2, elsewhere); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(KeyPath(elsewhere, CAName)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(CAKeyDir(dir2)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("DIR/ca made although --ca-dir is elsewhere: %v", err)
	}
}

// TestRevocation: a revoked client is refused at the handshake and on an
// open connection's next call once the list is read again, without new
// credentials; another client goes on; a broken or older list keeps the
// last good one. The public plane's handshake (PublicServerTLS) lets a
// revoked client through, to be told why on its calls, but no other
// kind. A list read anew that revokes more is said to OnRevocation's
// subscribers, once; one that revokes nothing more is not.
func TestRevocation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	ca, _, err := OpenCA(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Spec{{ID: Identity{Instance, "gateway-0"}, Gateway: true}, {ID: Identity{Client, "alice"}}, {ID: Identity{Client, "bob"}}} {
		if _, err := ca.Ensure(dir, s); err != nil {
			t.Fatal(err)
		}
	}
	load := func(name string) *Credentials {
		c, err := Load(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	server, alice, bob := load("gateway-0"), load("alice"), load("bob")
	connected := func(c *Credentials) error {
		_, _, err := handshake(server.ServerTLS(), c.GatewayTLS("localhost"))
		return err
	}
	told := 0
	stop := server.OnRevocation(func() { told++ })
	defer stop()
	// an open connection of alice's, as a call's context shows it
	callCtx := peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{State: tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{alice.Leaf()}}}}})
	if connected(alice) != nil || connected(bob) != nil || server.CheckPeer(callCtx) != nil {
		t.Fatal("refused before any revocation")
	}
	added, err := ca.Revoke(RevocationPath(dir), alice.Leaf().SerialNumber)
	if err != nil || added != 1 {
		t.Fatalf("Revoke = %d, %v", added, err)
	}
	if added, _ := ca.Revoke(RevocationPath(dir), alice.Leaf().SerialNumber); added != 0 {
		t.Errorf("revoked twice: %d", added)
	}
	if !server.ReloadRevocations() || told != 1 {
		t.Fatalf("a list that revokes alice read anew: told %d times, want once", told)
	}
	if server.ReloadRevocations() || told != 1 {
		t.Errorf("the same list again: told %d times, want no more", told)
	}
	server.revoked.every = 0 // read the list again at every check
	if id, _, err := handshake(server.PublicServerTLS(), alice.GatewayTLS("localhost")); err != nil || id != alice.Self {
		t.Errorf("the public plane's handshake with the revoked client: %v, %v; want it through, to be told why", id, err)
	}
	if err := server.CheckPeer(callCtx); !errors.Is(err, ErrRevoked) || !server.RevokedCert(alice.Leaf()) || server.RevokedCert(bob.Leaf()) {
		t.Fatalf("a call of the revoked client's: %v", err)
	}
	// An instance's revoked certificate fails even the public handshake.
	shard, err := ca.CredentialsFor(Spec{ID: Identity{Instance, "shard-0"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := handshake(server.PublicServerTLS(), shard.GatewayTLS("localhost")); err != nil {
		t.Fatalf("an instance's certificate before its revocation: %v", err)
	}
	if _, err := ca.Revoke(RevocationPath(dir), shard.Leaf().SerialNumber); err != nil {
		t.Fatal(err)
	}
	if _, _, err := handshake(server.PublicServerTLS(), shard.GatewayTLS("localhost")); err == nil {
		t.Error("a revoked instance's certificate passed the public plane's handshake")
	}
	if told != 2 {
		t.Errorf("told %d times after a second revocation read at a handshake, want 2", told)
	}
	if err := connected(alice); err == nil {
		t.Fatal("the revoked client got through the handshake")
	}
	if err := server.CheckPeer(callCtx); !errors.Is(err, ErrRevoked) {
		t.Fatalf("a call on the revoked client's open connection: %v", err)
	}
	if err := connected(bob); err != nil {
		t.Fatalf("another client: %v", err)
	}
	// A half-written list, then an older one put back: alice stays revoked.
	good, _ := os.ReadFile(RevocationPath(dir))
	os.WriteFile(RevocationPath(dir), good[:len(good)/2], 0o644)
	if connected(alice) == nil {
		t.Fatal("a broken list let the revoked client in")
	}
	older := filepath.Join(t.TempDir(), "crl.pem")
	if _, err := ca.Revoke(older); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(older)
	os.WriteFile(RevocationPath(dir), data, 0o644)
	if connected(alice) == nil {
		t.Fatal("an older list let the revoked client in")
	}
	// A list of another CA fails the start.
	other, _ := NewCA("other")
	otherList := filepath.Join(t.TempDir(), "crl.pem")
	other.Revoke(otherList)
	data, _ = os.ReadFile(otherList)
	os.WriteFile(RevocationPath(dir), data, 0o644)
	if _, err := Load(dir, "bob"); err == nil {
		t.Fatal("loaded credentials with another CA's revocation list")
	}
}
