package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/backoff"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/wire/rpc"
)

// DefaultReach is how long a client command waits for an unreachable
// gateway before it gives up (--connect-timeout).
const DefaultReach = 30 * time.Second

// ErrUnreachable is matched by the error of a call that gave up because the
// gateway could not be reached within the session's Reach. It is a
// cli.ErrUnreachable: the command exits with status 5.
var ErrUnreachable = cli.Mark(errors.New("cannot reach the gateway"), cli.ErrUnreachable)

// Session is a client's connection to one gateway. Every call first waits
// for the connection to be up, but at most Reach, so that no command hangs
// on a gateway that is down: it ends with ErrUnreachable instead. Once up,
// calls wait as long as they need (a job may run for minutes).
type Session struct {
	Server string
	Reach  time.Duration
	Jobs   wololov1.JobServiceClient
	// Notify, if set, is told about a wait for the gateway (stderr).
	Notify  io.Writer
	conn    *grpc.ClientConn
	tls     *tls.Config
	reached bool // the connection was up once
}

// Open connects to the gateway at server with tlsConfig (nil: plain TCP);
// reach is DefaultReach if zero. A malformed address is a usage error
// (CheckServer).
func Open(server string, tlsConfig *tls.Config, reach time.Duration) (*Session, error) {
	if err := CheckServer(server); err != nil {
		return nil, err
	}
	conn, err := Dial(server, tlsConfig)
	if err != nil {
		return nil, err
	}
	if reach <= 0 {
		reach = DefaultReach
	}
	return &Session{Server: server, Reach: reach, Jobs: wololov1.NewJobServiceClient(conn), conn: conn, tls: tlsConfig}, nil
}

// Close closes the connection.
func (s *Session) Close() error { return s.conn.Close() }

// ready waits until the connection is up and the gateway done recovering
// from its store, at most Reach. Until the gateway was reached once, a
// connection that does not come up at once is probed (reach.go): an
// address that is not the gateway's public port fails at once, a refused
// port or an unknown host after RefusedGrace (judge); any wait is said on
// Notify, once and then every NoticeEvery.
func (s *Session) ready(ctx context.Context) error {
	wait, cancel := context.WithTimeout(ctx, s.Reach)
	defer cancel()
	s.conn.Connect()
	start := time.Now()
	var last diagnosis
	var lastProbe, lastNotice time.Time
	for {
		st := s.conn.GetState()
		if st == connectivity.Idle {
			// A gateway that stopped gracefully (its GOAWAY) leaves the
			// connection idle, and an idle connection does not dial
			// again by itself: without this the wait would last all of
			// Reach while the gateway, back, answers.
			s.conn.Connect()
		}
		if st == connectivity.Ready {
			s.reached = true
			if !lastNotice.IsZero() {
				s.notify("reached the gateway at %s\n", s.Server)
			}
			return s.recovered(ctx, wait)
		}
		now := time.Now()
		if now.Sub(start) >= firstTry && now.Sub(lastProbe) >= time.Second {
			lastProbe = now
			last = probe(wait, s.Server, s.tls)
			if err := s.judge(last, now.Sub(start)); err != nil {
				return err
			}
			if left := s.Reach - now.Sub(start); now.Sub(lastNotice) >= NoticeEvery && left >= 2*time.Second {
				lastNotice = now
				s.notify("%s\n", s.waitingFor(last, left))
			}
		}
		step, stop := context.WithTimeout(wait, 250*time.Millisecond)
		s.conn.WaitForStateChange(step, st)
		stop()
		if wait.Err() != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			why := last.what
			if why == "" {
				why = s.lastError(ctx)
			}
			return fmt.Errorf("%w at %s within %s (%s; is it running? --connect-timeout sets the wait)", ErrUnreachable, s.Server, s.Reach, why)
		}
	}
}

// firstTry is how long gRPC is left to connect before the address is
// probed.
const firstTry = 500 * time.Millisecond

// judge is the error a probe's diagnosis ends the wait with, after
// waited; nil to go on waiting. Once the gateway was reached, nothing
// ends it but Reach: whatever the probe meets then is a gateway
// restarting (or one briefly in its place), not a wrong address.
func (s *Session) judge(d diagnosis, waited time.Duration) error {
	switch {
	case s.reached:
		return nil
	case d.kind == notGateway:
		return cli.Mark(fmt.Errorf("cannot use --server %s: %s", s.Server, d.what), cli.ErrUsage)
	case waited < min(RefusedGrace, s.Reach):
		return nil
	case d.kind == unknownHost:
		return cli.Mark(fmt.Errorf("cannot use --server %s: %s", s.Server, d.what), cli.ErrUsage)
	case d.kind == refused:
		return fmt.Errorf("%w at %s within %s: %s", ErrUnreachable, s.Server, min(RefusedGrace, s.Reach), d.what)
	}
	return nil
}

// waitingFor is the line that says what the wait is about, left more
// of it at most.
func (s *Session) waitingFor(d diagnosis, left time.Duration) string {
	if (d.kind == refused || d.kind == unknownHost) && !s.reached {
		return fmt.Sprintf("%s; retrying for %s", d.what, min(RefusedGrace, s.Reach))
	}
	why := d.what
	switch {
	case d.kind == answered:
		why = "the gateway accepts connections but is not ready yet"
	case why == "":
		why = "no answer yet"
	}
	return fmt.Sprintf("waiting for the gateway at %s (%s), up to %s more (--connect-timeout)", s.Server, why, left.Round(time.Second))
}

// notify writes a line about the wait to Notify, if set.
func (s *Session) notify(format string, args ...any) {
	if s.Notify != nil {
		fmt.Fprintf(s.Notify, format, args...)
	}
}

// recovered waits while the gateway answers that it is recovering (health
// "" NOT_SERVING, "wololo.recovering" SERVING: see services/wire/rpc),
// until wait ends. Any other answer, or none, is left to the call itself.
func (s *Session) recovered(ctx, wait context.Context) error {
	health := healthpb.NewHealthClient(s.conn)
	for {
		r, err := health.Check(wait, &healthpb.HealthCheckRequest{})
		if err != nil || r.Status == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		r, err = health.Check(wait, &healthpb.HealthCheckRequest{Service: rpc.RecoveringService})
		if err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		select {
		case <-wait.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%w at %s within %s: it is still recovering its jobs from its store (--connect-timeout sets the wait)", ErrUnreachable, s.Server, s.Reach)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// lastError is why the connection is down, as gRPC reports it to a call
// that does not wait (a refused connection, a failed TLS handshake).
func (s *Session) lastError(ctx context.Context) string {
	probe, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := s.Jobs.GetJob(probe, &wololov1.GetJobRequest{})
	if err == nil {
		return "it answers now"
	}
	return status.Convert(err).Message()
}

// call runs f once the gateway is reachable; f's calls may wait for a
// connection that breaks meanwhile, it is only the first wait that is
// bounded by ready.
func (s *Session) call(ctx context.Context, f func(ctx context.Context) error) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	return f(ctx)
}

// callRetry is how a session retries a call (Attempts is the caller's).
var callRetry = backoff.Retry{First: 200 * time.Millisecond, Max: 2 * time.Second}

// retry calls f until it succeeds, fails for good, or has failed attempts
// times in a row; a gateway unreachable for longer than Reach ends it too.
func (s *Session) retry(ctx context.Context, attempts int, f func(ctx context.Context) error) error {
	r := callRetry
	r.Attempts = attempts
	return r.Do(ctx, s.retryable, func(ctx context.Context) error { return s.call(ctx, f) })
}

// retryable says whether a call's error is worth retrying after: not a
// gateway unreachable for longer than Reach, not a usage error, and one
// the package's retryable takes.
func (s *Session) retryable(err error) bool {
	return !errors.Is(err, ErrUnreachable) && !errors.Is(err, cli.ErrUsage) && retryable(err)
}

// Get returns a job's state.
func (s *Session) Get(ctx context.Context, id string) (*wololov1.Job, error) {
	var job *wololov1.Job
	err := s.retry(ctx, 3, func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		r, err := s.Jobs.GetJob(cctx, &wololov1.GetJobRequest{JobId: id}, grpc.WaitForReady(true))
		if err == nil {
			job = r.Job
		}
		return err
	})
	return job, err
}

// Watch follows a job until it is done or failed; each state goes to fn.
// A broken stream is opened again; a gateway unreachable for longer than
// Reach ends it with ErrUnreachable, a job deleted on purpose with the
// gateway's error saying so (rpc.IsJobDeleted).
func (s *Session) Watch(ctx context.Context, id string, fn func(*wololov1.Job)) (*wololov1.Job, error) {
	return s.WatchUntil(ctx, id, fn, nil)
}

// WatchUntil is Watch that also ends, with the job as it is then, once
// until (if set) holds of a state: a standing job's version out, say.
func (s *Session) WatchUntil(ctx context.Context, id string, fn func(*wololov1.Job), until func(*wololov1.Job) bool) (*wololov1.Job, error) {
	var final *wololov1.Job
	// Only a stream that broke is opened again, not one that failed to open.
	opened := false
	err := callRetry.Do(ctx, func(err error) bool { return opened && retryable(err) }, func(ctx context.Context) error {
		opened = false
		if err := s.ready(ctx); err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // a watch that ends before the job does ends its stream
		stream, err := s.Jobs.WatchJob(ctx, &wololov1.WatchJobRequest{JobId: id}, grpc.WaitForReady(true))
		if err != nil {
			return err
		}
		opened = true
		var last *wololov1.Job
		for {
			r, err := stream.Recv()
			if err == nil {
				last = r.Job
				if fn != nil {
					fn(last)
				}
				if until != nil && until(last) {
					final = last
					return nil
				}
				continue
			}
			if rpc.IsJobDeleted(err) {
				return err // deleted on purpose: not a job that failed
			}
			if last != nil && (last.State == wololov1.JobState_JOB_STATE_DONE || last.State == wololov1.JobState_JOB_STATE_FAILED) {
				final = last
				return nil
			}
			return err
		}
	})
	if err != nil {
		return nil, err
	}
	return final, nil
}

// Fetch writes a finished job's result files into dir (FetchResults).
func (s *Session) Fetch(ctx context.Context, id, dir string) (map[string]string, error) {
	paths, _, err := s.FetchVersion(ctx, id, 0, dir)
	return paths, err
}

// FetchVersion writes a standing job's version epoch (0: its latest, or
// a batch job's results) into dir, and says which epoch it was
// (FetchResults).
func (s *Session) FetchVersion(ctx context.Context, id string, epoch int64, dir string) (map[string]string, int64, error) {
	v, err := s.fetchVersion(ctx, id, epoch, dir)
	return v.paths, v.epoch, err
}

// fetchVersion is FetchVersion that also says the rows the version is
// over.
func (s *Session) fetchVersion(ctx context.Context, id string, epoch int64, dir string) (fetched, error) {
	var v fetched
	err := s.retry(ctx, 10, func(ctx context.Context) error {
		var err error
		v, err = fetchResults(ctx, s.Jobs, id, epoch, dir)
		return err
	})
	return v, err
}

// Delete releases a job at the gateway.
func (s *Session) Delete(ctx context.Context, id string) error {
	return s.retry(ctx, 10, func(ctx context.Context) error {
		_, err := s.Jobs.DeleteJob(ctx, &wololov1.DeleteJobRequest{JobId: id}, grpc.WaitForReady(true))
		return err
	})
}

// DeleteAny drops any client's job by its internal id (Cluster.DeleteJob),
// as the operator: the session's credential must be the operator's.
func (s *Session) DeleteAny(ctx context.Context, id string) error {
	cluster := wololov1.NewClusterClient(s.conn)
	return s.retry(ctx, 10, func(ctx context.Context) error {
		_, err := cluster.DeleteJob(ctx, &wololov1.ClusterDeleteJobRequest{JobId: id}, grpc.WaitForReady(true))
		return err
	})
}
