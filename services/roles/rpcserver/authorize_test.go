package rpcserver

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/transport/pki"
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
