package node

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/stage"
	"github.com/wololo/wololo/transport"
)

// restoreOutbox puts the store's unacknowledged batches back in the outbox
// and returns the channels that still have something to send.
func restoreOutbox(outbox *transport.Outbox, img *transport.Image) []transport.ChannelID {
	var resume []transport.ChannelID
	for _, ji := range img.Jobs {
		for ch, reserved := range ji.Reserved {
			if outbox.Restore(ch, reserved, ji.Acked[ch], ji.Outbox[ch]) {
				resume = append(resume, ch)
			}
		}
	}
	return resume
}

// receivers lists every instance that self sends to.
func receivers(top deploy.Topology, self deploy.Instance) []deploy.Instance {
	seen := map[string]bool{}
	var out []deploy.Instance
	for _, st := range top.Outputs(self.Stage) {
		if seen[st.To] {
			continue
		}
		seen[st.To] = true
		for i := 0; i < top.Replicas(st.To); i++ {
			out = append(out, deploy.Instance{Stage: st.To, Index: i})
		}
	}
	return out
}

// retry calls f until it succeeds, ctx ends, or it returns a permanent
// error (a gRPC status other than Unavailable, DeadlineExceeded or
// Canceled is permanent).
func retry(ctx context.Context, f func(ctx context.Context) error) error {
	delay := 100 * time.Millisecond
	for {
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := f(callCtx)
		cancel()
		if err == nil {
			return nil
		}
		switch status.Code(err) {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		default:
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay + time.Duration(rand.Int64N(int64(delay)/2+1))):
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// announce tells every receiver of self that this incarnation exists, so
// that they refuse an older one (a paused zombie) from now on. A receiver
// that already knows a newer incarnation of self means this process has
// been replaced: it stops.
func announce(ctx context.Context, top deploy.Topology, self deploy.Instance, incarnation uint64, pool *transport.Pool, log hclog.Logger, fail func(error)) {
	for _, to := range receivers(top, self) {
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
			return
		case status.Code(err) == codes.FailedPrecondition:
			fail(fmt.Errorf("%s incarnation %d was replaced: %w", self.Name(), incarnation, err))
			return
		default:
			log.Warn("announce failed", "receiver", to.Name(), "error", err)
		}
	}
	log.Debug("announced incarnation", "incarnation", incarnation)
}

// dropEverywhere drops a job at every instance of the topology: through
// the local runtime for self, over StageService.DropJob for the others.
func dropEverywhere(ctx context.Context, top deploy.Topology, self deploy.Instance, local *stage.Runtime, pool *transport.Pool, job string) error {
	var errs []error
	for _, in := range top.Instances() {
		if in == self {
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
