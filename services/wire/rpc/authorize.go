package rpc

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/services/wire/pki"
)

// The services the policy names, by their full gRPC names.
const (
	serviceHealth     = "grpc.health.v1.Health"
	serviceStage      = "wololo.v1.StageService"
	serviceElection   = "wololo.v1.ElectionService"
	serviceJobs       = "wololo.v1.JobService"
	serviceStatus     = "wololo.v1.Status"
	serviceCluster    = "wololo.v1.Cluster"
	serviceReflection = "grpc.reflection."
)

// authorize decides whether a caller may call a method on a plane: nil,
// or an Unauthenticated or PermissionDenied status. known is false when
// the caller presented no verified certificate. It is the whole policy of
// who may call what (see the package doc); it does not look inside calls.
func authorize(plane Plane, method string, id pki.Identity, known bool) error {
	service := serviceOf(method)
	if service == serviceHealth {
		return nil
	}
	if !known {
		return status.Errorf(codes.Unauthenticated, "%s needs a certificate of the deployment's CA", method)
	}
	var allowed []pki.Kind
	switch {
	case plane == Public && service == serviceJobs:
		allowed = []pki.Kind{pki.Client}
	case plane == Public && service == serviceCluster:
		allowed = []pki.Kind{pki.Operator}
	case plane == Public:
	case service == serviceStage:
		allowed = []pki.Kind{pki.Instance}
	case service == serviceElection:
		allowed = []pki.Kind{pki.Master}
	case service == serviceStatus, strings.HasPrefix(service, serviceReflection):
		allowed = []pki.Kind{pki.Instance, pki.Master, pki.Operator}
	}
	for _, k := range allowed {
		if id.Kind == k {
			return nil
		}
	}
	return status.Errorf(codes.PermissionDenied, "%s may not call %s on the %s plane", id, method, plane)
}

// serviceOf is the service of a full method name ("/pkg.Service/Method").
func serviceOf(method string) string {
	service := strings.TrimPrefix(method, "/")
	if i := strings.IndexByte(service, '/'); i >= 0 {
		service = service[:i]
	}
	return service
}

func (s *Server) check(ctx context.Context, method string) error {
	if s.opts.Credentials == nil {
		return nil
	}
	id, known := pki.Peer(ctx)
	err := authorize(s.opts.Plane, method, id, known)
	// A certificate revoked after its connection's handshake: refused on
	// every call but health, as one without a certificate is.
	if err == nil && known && serviceOf(method) != serviceHealth {
		if rerr := s.opts.Credentials.CheckPeer(ctx); rerr != nil {
			err = status.Errorf(codes.Unauthenticated, "%s: %v", method, rerr)
		}
	}
	if err != nil {
		who, _ := peerOf(ctx)
		s.refused.call(method, who, err)
	}
	return err
}

func (s *Server) authorizeUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := s.check(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func (s *Server) authorizeStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := s.check(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return handler(srv, ss)
}

// PeerInstance names a call's caller by its verified certificate, as
// transport.Server.RequireIdentity asks (transport.Identify): the instance
// the certificate names ("" for a verified caller of another kind), the
// identity as a refusal says it, and ok false without a verified
// certificate.
func PeerInstance(ctx context.Context) (instance, who string, ok bool) {
	id, ok := pki.Peer(ctx)
	if !ok {
		return "", "", false
	}
	if id.Kind != pki.Instance {
		return "", id.String(), true
	}
	return id.Name, id.String(), true
}
