package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/backoff"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/services/wire/rpc"
	"github.com/wololo/wololo/transport"
)

// neighbours lists every instance that self sends to or receives from: a
// job's plan sends between any instances of the gateway's task and the
// shard task (from the gateway to itself, from shard to shard too).
func neighbours(top deploy.Topology, self deploy.Instance) []deploy.Instance {
	shape, err := physical.ShapeOf(top)
	if err != nil || (self.Stage != shape.Gateway.Name && self.Stage != shape.Shard.Name) {
		return nil
	}
	var out []deploy.Instance
	for _, task := range []physical.Task{shape.Gateway, shape.Shard} {
		if len(out) > 0 && task.Name == shape.Gateway.Name {
			break // one task for all: listed already
		}
		for i := range task.Replicas {
			out = append(out, deploy.Instance{Stage: task.Name, Index: i})
		}
	}
	return out
}

// neighbourRetry is how a node retries a call to another process: with
// no bound but its context, each call given callTimeout.
var neighbourRetry = backoff.Retry{First: 100 * time.Millisecond, Max: 2 * time.Second, Jitter: 0.5}

// callTimeout bounds one call of retry's.
const callTimeout = 5 * time.Second

// retry calls f until it succeeds, ctx ends, or it returns a permanent
// error (a gRPC status other than Unavailable, DeadlineExceeded or
// Canceled is permanent).
func retry(ctx context.Context, f func(ctx context.Context) error) error {
	transient := func(err error) bool {
		switch status.Code(err) {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
			return true
		}
		return false
	}
	return neighbourRetry.Do(ctx, transient, func(ctx context.Context) error {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		return f(callCtx)
	})
}

// announce tells every neighbour of self that this incarnation exists, so
// that from now on receivers refuse batches of an older one (a paused
// zombie) and senders ignore its acknowledgements. A neighbour that already
// knows a newer incarnation of self means this process has been replaced:
// it stops. It reports whether every neighbour has heard.
func announce(ctx context.Context, top deploy.Topology, self deploy.Instance, incarnation uint64, pool *rpc.Pool, log hclog.Logger, fail func(error)) bool {
	all := true
	for _, to := range neighbours(top, self) {
		err := retry(ctx, func(ctx context.Context) error {
			conn, _, err := pool.Conn(to.Name())
			if err != nil {
				return status.Error(codes.Unavailable, err.Error())
			}
			_, err = wololov1.NewStageServiceClient(conn).Announce(ctx, &wololov1.AnnounceRequest{Sender: self.Name(), Incarnation: incarnation})
			return err
		})
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return false
		case status.Code(err) == codes.FailedPrecondition:
			fail(fmt.Errorf("%s incarnation %d was replaced: %w", self.Name(), incarnation, err))
			return false
		default:
			all = false
			log.Warn("announce failed", "receiver", to.Name(), "error", err)
		}
	}
	log.Debug("announced incarnation", "incarnation", incarnation)
	return all
}

// reportChannelFailed is the Sender's OnFailed: a channel of a job cannot
// complete (its state was lost, its receiver does not know the job or
// refuses it for a limit), so the job cannot either. The gateway marks it
// failed, with the reason its client sees: here if this is the gateway,
// over StageService.FailJob otherwise, retried until the gateway has it or
// the node stops.
func (n *Node) reportChannelFailed(ctx context.Context, ch transport.ChannelID, reason error) {
	n.reportFailed(ctx, transport.JobFailure{Job: ch.Job, Reason: reason.Error(), StateLost: errors.Is(reason, transport.ErrStateLost), Lost: transport.LostInstance(reason)},
		n.log.With("job", ch.Job, "stream", ch.Stream, "receiver", ch.Receiver))
}

// reportFailed tells the gateway that a job cannot complete, and why
// (f, but for its reporter, this instance): a channel cannot complete
// (reportChannelFailed), or recovery could not restore the job's state
// (stage.Runtime.Unrestorable). Lost state is said so (f.StateLost), so
// that the job's client knows running it again gives its answers.
func (n *Node) reportFailed(ctx context.Context, f transport.JobFailure, log hclog.Logger) {
	self := n.cfg.Instance.Name()
	f.Reporter = self
	if n.Gateway != nil {
		if err := n.Gateway.FailJob(f); err != nil && !errors.Is(err, transport.ErrJobDropped) {
			log.Error("could not fail the job", "error", err)
		}
		return
	}
	gw := deploy.Instance{Stage: n.cfg.Topology.Gateway().Name}.Name()
	err := retry(ctx, func(ctx context.Context) error {
		conn, _, err := n.pool.Conn(gw)
		if err != nil {
			return status.Error(codes.Unavailable, err.Error())
		}
		_, err = wololov1.NewStageServiceClient(conn).FailJob(ctx, &wololov1.FailJobRequest{JobId: f.Job, Reporter: self, Reason: f.Reason, StateLost: f.StateLost, Lost: f.Lost})
		return err
	})
	switch {
	case err == nil:
		log.Info("reported the job failed to the gateway", "gateway", gw)
	case status.Code(err) == codes.NotFound:
		// The gateway does not hold the job (it was deleted, or lost
		// with the gateway's store): what this process keeps of it would
		// wait for ever. It is dropped here as a DropJob would, on a
		// goroutine of its own: this one may be a link the drop ends.
		log.Warn("the gateway does not hold the job; dropping it here", "gateway", gw, "error", err)
		go func() {
			if err := n.runtime.DropJob(f.Job); err != nil {
				log.Error("drop the job", "error", err)
			}
		}()
	case ctx.Err() == nil:
		log.Error("could not report the job failed to the gateway", "gateway", gw, "error", err)
	}
}

// heldJobsWait is how long a restarted instance waits for the gateway's
// answer to which of its jobs it still holds (forgetDeleted) before it
// replays them all.
const heldJobsWait = 3 * time.Second

// forgetDeleted drops from the store, and from img, the jobs the gateway
// no longer holds (deleted, by their client or the operator, or lost with
// the gateway's store, while this process was down), before Recover
// replays any: a job deleted for what it cost is not replayed into that
// cost first, and the restart takes the time of the jobs that are still
// there. The gateway is asked for heldJobsWait at most; unreachable (it
// restarts too), every job is replayed, and the gateway's drops reach
// this process once both serve, as they always did. Nothing to do at the
// gateway, whose job table is the answer.
func (n *Node) forgetDeleted(ctx context.Context, img *transport.Image) error {
	if n.Gateway != nil || len(img.Jobs) == 0 {
		return nil
	}
	ids := slices.Sorted(maps.Keys(img.Jobs))
	self := n.cfg.Instance.Name()
	gw := deploy.Instance{Stage: n.cfg.Topology.Gateway().Name}.Name()
	ctx, cancel := context.WithTimeout(ctx, heldJobsWait)
	defer cancel()
	held := map[string]bool{}
	for ask := range slices.Chunk(ids, transport.MaxHeldJobsAsked) {
		err := retry(ctx, func(ctx context.Context) error {
			conn, _, err := n.pool.Conn(gw)
			if err != nil {
				return status.Error(codes.Unavailable, err.Error())
			}
			resp, err := wololov1.NewStageServiceClient(conn).HeldJobs(ctx, &wololov1.HeldJobsRequest{Instance: self, JobIds: ask})
			for _, id := range resp.GetHeld() {
				held[id] = true
			}
			return err
		})
		if err != nil {
			n.log.Warn("could not ask the gateway which jobs it holds; replaying every job the store holds", "gateway", gw, "jobs", len(ids), "error", err)
			return nil
		}
	}
	for _, id := range ids {
		if held[id] {
			continue
		}
		if err := n.store.DropJob(id); err != nil {
			return fmt.Errorf("drop job %s, which the gateway no longer holds: %w", id, err)
		}
		delete(img.Jobs, id)
		img.Dropped = append(img.Dropped, id)
		n.log.Info("dropped a job the gateway no longer holds, before replaying it", "job", id, "gateway", gw)
	}
	slices.Sort(img.Dropped)
	return nil
}

// introduceEverywhere tells every instance of the topology but the gateway
// itself (whose job table is its introduction) of a new job and its
// physical plan (nil for the built-in job), over
// StageService.IntroduceJob, all at once, and returns once each has
// recorded it; an unreachable one is retried until ctx ends. Its error is
// the first refusal (a gRPC status, wrapped with the instance's name).
func introduceEverywhere(ctx context.Context, top deploy.Topology, self deploy.Instance, pool *rpc.Pool, job string, plan []byte) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	others := slices.DeleteFunc(top.Instances(), func(in deploy.Instance) bool { return in == self })
	errs := make(chan error, len(others))
	for _, in := range others {
		go func() {
			err := retry(ctx, func(ctx context.Context) error {
				conn, _, err := pool.Conn(in.Name())
				if err != nil {
					return status.Error(codes.Unavailable, err.Error())
				}
				_, err = wololov1.NewStageServiceClient(conn).IntroduceJob(ctx, &wololov1.IntroduceJobRequest{JobId: job, Plan: plan})
				return err
			})
			if err != nil {
				err = fmt.Errorf("introduce job %s to %s: %w", job, in.Name(), err)
			}
			errs <- err
		}()
	}
	var first error
	for range others {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel() // the job will not run: stop asking the others
		}
	}
	return first
}

// dropEverywhere drops a job at every instance of the topology: through
// the local runtime for self (unless onlyOthers: the gateway keeps its
// record of a job the graph refused), over StageService.DropJob for the
// others.
func dropEverywhere(ctx context.Context, top deploy.Topology, self deploy.Instance, local *stage.Runtime, pool *rpc.Pool, job string, onlyOthers bool) error {
	var errs []error
	for _, in := range top.Instances() {
		if in == self {
			if onlyOthers {
				continue
			}
			if err := local.DropJob(job); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		err := retry(ctx, func(ctx context.Context) error {
			conn, _, err := pool.Conn(in.Name())
			if err != nil {
				return status.Error(codes.Unavailable, err.Error())
			}
			_, err = wololov1.NewStageServiceClient(conn).DropJob(ctx, &wololov1.DropJobRequest{JobId: job})
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", in.Name(), err))
		}
	}
	return errors.Join(errs...)
}
