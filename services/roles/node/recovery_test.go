package node_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/roles/master"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/rpc"
	"github.com/wololo/wololo/transport"
)

// slowStore is a MemStore whose Load takes a while: a process whose
// replay is slow.
type slowStore struct {
	*transport.MemStore
	delay   time.Duration
	loading atomic.Bool
}

func (s *slowStore) Load() (*transport.Image, error) {
	s.loading.Store(true)
	defer s.loading.Store(false)
	time.Sleep(s.delay)
	return s.MemStore.Load()
}

// oneProcess is a master Runtime with one running process at a fixed
// address; it records the kills and starts asked of it and does neither.
type oneProcess struct {
	instance, addr string
	mu             sync.Mutex
	kills, starts  int
}

func (r *oneProcess) List(context.Context) ([]master.Process, error) {
	return []master.Process{{Instance: r.instance, Running: true, Address: r.addr}}, nil
}

func (r *oneProcess) Start(context.Context, string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts++
	return true, nil
}

func (r *oneProcess) Kill(context.Context, string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kills++
	return nil
}

// startSlowNode serves shard-0 of the default topology on a store whose
// Load takes delay, and returns its address, its store and its Serve's
// result.
func startSlowNode(t *testing.T, delay time.Duration) (string, *slowStore, <-chan error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	store := &slowStore{MemStore: transport.NewMemStore(), delay: delay}
	n, err := node.New(node.Config{
		Topology: deploy.Default(), Instance: deploy.Instance{Stage: "shard", Index: 0}, Listener: l,
		Resolver: rpc.StaticResolver(nil), Store: store,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return l.Addr().String(), store, done
}

// TestMasterWaitsForASlowRecovery: a node whose store takes 3.5 s to load
// (longer than the masters' 2 s detection) answers its health probe from
// the start, recovering, and a master's supervision loop leaves it alone
// until it serves. Before, it refused connections until it had recovered,
// and the master killed it as silent every 2 s.
func TestMasterWaitsForASlowRecovery(t *testing.T) {
	addr, store, _ := startSlowNode(t, 3500*time.Millisecond)
	rt := &oneProcess{instance: "shard-0", addr: addr}
	var logs testkit.SyncBuffer
	loop := master.NewLoop(master.LoopConfig{
		Runtime: rt, Instances: []string{"shard-0"}, Policy: master.DefaultPolicy,
		Log: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info}),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go loop.Run(ctx)

	conn, err := rpc.NewClient(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	check := func(service string) healthpb.HealthCheckResponse_ServingStatus {
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		defer ccancel()
		r, err := health.Check(cctx, &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			t.Fatalf("health of %q: %v", service, err)
		}
		return r.Status
	}

	start := time.Now()
	sawRecovering := false
	for store.loading.Load() || !sawRecovering {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the node never said it was recovering")
		}
		if check("") == healthpb.HealthCheckResponse_NOT_SERVING && check(rpc.RecoveringService) == healthpb.HealthCheckResponse_SERVING {
			sawRecovering = true
			st, err := wololov1.NewStatusClient(conn).Get(ctx, &wololov1.GetRequest{})
			if err == nil && !st.Recovering && !store.loading.Load() && check("") == healthpb.HealthCheckResponse_SERVING {
				continue // the recovery ended between the health check and Status (a loaded machine)
			}
			if err != nil || !st.Recovering {
				t.Fatalf("recovering: Status = %v, %v; want recovering", st, err)
			}
			_, err = wololov1.NewStageServiceClient(conn).DropJob(ctx, &wololov1.DropJobRequest{JobId: "j"})
			if status.Code(err) != codes.Unavailable {
				t.Fatalf("recovering: DropJob = %v; want Unavailable", err)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	for check("") != healthpb.HealthCheckResponse_SERVING {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the node did not serve after its recovery")
		}
		time.Sleep(50 * time.Millisecond)
	}
	recovered := time.Since(start)
	time.Sleep(master.DefaultDetection) // a master judging it silent would act by now
	rt.mu.Lock()
	kills := rt.kills
	rt.mu.Unlock()
	if n := loop.Restarts(); n != 0 || kills != 0 {
		t.Fatalf("the master restarted the recovering node %d times (%d kills); logs:\n%s", n, kills, logs.String())
	}
	for _, st := range loop.States() {
		if !st.Alive || st.Recovering {
			t.Fatalf("after recovery the master sees %+v, want alive and serving", st)
		}
	}
	t.Logf("recovered after %s, no restart", recovered.Round(10*time.Millisecond))
}

// TestMasterRestartsARecoveryPastTheGrace: the grace is bounded; a node
// still recovering when it has run out is killed and restarted, with the
// reason in the log line.
func TestMasterRestartsARecoveryPastTheGrace(t *testing.T) {
	addr, _, _ := startSlowNode(t, 4*time.Second)
	rt := &oneProcess{instance: "shard-0", addr: addr}
	var logs testkit.SyncBuffer
	policy := master.DefaultPolicy
	policy.RecoveryGrace = time.Second
	loop := master.NewLoop(master.LoopConfig{
		Runtime: rt, Instances: []string{"shard-0"}, Policy: policy,
		Log: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info}),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go loop.Run(ctx)
	killed := func() int {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		return rt.kills
	}
	start := time.Now()
	for killed() == 0 {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("no restart past the grace; logs:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	if took < policy.RecoveryGrace || took > 3*time.Second {
		t.Errorf("killed after %s, want after the grace of %s and well before the node recovered", took, policy.RecoveryGrace)
	}
	for loop.Restarts() == 0 { // the loop waits for the kill to take before it starts another
		if time.Since(start) > 10*time.Second {
			t.Fatalf("killed, never started again; logs:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "reason=\""+master.ReasonRecoveringTooLong) {
		t.Fatalf("the restart's log line does not give the reason; logs:\n%s", logs.String())
	}
	t.Logf("restarted after %s: %s", took.Round(10*time.Millisecond), strings.TrimSpace(logs.String()))
}

// TestClientWaitsForARecoveringGateway: a gateway recovering from a slow
// store serves its public port at once, recovering; a client call waits
// (within its --connect-timeout) until the gateway serves, instead of
// giving up on the Unavailable answers after its few retries.
func TestClientWaitsForARecoveringGateway(t *testing.T) {
	internal, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	public, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const delay = 2500 * time.Millisecond
	n, err := node.New(node.Config{
		Topology: deploy.Default(), Instance: deploy.Instance{Stage: "gateway"}, Listener: internal, Public: public,
		Resolver: rpc.StaticResolver(nil), Store: &slowStore{MemStore: transport.NewMemStore(), delay: delay},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	gw, err := client.Open(public.Addr().String(), nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	start := time.Now()
	_, err = gw.Get(ctx, "nosuch")
	if status.Code(err) != codes.NotFound {
		t.Fatalf("after %s: %v; want the recovered gateway's NotFound", time.Since(start).Round(time.Millisecond), err)
	}
	t.Logf("answered after %s", time.Since(start).Round(time.Millisecond))
}
