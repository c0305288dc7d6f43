package client

import (
	"context"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// Finish ends the standing job o.JobID as `client close` does, follows
// it until it is done, and writes its results (its last version, which a
// batch job over every epoch's rows gives) into o.Out as a submit writes
// a job's, with its rejects; the job is then released at the gateway
// unless o.Keep. What `wololo local run --epochs N` does after its last
// append.
func Finish(ctx context.Context, o SubmitOptions) (sum *Summary, err error) {
	start := time.Now()
	gw, err := openOut(o)
	if err != nil {
		return nil, err
	}
	defer gw.Close()
	sum = &Summary{JobID: o.JobID, Files: map[string]string{}}
	defer func() { sum.Total = time.Since(start) }()
	if _, err := gw.CloseJob(ctx, o.JobID); err != nil {
		return sum, explain(o.Server, err)
	}
	if sum.Job, err = gw.Watch(ctx, o.JobID, nil); err != nil {
		return sum, explain(o.Server, err)
	}
	if sum.Job.GetState() != wololov1.JobState_JOB_STATE_DONE {
		return sum, failed(sum, o.Out)
	}
	if sum.Files, sum.Epoch, err = gw.FetchVersion(ctx, o.JobID, 0, o.Out); err != nil {
		return sum, explain(o.Server, err)
	}
	sum.Epoch = 0 // the job's results, not a version
	if sum.Rejects, _, err = WriteRejects(o.Out, sum.Job); err != nil {
		return sum, err
	}
	if !o.Keep {
		if err := gw.Delete(ctx, o.JobID); err != nil {
			o.notice("warning: could not release job %s at the gateway (%v)\n", o.JobID, err)
		}
	}
	return sum, nil
}
