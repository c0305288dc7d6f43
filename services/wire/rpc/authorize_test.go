package rpc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/services/wire/pki"
)

func TestAuthorize(t *testing.T) {
	inst := pki.Identity{Kind: pki.Instance, Name: "q3-joiner-0"}
	master := pki.Identity{Kind: pki.Master, Name: "master-1"}
	client := pki.Identity{Kind: pki.Client, Name: "alice"}
	op := pki.Identity{Kind: pki.Operator, Name: "operator"}
	none := pki.Identity{}
	const (
		exchange = "/wololo.v1.StageService/Exchange"
		deliver  = "/wololo.v1.ElectionService/Deliver"
		get      = "/wololo.v1.Status/Get"
		refl     = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
		health   = "/grpc.health.v1.Health/Check"
		job      = "/wololo.v1.JobService/GetJob"
		cluster  = "/wololo.v1.Cluster/Get"
	)
	cases := []struct {
		plane  Plane
		method string
		id     pki.Identity
		known  bool
		want   codes.Code
	}{
		{Internal, exchange, inst, true, codes.OK},
		{Internal, exchange, master, true, codes.PermissionDenied},
		{Internal, exchange, client, true, codes.PermissionDenied},
		{Internal, exchange, op, true, codes.PermissionDenied},
		{Internal, exchange, none, false, codes.Unauthenticated},
		{Internal, deliver, master, true, codes.OK},
		{Internal, deliver, inst, true, codes.PermissionDenied},
		{Internal, get, inst, true, codes.OK},
		{Internal, get, master, true, codes.OK},
		{Internal, get, op, true, codes.OK},
		{Internal, get, client, true, codes.PermissionDenied},
		{Internal, get, none, false, codes.Unauthenticated},
		{Internal, refl, op, true, codes.OK},
		{Internal, refl, client, true, codes.PermissionDenied},
		{Internal, health, none, false, codes.OK},
		{Internal, job, client, true, codes.PermissionDenied},
		{Internal, "/wololo.v1.Unknown/X", op, true, codes.PermissionDenied},
		{Public, job, client, true, codes.OK},
		{Public, job, inst, true, codes.PermissionDenied},
		{Public, job, op, true, codes.PermissionDenied},
		{Public, job, none, false, codes.Unauthenticated},
		{Public, health, none, false, codes.OK},
		{Public, get, op, true, codes.PermissionDenied},
		{Public, cluster, op, true, codes.OK},
		{Public, cluster, client, true, codes.PermissionDenied},
		{Public, cluster, inst, true, codes.PermissionDenied},
		{Public, cluster, master, true, codes.PermissionDenied},
		{Public, cluster, none, false, codes.Unauthenticated},
		{Internal, cluster, op, true, codes.PermissionDenied},
		{Public, exchange, inst, true, codes.PermissionDenied},
	}
	for _, tc := range cases {
		if got := status.Code(authorize(tc.plane, tc.method, tc.id, tc.known)); got != tc.want {
			t.Errorf("%s plane, %s by %q (known %v): %s, want %s", tc.plane, tc.method, tc.id, tc.known, got, tc.want)
		}
	}
}

// TestPeerInstance: the channel protocol's Server is told the instance a
// verified certificate names, and nothing for another kind's certificate
// or none.
func TestPeerInstance(t *testing.T) {
	ca, err := pki.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	from := func(id pki.Identity) context.Context {
		creds, err := ca.Credentials(id)
		if err != nil {
			t.Fatal(err)
		}
		info := credentials.TLSInfo{State: tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{creds.Leaf()}}}}
		return peer.NewContext(context.Background(), &peer.Peer{AuthInfo: info})
	}
	cases := []struct {
		name          string
		ctx           context.Context
		instance, who string
		ok            bool
	}{
		{"an instance", from(pki.Identity{Kind: pki.Instance, Name: "shard-0"}), "shard-0", `instance "shard-0"`, true},
		{"a client named like an instance", from(pki.Identity{Kind: pki.Client, Name: "shard-0"}), "", `client "shard-0"`, true},
		{"a master", from(pki.Identity{Kind: pki.Master, Name: "master-1"}), "", `master "master-1"`, true},
		{"no peer", context.Background(), "", "", false},
		{"a peer without a certificate", peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{}}), "", "", false},
	}
	for _, c := range cases {
		instance, who, ok := PeerInstance(c.ctx)
		if instance != c.instance || who != c.who || ok != c.ok {
			t.Errorf("%s: PeerInstance = %q, %q, %v; want %q, %q, %v", c.name, instance, who, ok, c.instance, c.who, c.ok)
		}
	}
}
