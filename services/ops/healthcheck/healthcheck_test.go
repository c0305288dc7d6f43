package healthcheck

import (
	"crypto/tls"
	"net"
	"testing"

	"github.com/wololo/wololo/services/wire/pki"
)

// TestDialExpectsTheRightServer: what `wololo health` takes at --addr,
// by the credential it presents and its flags, over real handshakes.
func TestDialExpectsTheRightServer(t *testing.T) {
	ca, err := pki.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	must := func(c *pki.Credentials, err error) *pki.Credentials {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	gateway := must(ca.CredentialsFor(pki.Spec{ID: pki.Identity{Kind: pki.Instance, Name: "gateway-0"}, Gateway: true}))
	shard := must(ca.Credentials(pki.Identity{Kind: pki.Instance, Name: "shard-0"}))
	master := must(ca.Credentials(pki.Identity{Kind: pki.Master, Name: "master-1"}))
	client := must(ca.Credentials(pki.Identity{Kind: pki.Client, Name: "client"}))
	operator := must(ca.Credentials(pki.Identity{Kind: pki.Operator, Name: "operator"}))
	cases := []struct {
		name       string
		as         *pki.Credentials
		addr       string
		serverName string
		gateway    bool
		server     *pki.Credentials
		ok         bool
	}{
		{"a client, the gateway on loopback", client, "127.0.0.1:7100", "", false, gateway, true},
		{"a client, the gateway under localhost", client, "127.0.0.1:7100", "localhost", false, gateway, true},
		{"a client, a shard posing as the gateway", client, "127.0.0.1:7100", "", false, shard, false},
		{"a client, a shard under its own name", client, "127.0.0.1:7100", "shard-0", false, shard, false},
		{"an operator, --gateway", operator, "localhost:7100", "", true, gateway, true},
		{"an operator, --gateway, a master posing", operator, "localhost:7100", "", true, master, false},
		{"an operator, a master by name", operator, "127.0.0.1:7114", "master-1", false, master, true},
		{"an operator, the gateway posing as a master", operator, "127.0.0.1:7114", "master-1", false, gateway, false},
		{"a shard, itself (compose's check)", shard, "127.0.0.1:7102", "", false, shard, true},
		{"a shard, another in its place", shard, "127.0.0.1:7102", "", false, gateway, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := handshake(tc.server.ServerTLS(), dialTLS(tc.as, tc.addr, tc.serverName, tc.gateway))
			if (err == nil) != tc.ok {
				t.Fatalf("handshake: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// handshake runs a TLS handshake over a pipe and returns the client's
// error.
func handshake(server, client *tls.Config) error {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		tls.Server(a, server).Handshake()
		a.Close()
	}()
	return tls.Client(b, client).Handshake()
}
