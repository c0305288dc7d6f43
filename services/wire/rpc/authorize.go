package rpc

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/internal/errinfo"
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
	// A certificate revoked after its connection's handshake (or a revoked
	// client's, which the public plane's handshake lets through to be told
	// so): refused on every call but health.
	if err == nil && known && serviceOf(method) != serviceHealth {
		if leaf, ok := pki.PeerLeaf(ctx); ok && s.opts.Credentials.RevokedCert(leaf) {
			err = errRevoked(id, leaf)
		}
	}
	if err != nil {
		who, _ := peerOf(ctx)
		s.refused.call(method, who, err)
	}
	return err
}

// errRevoked is what a call of a revoked certificate gets, refused or
// ended: PermissionDenied, with a message the client can print as it is
// and a reason it can test for (IsRevoked).
func errRevoked(id pki.Identity, leaf *x509.Certificate) error {
	return errinfo.New(codes.PermissionDenied, fmt.Sprintf("certificate revoked: the certificate of %s (serial %s) is on the deployment's revocation list and may call nothing more; the operator can issue a new one (wololo certs client)", id, leaf.SerialNumber.Text(16)), errorDomain, reasonRevoked)
}

// reasonRevoked is errRevoked's ErrorInfo reason.
const reasonRevoked = "CERTIFICATE_REVOKED"

// IsRevoked reports whether err is a server's refusal, or end, of a call
// because the caller's certificate was revoked.
func IsRevoked(err error) bool {
	return errinfo.Is(err, codes.PermissionDenied, errorDomain, reasonRevoked)
}

func (s *Server) authorizeUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := s.check(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	ctx, end := s.open.track(ctx, info.FullMethod)
	defer end()
	resp, err := handler(ctx, req)
	if rerr := revokedDuring(ctx); rerr != nil {
		return nil, rerr
	}
	return resp, err
}

func (s *Server) authorizeStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := s.check(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	ctx, end := s.open.track(ss.Context(), info.FullMethod)
	defer end()
	if ctx != ss.Context() {
		ss = revocableStream{ServerStream: ss, ctx: ctx}
	}
	err := handler(srv, ss)
	if rerr := revokedDuring(ctx); rerr != nil {
		return rerr
	}
	return err
}

// openCalls are a server's calls in progress of verified certificates
// (health's aside), so that the calls of a certificate revoked while
// they are open are ended (endRevoked) rather than left to run until
// they make another call, which a Watch stream or an upload does not.
type openCalls struct {
	creds *pki.Credentials // nil: nothing is tracked (--insecure)
	mu    sync.Mutex
	calls map[*openCall]struct{}
}

// openCall is one tracked call: its caller's certificate and how to end
// it.
type openCall struct {
	leaf   *x509.Certificate
	id     pki.Identity
	cancel context.CancelCauseFunc
}

// revokedCause is the cause of a call ended by endRevoked: its error.
type revokedCause struct{ err error }

func (c revokedCause) Error() string { return c.err.Error() }

// track returns the context a call of ctx's peer runs with, which
// endRevoked cancels once the peer's certificate is revoked, and end, to
// call when the call returns. A call without a verified certificate, or
// health, or any call without credentials, keeps ctx.
func (o *openCalls) track(ctx context.Context, method string) (context.Context, func()) {
	if o.creds == nil || serviceOf(method) == serviceHealth {
		return ctx, func() {}
	}
	leaf, ok := pki.PeerLeaf(ctx)
	if !ok {
		return ctx, func() {}
	}
	id, _ := pki.Peer(ctx)
	ctx, cancel := context.WithCancelCause(ctx)
	call := &openCall{leaf: leaf, id: id, cancel: cancel}
	o.mu.Lock()
	o.calls[call] = struct{}{}
	o.mu.Unlock()
	return ctx, func() {
		o.mu.Lock()
		delete(o.calls, call)
		o.mu.Unlock()
		cancel(nil)
	}
}

// endRevoked ends every open call whose certificate the revocation list
// now revokes, with errRevoked as its cause: the handler sees its context
// end, and the caller gets errRevoked whatever the handler returns. It
// runs when the list is read anew (pki.Credentials.OnRevocation) and
// returns whose calls it ended, one entry per call.
func (o *openCalls) endRevoked() []string {
	o.mu.Lock()
	calls := make([]*openCall, 0, len(o.calls))
	for c := range o.calls {
		calls = append(calls, c)
	}
	o.mu.Unlock()
	var ended []string
	for _, c := range calls { // without mu: RevokedCert may read the list
		if o.creds.RevokedCert(c.leaf) {
			c.cancel(revokedCause{errRevoked(c.id, c.leaf)})
			ended = append(ended, c.id.String())
		}
	}
	return ended
}

// revokedDuring is errRevoked if endRevoked ended the call of ctx; nil
// otherwise.
func revokedDuring(ctx context.Context) error {
	var rc revokedCause
	if errors.As(context.Cause(ctx), &rc) {
		return rc.err
	}
	return nil
}

// revocableStream is a tracked stream: its context is the call's
// tracked one, and once endRevoked ended the call nothing more is sent or
// received on it (a handler that only sends, or only receives, and never
// looks at its context still stops at its next message).
type revocableStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s revocableStream) Context() context.Context { return s.ctx }

func (s revocableStream) SendMsg(m any) error {
	if err := revokedDuring(s.ctx); err != nil {
		return err
	}
	return s.ServerStream.SendMsg(m)
}

func (s revocableStream) RecvMsg(m any) error {
	if err := revokedDuring(s.ctx); err != nil {
		return err
	}
	err := s.ServerStream.RecvMsg(m)
	if rerr := revokedDuring(s.ctx); rerr != nil {
		return rerr
	}
	return err
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
