package pki

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"testing"

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

// TestHandshake runs real TLS handshakes over a pipe: the server learns the
// client's identity, a client verifies the server under its instance name,
// and a certificate of another CA fails.
func TestHandshake(t *testing.T) {
	ca, _ := NewCA("test CA")
	server, _ := ca.Credentials(Identity{Instance, "gateway-0"})
	client, _ := ca.Credentials(Identity{Client, "alice"})
	other, _ := NewCA("other")
	stranger, _ := other.Credentials(Identity{Client, "alice"})

	handshake := func(clientCfg *tls.Config) (Identity, bool, error) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		srv := tls.Server(a, server.ServerTLS())
		errs := make(chan error, 1)
		go func() { errs <- tls.Client(b, clientCfg).Handshake() }()
		if err := srv.Handshake(); err != nil {
			<-errs
			return Identity{}, false, err
		}
		if err := <-errs; err != nil {
			return Identity{}, false, err
		}
		ctx := peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{State: srv.ConnectionState()}})
		id, ok := Peer(ctx)
		return id, ok, nil
	}
	if id, ok, err := handshake(client.ClientTLS("gateway-0")); err != nil || !ok || id != (Identity{Client, "alice"}) {
		t.Fatalf("client handshake: %v %v %v", id, ok, err)
	}
	if _, _, err := handshake(client.ClientTLS("q3-joiner-0")); err == nil {
		t.Fatal("a client accepted the gateway's certificate under another instance's name")
	}
	if _, _, err := handshake(client.ClientTLS("127.0.0.1")); err != nil {
		t.Fatalf("a client dialing 127.0.0.1 could not verify the server: %v", err)
	}
	if _, _, err := handshake(stranger.ClientTLS("gateway-0")); err == nil {
		t.Fatal("a certificate of another CA got through the handshake")
	}
	anonymous := &tls.Config{MinVersion: tls.VersionTLS13, ServerName: "gateway-0", RootCAs: client.roots}
	if id, ok, err := handshake(anonymous); err != nil || ok {
		t.Fatalf("a client without a certificate: %v %v %v; want a handshake and no identity", id, ok, err)
	}
	if _, ok := Peer(context.Background()); ok {
		t.Fatal("an identity without a peer")
	}
}

func TestFilesAndEnsure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	ca, made, err := OpenCA(dir)
	if err != nil || !made {
		t.Fatalf("OpenCA = %v, %v", made, err)
	}
	id := Identity{Master, "master-1"}
	if wrote, err := ca.Ensure(dir, id); err != nil || !wrote {
		t.Fatalf("Ensure = %v, %v", wrote, err)
	}
	if wrote, err := ca.Ensure(dir, id); err != nil || wrote {
		t.Fatalf("second Ensure = %v, %v; want nothing written", wrote, err)
	}
	again, made, err := OpenCA(dir)
	if err != nil || made || !again.Cert.Equal(ca.Cert) {
		t.Fatalf("reopened CA: made %v, %v", made, err)
	}
	creds, err := Load(dir, "master-1")
	if err != nil || creds.Self != id {
		t.Fatalf("Load = %v, %v", creds, err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, KeyPath(dir, "master-1"): 0o600, KeyPath(dir, CAName): 0o600, CertPath(dir, "master-1"): 0o644} {
		st, err := os.Stat(path)
		if err != nil || st.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, st.Mode(), err, want)
		}
	}
	// A certificate under the name of another identity's kind is replaced.
	if wrote, err := ca.Ensure(dir, Identity{Client, "master-1"}); err != nil || !wrote {
		t.Fatalf("Ensure of another kind = %v, %v", wrote, err)
	}
	if _, err := Load(dir, "nobody"); err == nil {
		t.Fatal("loaded credentials that do not exist")
	}
}
