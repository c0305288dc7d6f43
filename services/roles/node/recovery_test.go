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

// gatedStore is a MemStore whose Load waits until the test releases it: a
// process whose replay lasts as long as the test needs.
type gatedStore struct {
	*transport.MemStore
	gate    chan struct{}
	once    sync.Once
	loading atomic.Bool
}

func newGatedStore() *gatedStore {
	return &gatedStore{MemStore: transport.NewMemStore(), gate: make(chan struct{})}
}

func (s *gatedStore) Load() (*transport.Image, error) {
	s.loading.Store(true)
	defer s.loading.Store(false)
	<-s.gate
	return s.MemStore.Load()
}

// release lets Load, and any later one, finish.
func (s *gatedStore) release() { s.once.Do(func() { close(s.gate) }) }

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

func (r *oneProcess) killed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.kills
}

// rounds counts a master loop's rounds (LoopConfig.OnRound).
type rounds struct{ n atomic.Int64 }

func (r *rounds) onRound(time.Time) { r.n.Add(1) }

// wait waits until the loop has started k more rounds: k-1 whole rounds,
// their probes sent and their decisions taken, have run in between.
func (r *rounds) wait(t *testing.T, k int64, what string) {
	t.Helper()
	from := r.n.Load()
	testkit.WaitFor(t, what, 30*time.Second, func() bool { return r.n.Load() >= from+k })
}

// startGatedNode serves shard-0 of the default topology on a store whose
// Load waits for the test's release (at the latest when the test ends),
// and returns its address and its store.
func startGatedNode(t *testing.T) (string, *gatedStore) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	store := newGatedStore()
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
		store.release()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return l.Addr().String(), store
}

// TestMasterWaitsForASlowRecovery: a node whose store is still loading
// after rounds of a master's supervision loop that span three times its
// detection (silence of policy.Timeout, judged at the next round) answers
// its health probe from the start, recovering, and the loop leaves it
// alone, then and once it serves. Before, it refused connections until it
// had recovered, and the master killed it as silent at every detection.
func TestMasterWaitsForASlowRecovery(t *testing.T) {
	addr, store := startGatedNode(t)
	rt := &oneProcess{instance: "shard-0", addr: addr}
	var logs testkit.SyncBuffer
	var seen rounds
	policy := master.DefaultPolicy
	policy.Timeout = 500 * time.Millisecond
	const every = 50 * time.Millisecond
	detection := int64((policy.Timeout + every) / every) // in rounds
	loop := master.NewLoop(master.LoopConfig{
		Runtime: rt, Instances: []string{"shard-0"}, Policy: policy, Every: every, OnRound: seen.onRound,
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
	leftAlone := func(when string) {
		t.Helper()
		if n, kills := loop.Restarts(), rt.killed(); n != 0 || kills != 0 {
			t.Fatalf("%s: the master restarted the node %d times (%d kills); logs:\n%s", when, n, kills, logs.String())
		}
	}

	testkit.WaitFor(t, "the node to say it is recovering", 10*time.Second, func() bool {
		return store.loading.Load() && check("") == healthpb.HealthCheckResponse_NOT_SERVING && check(rpc.RecoveringService) == healthpb.HealthCheckResponse_SERVING
	})
	if st, err := wololov1.NewStatusClient(conn).Get(ctx, &wololov1.GetRequest{}); err != nil || !st.Recovering {
		t.Fatalf("recovering: Status = %v, %v; want recovering", st, err)
	}
	if _, err := wololov1.NewStageServiceClient(conn).DropJob(ctx, &wololov1.DropJobRequest{JobId: "j"}); status.Code(err) != codes.Unavailable {
		t.Fatalf("recovering: DropJob = %v; want Unavailable", err)
	}
	testkit.WaitFor(t, "the master to see the node recovering", 10*time.Second, func() bool {
		states := loop.States()
		return len(states) == 1 && states[0].Recovering
	})
	seen.wait(t, 3*detection+1, "the master's rounds over three detections")
	leftAlone("recovering")
	if !store.loading.Load() {
		t.Fatal("the store was loaded before the test released it")
	}

	store.release()
	testkit.WaitFor(t, "the node to serve after its recovery", 10*time.Second, func() bool { return check("") == healthpb.HealthCheckResponse_SERVING })
	testkit.WaitFor(t, "the master to see the node serving", 10*time.Second, func() bool {
		states := loop.States()
		return len(states) == 1 && states[0].Alive && !states[0].Recovering
	})
	seen.wait(t, detection+1, "the master's rounds over a detection after the recovery")
	leftAlone("recovered")
	for _, st := range loop.States() {
		if !st.Alive || st.Recovering {
			t.Fatalf("after recovery the master sees %+v, want alive and serving", st)
		}
	}
}

// TestMasterRestartsARecoveryPastTheGrace: the grace is bounded; a node
// still recovering when it has run out is killed and restarted, with the
// reason in the log line.
func TestMasterRestartsARecoveryPastTheGrace(t *testing.T) {
	addr, store := startGatedNode(t)
	rt := &oneProcess{instance: "shard-0", addr: addr}
	var logs testkit.SyncBuffer
	policy := master.DefaultPolicy
	policy.RecoveryGrace = 300 * time.Millisecond
	loop := master.NewLoop(master.LoopConfig{
		Runtime: rt, Instances: []string{"shard-0"}, Policy: policy,
		Log: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info}),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	go loop.Run(ctx)
	if !testkit.Await(10*time.Second, func() bool { return rt.killed() > 0 }) {
		t.Fatalf("no restart past the grace; logs:\n%s", logs.String())
	}
	if took := time.Since(start); took < policy.RecoveryGrace || !store.loading.Load() {
		t.Errorf("killed after %s, the store loading: %t; want after the grace of %s and before the node recovered", took, store.loading.Load(), policy.RecoveryGrace)
	}
	// The loop waits for the kill to take before it starts another.
	if !testkit.Await(10*time.Second, func() bool { return loop.Restarts() > 0 }) {
		t.Fatalf("killed, never started again; logs:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "reason=\""+master.ReasonRecoveringTooLong) {
		t.Fatalf("the restart's log line does not give the reason; logs:\n%s", logs.String())
	}
	t.Logf("restarted: %s", strings.TrimSpace(logs.String()))
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
	store := newGatedStore()
	n, err := node.New(node.Config{
		Topology: deploy.Default(), Instance: deploy.Instance{Stage: "gateway"}, Listener: internal, Public: public,
		Resolver: rpc.StaticResolver(nil), Store: store,
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
	// The recovery lasts longer than the three attempts of a client that
	// does not wait. This wait stays a time: nothing of the client says it
	// is waiting for the gateway to recover.
	defer store.release()
	go func() {
		time.Sleep(2500 * time.Millisecond)
		store.release()
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
