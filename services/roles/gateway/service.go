package gateway

import (
	"context"
	"strings"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// jobService is the JobService adapter: it decodes requests, calls the job
// domain and the upload path, and maps their errors to gRPC codes
// (toStatus). It holds no state of its own.
type jobService struct {
	wololov1.UnimplementedJobServiceServer
	g *Gateway
}

// CreateJob checks both headers and the job's queries, and creates the
// caller's job; for a job of queries it answers with their plans.
func (s jobService) CreateJob(ctx context.Context, req *wololov1.CreateJobRequest) (*wololov1.CreateJobResponse, error) {
	owner, err := s.g.identify(ctx)
	if err != nil {
		return nil, err
	}
	c, err := s.g.createJob(ctx, owner, req)
	if err != nil {
		return nil, toStatus(err)
	}
	return &wololov1.CreateJobResponse{JobId: c.j.name, Resumed: c.resumed, Explain: c.explain}, nil
}

// job is the caller's job of that name (NotFound for anyone else's).
func (s jobService) job(ctx context.Context, name string) (*job, error) {
	owner, err := s.g.identify(ctx)
	if err != nil {
		return nil, err
	}
	j, err := s.g.jobs.lookup(owner, name)
	return j, toStatus(err)
}

// Upload takes one file of a job; see JobService.
func (s jobService) Upload(stream wololov1.JobService_UploadServer) error {
	return toStatus(s.g.upload(stream))
}

// GetJob returns a job's state.
func (s jobService) GetJob(ctx context.Context, req *wololov1.GetJobRequest) (*wololov1.GetJobResponse, error) {
	j, err := s.job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	view, _ := j.view()
	view.Stages = s.g.jobStages(ctx, j.id, view.State)
	return &wololov1.GetJobResponse{Job: view}, nil
}

// WatchJob streams a job's state on every change (at most every 200 ms,
// at least every 2 s) until it is done or failed, where the graph stands
// on it asked again at most every second.
func (s jobService) WatchJob(req *wololov1.WatchJobRequest, stream wololov1.JobService_WatchJobServer) error {
	j, err := s.job(stream.Context(), req.GetJobId())
	if err != nil {
		return err
	}
	var stages []*wololov1.StageProgress
	var stagesAt time.Time
	for {
		j = j.follow() // a rebuilt job's new run (rebuild.go)
		view, changed := j.view()
		if time.Since(stagesAt) >= time.Second {
			stages, stagesAt = s.g.jobStages(stream.Context(), j.id, view.State), time.Now()
		}
		view.Stages = stages
		if err := stream.Send(&wololov1.WatchJobResponse{Job: view}); err != nil {
			return err
		}
		if view.State == wololov1.JobState_JOB_STATE_DONE || view.State == wololov1.JobState_JOB_STATE_FAILED {
			// A job deleted on purpose ends its watch with the deletion
			// (ErrDeleted), after its last state: a client tells it
			// from a job that failed or was lost.
			if why := j.deletedWhy(); why != "" {
				return toStatus(errorf(ErrDeleted, "job %q was %s", j.name, why))
			}
			return nil
		}
		select {
		case <-stream.Context().Done():
			return toStatus(stream.Context().Err())
		case <-changed:
			time.Sleep(200 * time.Millisecond)
		case <-time.After(2 * time.Second):
		}
	}
}

// resultChunk is the largest piece of a result file sent in one message.
const resultChunk = 1 << 20

// GetResults streams the result files of a finished job: NAME.csv of each
// of its queries, in order (q1.csv..q4.csv for the built-in job); of a
// standing job, those of a version (the latest unless the request names
// one: versionFiles).
func (s jobService) GetResults(req *wololov1.GetResultsRequest, stream wololov1.JobService_GetResultsServer) error {
	j, err := s.job(stream.Context(), req.GetJobId())
	if err != nil {
		return err
	}
	results, epoch, err := j.versionFiles(req.GetEpoch())
	if err != nil {
		return toStatus(err)
	}
	rows := j.versionRows(epoch)
	for _, name := range resultNames(j, results) {
		if err := sendChunks(results[name], func(data []byte) error {
			return stream.Send(&wololov1.GetResultsResponse{Name: name, Data: data, Epoch: epoch, Rows: rows})
		}); err != nil {
			return err
		}
	}
	return nil
}

// sendChunks sends data in pieces of at most resultChunk bytes, one at
// least (an empty file is one empty piece).
func sendChunks(data []byte, send func([]byte) error) error {
	for {
		n := min(len(data), resultChunk)
		if err := send(data[:n]); err != nil {
			return err
		}
		data = data[n:]
		if len(data) == 0 {
			return nil
		}
	}
}

// AppendJob opens the next epoch of the caller's standing job.
func (s jobService) AppendJob(ctx context.Context, req *wololov1.AppendJobRequest) (*wololov1.AppendJobResponse, error) {
	j, err := s.job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	if err := j.notAdded(); err != nil {
		return nil, toStatus(err)
	}
	if err := j.follow().checkAppendFiles(req); err != nil {
		return nil, toStatus(err)
	}
	a, err := s.g.jobs.appendEpoch(j.follow(), req)
	if err != nil {
		return nil, toStatus(err)
	}
	return &wololov1.AppendJobResponse{Epoch: a.epoch, Resumed: a.resumed}, nil
}

// CloseJob ends the caller's standing job's input.
func (s jobService) CloseJob(ctx context.Context, req *wololov1.CloseJobRequest) (*wololov1.CloseJobResponse, error) {
	j, err := s.job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	if err := j.notAdded(); err != nil {
		return nil, toStatus(err)
	}
	epochs, err := s.g.closeJob(ctx, j.follow())
	if err != nil {
		return nil, toStatus(err)
	}
	return &wololov1.CloseJobResponse{Epochs: epochs}, nil
}

// WatchAnswers streams each published version's change, from the first
// epoch asked for, waiting for each, until the job is done (closed, its
// last version sent: closed) or failed (its failure).
func (s jobService) WatchAnswers(req *wololov1.WatchAnswersRequest, stream wololov1.JobService_WatchAnswersServer) error {
	j, err := s.job(stream.Context(), req.GetJobId())
	if err != nil {
		return err
	}
	if j.standing == nil {
		return toStatus(errorf(ErrNotStanding, "job %q is a batch job: it has no versions to watch (client results gets its answers)", j.name))
	}
	for epoch := max(req.GetFromEpoch(), 1); ; {
		j = j.follow() // a rebuilt job's new run, which publishes its versions again (rebuildstanding.go)
		changes, published, done, changed, err := j.change(epoch)
		switch {
		case err != nil:
			return toStatus(err)
		case published:
			names := resultNames(j, changes) // its queries', and those added to it (addquery.go)
			for i, name := range names {
				if err := sendChunks(changes[name], func(data []byte) error {
					return stream.Send(&wololov1.WatchAnswersResponse{Epoch: epoch, Query: strings.TrimSuffix(name, ".csv"), Data: data})
				}); err != nil {
					return err
				}
				if i == len(names)-1 {
					if err := stream.Send(&wololov1.WatchAnswersResponse{Epoch: epoch, EndOfEpoch: true}); err != nil {
						return err
					}
				}
			}
			epoch++
			continue
		case done:
			return stream.Send(&wololov1.WatchAnswersResponse{Closed: true})
		}
		select {
		case <-stream.Context().Done():
			return toStatus(stream.Context().Err())
		case <-changed:
		}
	}
}

// QueryJob answers a one-off query over the caller's standing job's
// epochs published so far (oneoff.go), its CSV in pieces; or adds
// queries to it (addquery.go).
func (s jobService) QueryJob(req *wololov1.QueryJobRequest, stream wololov1.JobService_QueryJobServer) error {
	owner, err := s.g.identify(stream.Context())
	if err != nil {
		return err
	}
	if len(req.GetAdd()) > 0 {
		// Queries added to the job (addquery.go): no answer, the epoch
		// they were added at, once their versions so far are published.
		if req.GetSql() != "" {
			return toStatus(errorf(ErrInvalid, "a one-off query (sql) or queries to add, not both"))
		}
		at, err := s.g.addQueries(stream.Context(), owner, req.GetJobId(), req.GetAdd())
		if err != nil {
			return toStatus(err)
		}
		return stream.Send(&wololov1.QueryJobResponse{Epochs: at})
	}
	answer, epochs, err := s.g.queryJob(stream.Context(), owner, req.GetJobId(), req.GetSql())
	if err != nil {
		return toStatus(err)
	}
	return sendChunks(answer, func(data []byte) error {
		return stream.Send(&wololov1.QueryJobResponse{Data: data, Epochs: epochs})
	})
}

// DeleteJob drops a job the client has the results of: here at once
// (durably), and at every other process in the background.
func (s jobService) DeleteJob(ctx context.Context, req *wololov1.DeleteJobRequest) (*wololov1.DeleteJobResponse, error) {
	j, err := s.job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	if err := s.g.deleteJob(j.id, "cancelled by its client"); err != nil {
		return nil, toStatus(err)
	}
	return &wololov1.DeleteJobResponse{}, nil
}

// ListJobs lists the caller's own jobs, oldest first.
func (s jobService) ListJobs(ctx context.Context, _ *wololov1.ListJobsRequest) (*wololov1.ListJobsResponse, error) {
	owner, err := s.g.identify(ctx)
	if err != nil {
		return nil, err
	}
	out := &wololov1.ListJobsResponse{}
	for _, j := range s.g.jobs.ownedBy(owner) {
		out.Jobs = append(out.Jobs, j.listing())
	}
	return out, nil
}
