// Package errinfo gives a gRPC status a reason its caller can test for
// (a google.rpc.ErrorInfo detail of a domain and a reason), so that a
// refusal that calls for its own handling is told apart from others of
// the same code without matching its message: the transport's "job not
// introduced" (NOT_FOUND, unlike a dropped job's) and a recovering
// process's refusal (UNAVAILABLE, unlike a process that is down).
//
// It is a generic leaf: it imports nothing of this module.
package errinfo

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// New is a status error of code and msg carrying the reason of domain.
func New(code codes.Code, msg, domain, reason string) error {
	st := status.New(code, msg)
	if withInfo, err := st.WithDetails(&errdetails.ErrorInfo{Domain: domain, Reason: reason}); err == nil {
		st = withInfo
	}
	return st.Err()
}

// Is reports whether err is a status error of code carrying the reason of
// domain (New's).
func Is(err error, code codes.Code, domain, reason string) bool {
	st, ok := status.FromError(err)
	if !ok || st.Code() != code {
		return false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Domain == domain && info.Reason == reason {
			return true
		}
	}
	return false
}
