package client

import (
	"context"
	"errors"
	"fmt"
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

// errGotEpoch ends a WatchAnswers once the epoch asked for is in.
var errGotEpoch = errors.New("got the epoch")

// ChangeSizes are the rows version epoch of the standing job id adds to
// each query's answer and takes away from it (its change from the
// version before, as `watch --answers` prints it), by query name; a
// query the version left alone has none.
func (s *Session) ChangeSizes(ctx context.Context, id string, epoch int64) (in, out map[string]int64, err error) {
	in, out = map[string]int64{}, map[string]int64{}
	err = s.WatchAnswers(ctx, id, epoch, func(got int64, rows []AnswerChange) error {
		if got != epoch {
			return fmt.Errorf("job %s: asked for the change of epoch %d, got epoch %d's", id, epoch, got)
		}
		for _, r := range rows {
			if r.Diff > 0 {
				in[r.Query] += r.Diff
			} else {
				out[r.Query] -= r.Diff
			}
		}
		return errGotEpoch
	})
	if errors.Is(err, errGotEpoch) {
		err = nil
	}
	return in, out, err
}
