package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/wololo/wololo/services/cmdline/cli"
)

// writeSubmitJSON prints what `wololo client submit --json` ended with:
// one SubmitReport on stdout whatever happened after its flags parsed, so
// that a script always has an object to read. After a failure it has error
// and hint (submitHint when the error carries none); when the job was never
// created at the gateway its job_id is the --job given (or "") and its
// state "unknown". It returns err, or the write's error after a success.
func writeSubmitJSON(ctx context.Context, w io.Writer, o SubmitOptions, sum *Summary, err error) error {
	created := sum != nil
	if !created {
		sum = &Summary{JobID: o.JobID}
	}
	r := NewSubmitReport(sum, err)
	if o.Explain == nil {
		r.Explain = "" // asked for with --explain only
	}
	if err != nil && r.Hint == "" {
		r.Hint = submitHint(ctx, o.Server, sum.JobID, created, err)
	}
	if werr := WriteJSON(w, r); werr != nil && err == nil {
		return werr
	}
	return err
}

// submitHint says what to do after a failed submit whose error carries no
// hint of its own (a job left at the gateway has one: how to resume it);
// id is the job's name ("" when none was given and the job was not
// created), created whether the job exists at the gateway at server.
func submitHint(ctx context.Context, server, id string, created bool, err error) string {
	job := "ID"
	if id != "" {
		job = id
	}
	switch {
	case errors.Is(err, cli.ErrJobFailed):
		return fmt.Sprintf("a failed job cannot be resumed: drop it with `wololo client cancel --job %s` and submit again, or submit under another --job", job)
	case created:
		return fmt.Sprintf("job %s stays at the gateway: `wololo client status --job %s` shows it, `wololo client cancel --job %s` drops it", job, job, job)
	case ctx.Err() != nil:
		return "interrupted before the gateway took the job: run the same command again"
	case errors.Is(err, cli.ErrUsage):
		return "see `wololo client submit -h` for the flags"
	case errors.Is(err, cli.ErrUnreachable):
		return fmt.Sprintf("check that a gateway runs at %s (--server; `wololo local` runs one on this machine) and run the same command again; --connect-timeout sets the wait", server)
	case errors.Is(err, cli.ErrRefused):
		return fmt.Sprintf("the error says what the gateway refused; `wololo client list` shows this client's jobs, `wololo client cancel --job %s` drops one whose name is taken or that holds a limit", job)
	}
	return "nothing was left at the gateway: fix what the error names and run the same command again"
}
