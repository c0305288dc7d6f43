package rpc

import (
	"google.golang.org/grpc/codes"

	"github.com/wololo/wololo/internal/errinfo"
)

// reasonJobDeleted is JobDeletedError's ErrorInfo reason.
const reasonJobDeleted = "JOB_DELETED"

// JobDeletedError is a JobService call's error about a job that was
// deleted on purpose (by its client, by the operator, by the gateway's
// retention) rather than lost: NotFound, with msg, which says by whom, and
// a reason its caller can test for (IsJobDeleted). A client that follows
// the job then ends with the deletion instead of submitting the job again
// as it would a job the gateway lost (NotFound without the reason).
func JobDeletedError(msg string) error {
	return errinfo.New(codes.NotFound, msg, errorDomain, reasonJobDeleted)
}

// IsJobDeleted reports whether err is a JobDeletedError.
func IsJobDeleted(err error) bool {
	return errinfo.Is(err, codes.NotFound, errorDomain, reasonJobDeleted)
}
