package master

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wololo/wololo/transport"
)

// LoopConfig is what a supervision loop needs.
type LoopConfig struct {
	Runtime   Runtime
	Instances []string
	Policy    Policy
	// Every is the probe and decision period; 250 ms if 0.
	Every time.Duration
	// Acting reports whether this master may restart anything now (it
	// leads and the election allows it to act). Nil means always.
	Acting func() bool
	// Describe adds the leader's id and term to every restart log line.
	Describe func() []any
	// Observe, if set, sees every process list the runtime gives (the
	// master confirms dead masters to the election from it).
	Observe func([]Process)
	Log     hclog.Logger
}

// Loop probes every instance, feeds a Supervisor and, while Acting, starts
// what it says through the Runtime. It returns when ctx ends.
type Loop struct {
	cfg      LoopConfig
	mu       sync.Mutex
	sup      *Supervisor
	restarts atomic.Int64
	acting   bool // at the last round
}

// Restarts counts the restarts this loop has done.
func (l *Loop) Restarts() int64 { return l.restarts.Load() }

// NewLoop returns a loop; Run runs it.
func NewLoop(cfg LoopConfig) *Loop {
	if cfg.Every == 0 {
		cfg.Every = 250 * time.Millisecond
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
	return &Loop{cfg: cfg, sup: NewSupervisor(cfg.Policy, cfg.Instances, time.Now())}
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
	var wg sync.WaitGroup
	for _, p := range procs {
		if !p.Running {
			l.mu.Lock()
			l.sup.Exited(p.Instance, p.Exit)
			l.mu.Unlock()
			continue
		}
		conn := conns[p.Address]
		if conn == nil {
			if conn, err = transport.NewClient(p.Address); err != nil {
				continue
			}
			conns[p.Address] = conn
		}
		wg.Add(1)
		go func(instance string, conn *grpc.ClientConn) {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, l.cfg.Every*2)
			defer cancel()
			if r, err := healthpb.NewHealthClient(conn).Check(pctx, &healthpb.HealthCheckRequest{}); err == nil && r.Status == healthpb.HealthCheckResponse_SERVING {
				l.mu.Lock()
				l.sup.Seen(instance, time.Now())
				l.mu.Unlock()
			}
		}(p.Instance, conn)
	}
	wg.Wait()
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
		// A process that is alive but silent (paused, wedged) is killed
		// first, so that its replacement does not race it.
		if a.Silent {
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
		l.restarts.Add(1)
		l.cfg.Log.Info("restarted", append(kv, "was-down", started)...)
	}
}

// waitGone waits until the runtime no longer reports the instance running.
func (l *Loop) waitGone(ctx context.Context, instance string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		procs, err := l.cfg.Runtime.List(ctx)
		if err != nil {
			return
		}
		for _, p := range procs {
			if p.Instance == instance && !p.Running {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
