package master

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/services/wire/pki"
)

// TestDeliverSpeaksOnlyAsItself: with credentials, an election message is
// taken only from the master its certificate names; forged HEARTBEAT_ACKs
// and terms from an instance's or another master's certificate are refused
// before the election sees them.
func TestDeliverSpeaksOnlyAsItself(t *testing.T) {
	ca, err := pki.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	self, err := ca.Credentials(pki.Identity{Kind: pki.Master, Name: "master-1"})
	if err != nil {
		t.Fatal(err)
	}
	m := &Master{cfg: Config{Credentials: self}}
	// as is the context of a call whose peer presented id's certificate.
	as := func(id pki.Identity) context.Context {
		is, err := ca.Issue(id)
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(is.CertPEM)
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		state := tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}}
		return peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{State: state}})
	}
	cases := []struct {
		name string
		ctx  context.Context
		from int32
		want codes.Code
	}{
		{"master-2 as itself", as(pki.Identity{Kind: pki.Master, Name: "master-2"}), 2, codes.OK},
		{"master-2 as master-3", as(pki.Identity{Kind: pki.Master, Name: "master-2"}), 3, codes.PermissionDenied},
		{"an instance as master-2", as(pki.Identity{Kind: pki.Instance, Name: "master-2"}), 2, codes.PermissionDenied},
		{"a client as master-2", as(pki.Identity{Kind: pki.Client, Name: "master-2"}), 2, codes.PermissionDenied},
		{"no certificate", context.Background(), 2, codes.Unauthenticated},
	}
	for _, tc := range cases {
		if got := status.Code(m.checkSender(tc.ctx, tc.from)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	insecure := &Master{}
	if err := insecure.checkSender(context.Background(), 2); err != nil {
		t.Errorf("--insecure refused a claim: %v", err)
	}
}
