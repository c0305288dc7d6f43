package master

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
)

// LoopConfig is what a supervision loop needs.
type LoopConfig struct {
	Runtime   Runtime
	Instances []string
	Policy    Policy
	// Every is the probe and decision period; DefaultEvery if 0.
	Every time.Duration
	// Acting reports whether this master may restart anything now (it
	// leads and the election allows it to act). Nil means always.
	Acting func() bool
	// Describe adds the leader's id and term to every restart log line.
	Describe func() []any
	// Observe, if set, sees every process list the runtime gives (the
	// master confirms dead masters to the election from it).
	Observe func([]Process)
	// OnRestart, if set, is told of every restart the loop did (metrics).
	OnRestart func(instance string, cause Cause)
	// OnRound, if set, is called at the start of every round (metrics).
	OnRound func(now time.Time)
	// Credentials are presented to the probed instances; nil: plain TCP.
	Credentials *pki.Credentials
	Log         hclog.Logger
}

// Loop probes every instance, feeds a Supervisor and, while Acting, starts
// what it says through the Runtime. It returns when ctx ends.
//
// Probes run in the background, at most one per instance at a time, and a
// round never waits for them: a paused process, whose probe hangs until
// its deadline, would otherwise slow every round, and with it the
// detection of every other death. So a round comes every Every whatever
// the processes do, a live process is seen at most Every before it dies,
// and a silent one is judged within Policy.Timeout of its death.
type Loop struct {
	cfg      LoopConfig
	mu       sync.Mutex
	sup      *Supervisor
	probing  map[string]bool // instances with a probe in flight (under mu)
	probes   sync.WaitGroup
	restarts atomic.Int64
	acting   bool // at the last round
	// probe asks one process whether it serves (a gRPC health check;
	// tests replace it).
	probe func(ctx context.Context, conn *grpc.ClientConn) Answer
}

// Answer is what a probe learned of a process.
type Answer int

// The answers of a probe.
const (
	// NoAnswer: the process did not answer, answered with an error, or
	// said it does not serve and is not recovering (it is stopping).
	NoAnswer Answer = iota
	// Serving: the health check answered SERVING.
	Serving
	// Recovering: the health check answered NOT_SERVING and the process
	// reports rpc.RecoveringService SERVING: it is loading its store
	// and replaying its state, and serves once that is done.
	Recovering
)

// DefaultEvery is the default period of a Loop's rounds. A silent process
// is judged at the first round after Policy.Timeout of silence, so it is
// detected at most Timeout + Every after its last answer.
const DefaultEvery = 250 * time.Millisecond

// Restarts counts the restarts this loop has done.
func (l *Loop) Restarts() int64 { return l.restarts.Load() }

// NewLoop returns a loop; Run runs it.
func NewLoop(cfg LoopConfig) *Loop {
	if cfg.Every == 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.Policy.Timeout == 0 {
		cfg.Policy = DefaultPolicy
	}
	if cfg.Acting == nil {
		cfg.Acting = func() bool { return true }
	}
	if cfg.Describe == nil {
		cfg.Describe = func() []any { return nil }
	}
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
	return &Loop{cfg: cfg, sup: NewSupervisor(cfg.Policy, cfg.Instances, time.Now()), probing: map[string]bool{}, probe: healthProbe}
}

// healthProbe is the standard gRPC health check of the whole process
// (service ""), and only when that is not SERVING a second one of
// rpc.RecoveringService, which a recovering process reports SERVING
// (see services/wire/rpc).
func healthProbe(ctx context.Context, conn *grpc.ClientConn) Answer {
	health := healthpb.NewHealthClient(conn)
	r, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
	switch {
	case err != nil:
		return NoAnswer
	case r.Status == healthpb.HealthCheckResponse_SERVING:
		return Serving
	}
	r, err = health.Check(ctx, &healthpb.HealthCheckRequest{Service: rpc.RecoveringService})
	if err == nil && r.Status == healthpb.HealthCheckResponse_SERVING {
		return Recovering
	}
	return NoAnswer
}

// States describes every supervised instance, for Status.
func (l *Loop) States() []InstanceState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sup.States(time.Now())
}

// Run probes and decides every period until ctx ends.
func (l *Loop) Run(ctx context.Context) {
	conns := map[string]*grpc.ClientConn{}
	defer func() {
		l.probes.Wait() // they end with ctx
		for _, c := range conns {
			c.Close()
		}
	}()
	t := time.NewTicker(l.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		l.round(ctx, conns)
	}
}

func (l *Loop) round(ctx context.Context, conns map[string]*grpc.ClientConn) {
	if l.cfg.OnRound != nil {
		l.cfg.OnRound(time.Now())
	}
	procs, err := l.cfg.Runtime.List(ctx)
	if err != nil {
		l.cfg.Log.Warn("cannot list processes", "error", err)
		return
	}
	if l.cfg.Observe != nil {
		l.cfg.Observe(procs)
	}
	listed := map[string]bool{}
	for _, p := range procs {
		listed[p.Instance] = true
	}
	l.mu.Lock()
	now := time.Now()
	for _, in := range l.cfg.Instances {
		l.sup.Listed(in, listed[in], now)
	}
	l.mu.Unlock()
	for _, p := range procs {
		if !p.Running {
			l.mu.Lock()
			l.sup.Exited(p.Instance, p.Exit)
			l.mu.Unlock()
			continue
		}
		conn := conns[p.Address]
		if conn == nil {
			if conn, err = rpc.NewClient(p.Address, rpc.TLSFor(l.cfg.Credentials, p.Instance)); err != nil {
				continue
			}
			conns[p.Address] = conn
		}
		l.startProbe(ctx, p.Instance, conn)
	}
	acting := l.cfg.Acting()
	started := acting && !l.acting
	l.acting = acting
	if !acting {
		return
	}
	l.mu.Lock()
	if started {
		// Silence is judged only on probes made while acting.
		l.sup.Grace(time.Now())
	}
	due := l.sup.Due(time.Now())
	l.mu.Unlock()
	for i, a := range due {
		// Leadership can end between two restarts (a higher term, a lease
		// run out while this process was paused): ask again before each.
		// What is skipped comes due again after Policy.Timeout.
		if !l.cfg.Acting() {
			l.cfg.Log.Info("no longer acting; restarts left to the next leader", "skipped", len(due)-i)
			return
		}
		kv := append([]any{"process", a.Instance, "reason", a.Reason}, l.cfg.Describe()...)
		if a.CrashLoop {
			l.cfg.Log.Error("CRASH LOOP: restarting again at the maximum backoff", kv...)
		}
		// A process that is alive but silent (paused, wedged) or stuck
		// recovering is killed first, so that its replacement does not
		// race it.
		if a.KillFirst {
			if err := l.cfg.Runtime.Kill(ctx, a.Instance); err != nil {
				l.cfg.Log.Debug("kill before restart", "process", a.Instance, "error", err)
			}
			l.waitGone(ctx, a.Instance, 2*time.Second)
		}
		started, err := l.cfg.Runtime.Start(ctx, a.Instance)
		if err != nil {
			l.cfg.Log.Error("restart failed", append(kv, "error", err)...)
			continue
		}
		l.mu.Lock()
		l.sup.Started(a.Instance, time.Now())
		l.mu.Unlock()
		l.cfg.Log.Info("restarted", append(kv, "was-down", started)...)
		// Counted last: whoever sees the count sees the restart done, logged
		// included.
		l.restarts.Add(1)
		if l.cfg.OnRestart != nil {
			l.cfg.OnRestart(a.Instance, a.Cause)
		}
	}
}

// startProbe probes an instance in the background unless a probe of it is
// still in flight; an answer marks the instance seen (serving, or
// recovering) at the moment it came.
func (l *Loop) startProbe(ctx context.Context, instance string, conn *grpc.ClientConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.probing[instance] {
		return
	}
	l.probing[instance] = true
	l.probes.Add(1)
	go func() {
		defer l.probes.Done()
		// Short, so that a probe stuck on a process that was then killed
		// does not hold back the first probe of its replacement.
		pctx, cancel := context.WithTimeout(ctx, 2*l.cfg.Every)
		answer := l.probe(pctx, conn)
		cancel()
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.probing, instance)
		switch answer {
		case Serving:
			l.sup.Seen(instance, time.Now())
		case Recovering:
			l.sup.Recovering(instance, time.Now())
		}
	}()
}

// waitGone waits until the runtime no longer reports the instance running:
// listed as not running (a killed process or container), or not listed at
// all (a swarm task being replaced is not, until its successor runs).
func (l *Loop) waitGone(ctx context.Context, instance string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		procs, err := l.cfg.Runtime.List(ctx)
		if err != nil {
			return
		}
		if !slices.ContainsFunc(procs, func(p Process) bool { return p.Instance == instance && p.Running }) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
