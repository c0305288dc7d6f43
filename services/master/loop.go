package master

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
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
	Log      hclog.Logger
}

// Loop probes every instance, feeds a Supervisor and, while Acting, starts
// what it says through the Runtime. It returns when ctx ends.
type Loop struct {
	cfg LoopConfig
	mu  sync.Mutex
	sup *Supervisor
}

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
			if conn, err = grpc.NewClient(p.Address, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
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
	if !l.cfg.Acting() {
		return
	}
	l.mu.Lock()
	due := l.sup.Due(time.Now())
	l.mu.Unlock()
	for _, a := range due {
		kv := append([]any{"instance", a.Instance, "reason", a.Reason}, l.cfg.Describe()...)
		if a.CrashLoop {
			l.cfg.Log.Error("CRASH LOOP: restarting again at the maximum backoff", kv...)
		}
		// A process that is alive but silent (paused, wedged) is killed
		// first, so that its replacement does not race it.
		if a.Silent {
			if err := l.cfg.Runtime.Kill(ctx, a.Instance); err != nil {
				l.cfg.Log.Debug("kill before restart", "instance", a.Instance, "error", err)
			}
			l.waitGone(ctx, a.Instance, 2*time.Second)
		}
		started, err := l.cfg.Runtime.Start(ctx, a.Instance)
		if err != nil {
			l.cfg.Log.Error("restart failed", append(kv, "error", err)...)
			continue
		}
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
