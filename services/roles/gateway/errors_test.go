package gateway

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestToStatus(t *testing.T) {
	cases := []struct {
		name string
		err  error
		code codes.Code
		msg  string
	}{
		{"no job", errorf(ErrNoJob, "no job %q", "x"), codes.NotFound, `no job "x"`},
		{"bad header", errorf(ErrInvalid, "matches.csv: header has no %q column", "token"), codes.InvalidArgument, `matches.csv: header has no "token" column`},
		{"busy", errorf(ErrBusy, "job j: matches.csv is already being uploaded"), codes.FailedPrecondition, "job j: matches.csv is already being uploaded"},
		{"not done", errorf(ErrNotDone, "job j is running, not done"), codes.FailedPrecondition, "job j is running, not done"},
		{"size mismatch", errorf(ErrDataLoss, "short"), codes.DataLoss, "short"},
		{"store", fmt.Errorf("upload: %w", errorf(ErrStore, "commit: disk full")), codes.Unavailable, "upload: commit: disk full"},
		{"full", errorf(ErrFull, "the gateway holds 1024 jobs"), codes.ResourceExhausted, "the gateway holds 1024 jobs"},
		{"canceled", fmt.Errorf("wait: %w", context.Canceled), codes.Canceled, "wait: context canceled"},
		{"deadline", context.DeadlineExceeded, codes.DeadlineExceeded, "context deadline exceeded"},
		{"a status passes through", status.Error(codes.Aborted, "stream broke"), codes.Aborted, "stream broke"},
		{"anything else", errors.New("bug"), codes.Internal, "bug"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, _ := status.FromError(toStatus(c.err))
			if st.Code() != c.code || st.Message() != c.msg {
				t.Fatalf("toStatus = %v %q, want %v %q", st.Code(), st.Message(), c.code, c.msg)
			}
		})
	}
	if toStatus(nil) != nil {
		t.Fatal("toStatus(nil) is not nil")
	}
}
