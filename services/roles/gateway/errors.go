package gateway

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/services/wire/rpc"
)

// The kinds of error the job domain returns. Each error also carries its
// own message, which is what the client is shown.
var (
	// ErrNoJob: no job has that id (never created, or dropped).
	ErrNoJob = errors.New("no such job")
	// ErrInvalid: the request itself is wrong (a header, an id, a frame).
	ErrInvalid = errors.New("invalid request")
	// ErrBusy: the file is being uploaded by another call.
	ErrBusy = errors.New("upload in progress")
	// ErrNotDone: the job has no results yet.
	ErrNotDone = errors.New("job not done")
	// ErrDataLoss: the client and the gateway disagree on what was sent.
	ErrDataLoss = errors.New("upload incomplete")
	// ErrStore: the store refused a write; the call may be retried (the
	// process stops on a failed write and resumes from its store once
	// restarted: see transport.FailStop).
	ErrStore = errors.New("store unavailable")
	// ErrFull: a limit is reached (jobs at once); the message names it.
	ErrFull = errors.New("limit reached")
	// ErrConflict: a job resumed with other files than it was made from.
	ErrConflict = errors.New("other files")
	// ErrJobFailed: the job failed (see its message); it takes no more
	// uploads.
	ErrJobFailed = errors.New("job failed")
	// ErrDeleted: the job was deleted on purpose (by its client, by the
	// operator, or by the retention), not lost: its client is told so
	// with a reason it can test for (rpc.IsJobDeleted), so that it does
	// not submit again a job that was cancelled.
	ErrDeleted = errors.New("job deleted")
	// ErrRebuilt: the run an upload was feeding was replaced by a
	// rebuild (rebuild.go); the upload resumes into the new run.
	ErrRebuilt = errors.New("job run again")
	// ErrNotStanding: a call for a standing job's epochs (an append, a
	// close) on a job that takes none now: a batch job, a closed one, or
	// one whose open epoch must end first.
	ErrNotStanding = errors.New("no epoch to take")
)

// kindError is an error of one of the kinds above with its own message.
type kindError struct{ kind, err error }

func (e kindError) Error() string   { return e.err.Error() }
func (e kindError) Unwrap() []error { return []error{e.kind, e.err} }

func errorf(kind error, format string, args ...any) error {
	return kindError{kind: kind, err: fmt.Errorf(format, args...)}
}

// toStatus maps an error of the job domain to the gRPC status a client
// gets. It is the only place that chooses codes; a status error (from the
// stream itself) passes through.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, ErrDeleted) {
		return rpc.JobDeletedError(err.Error())
	}
	code := codes.Internal
	switch {
	case errors.Is(err, ErrNoJob):
		code = codes.NotFound
	case errors.Is(err, ErrInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, ErrBusy), errors.Is(err, ErrNotDone), errors.Is(err, ErrConflict), errors.Is(err, ErrJobFailed), errors.Is(err, ErrNotStanding):
		code = codes.FailedPrecondition
	case errors.Is(err, ErrDataLoss):
		code = codes.DataLoss
	case errors.Is(err, ErrStore), errors.Is(err, ErrRebuilt):
		code = codes.Unavailable
	case errors.Is(err, ErrFull):
		code = codes.ResourceExhausted
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	return status.Error(code, err.Error())
}
