package gateway

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/transport"
)

// Introducer tells every other process of the deployment of a new job, with
// its physical plan (nil for the built-in job: IntroduceJobRequest.plan),
// and returns once each has recorded it (StageService.IntroduceJob), retrying
// while one is unreachable, until ctx ends. Its error is otherwise the
// first refusal, a gRPC status: RESOURCE_EXHAUSTED when a process holds as
// many jobs as it may, NOT_FOUND when one has dropped the job.
type Introducer func(ctx context.Context, job string, plan []byte) error

// introduction is one job's introduction, run by the first upload that
// needs it; the other uploads of the job wait for it.
type introduction struct {
	done chan struct{}
	err  error // set before done is closed
}

// SetIntroducer sets how a new job is introduced to the other processes.
// Call it before serving.
func (g *Gateway) SetIntroducer(f Introducer) { g.introducer = f }

// Knows reports whether the job table holds a job (by its internal id):
// the gateway's own stage runtime takes the streams of these jobs, which
// the gateway never introduces to itself (stage.Config.Known).
func (g *Gateway) Knows(id string) bool {
	_, err := g.jobs.get(id)
	return err == nil
}

// HeldJobs is the jobs of ids the job table holds, in their order: what a
// restarted instance keeps of what its store holds (StageService.HeldJobs)
// before it replays any.
func (g *Gateway) HeldJobs(ids []string) []string {
	var held []string
	for _, id := range ids {
		if g.Knows(id) {
			held = append(held, id)
		}
	}
	return held
}

// PlanOf is the physical plan of a job the job table holds (by its
// internal id), as its record holds it (physical.Encode), nil for the
// built-in job; ok reports whether the job is known (Knows). The
// gateway's own stage runtime runs a job's plan from it.
func (g *Gateway) PlanOf(id string) (plan []byte, ok bool) { return g.jobs.planOf(id) }

// introduce makes sure that every process of the deployment has recorded job j
// before an upload of it sends anything: the processes keep state only for
// jobs introduced to them (see the package doc). It runs once per job and
// gateway incarnation; after a restart the first upload of a job
// introduces it again, which the processes take as done already. A job a
// process refuses fails, and is dropped at every other process
// (introduceOnce).
func (g *Gateway) introduce(ctx context.Context, j *job) error {
	for {
		if err := j.failure(); err != nil {
			return err
		}
		g.mu.Lock()
		in, running := g.introductions[j.id]
		if !running {
			in = &introduction{done: make(chan struct{})}
			g.introductions[j.id] = in
		}
		g.mu.Unlock()
		if running {
			select {
			case <-in.done:
				if in.err == nil {
					return nil
				}
				continue // the other upload gave up or the job failed: see again
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		in.err = g.introduceOnce(ctx, j)
		if in.err != nil {
			g.mu.Lock()
			delete(g.introductions, j.id)
			g.mu.Unlock()
		}
		close(in.done)
		return in.err
	}
}

// introduceOnce calls the Introducer. A job the graph refuses
// (refusedIntroduction) can never run: it fails with the refusing
// process's words, recorded as any failure is (FailJob), which its
// upload, its watchers and its listing show, and it is dropped at every
// other process, so that those that took the introduction before another
// refused it hold nothing of it (each held one of its --max-jobs). The
// gateway keeps the failed job for its client until it is deleted or its
// retention ends, as any failed job. Any other error ends the upload, and
// the next one tries again.
func (g *Gateway) introduceOnce(ctx context.Context, j *job) error {
	err := g.introducer(ctx, j.id, j.plan)
	switch {
	case err == nil:
		j.log.Debug("job introduced everywhere")
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case !refusedIntroduction(err):
		j.log.Warn("could not introduce the job", "error", err)
		return err
	}
	j.log.Warn("job refused by the graph; it fails, and is dropped at every other process", "error", err)
	reason := "the graph refused the job: " + statusMessage(err)
	if ferr := g.FailJob(transport.JobFailure{Job: j.id, Reporter: g.self.Name(), Reason: reason}); ferr != nil {
		return ferr
	}
	g.queueDrop(pendingDrop{id: j.id, onlyOthers: true})
	if ferr := j.failure(); ferr != nil {
		return ferr
	}
	return err
}

// refusedIntroduction reports whether an Introducer's error is a process's
// refusal of the job, which asking again will not change: a limit
// (RESOURCE_EXHAUSTED, --max-jobs), a job it has dropped (NOT_FOUND), a
// plan it cannot run (INVALID_ARGUMENT; CreateJob checks plans as the
// processes do, so only a process of another build refuses one).
func refusedIntroduction(err error) bool {
	switch status.Code(err) {
	case codes.ResourceExhausted, codes.NotFound, codes.InvalidArgument:
		return true
	}
	return false
}

// statusMessage is the message of the gRPC status err wraps (the refusing
// process's own words), else err's.
func statusMessage(err error) string {
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus().Message()
	}
	return err.Error()
}

// forgetIntroduction forgets a deleted job's introduction.
func (g *Gateway) forgetIntroduction(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.introductions, id)
}
