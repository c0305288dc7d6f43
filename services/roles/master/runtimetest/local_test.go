package runtimetest_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/roles/local"
	"github.com/wololo/wololo/services/roles/master"
	"github.com/wololo/wololo/services/roles/master/runtimetest"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// healthy is a gRPC health check of the process at addr, over plain TCP
// (the deployments here run --insecure).
func healthy(ctx context.Context, addr string) bool {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return false
	}
	defer conn.Close()
	r, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err == nil && r.Status == healthpb.HealthCheckResponse_SERVING
}

// signal sends sig to p's process, which the test's own user started.
func signal(t *testing.T, p master.Process, sig syscall.Signal) {
	t.Helper()
	if p.PID <= 0 {
		t.Fatalf("%s is listed without a pid: %+v", p.Instance, p)
	}
	if err := syscall.Kill(int(p.PID), sig); err != nil {
		t.Fatalf("signal %v to %s (pid %d): %v", sig, p.Instance, p.PID, err)
	}
}

// TestLocalRuntime runs the suite on `wololo local`'s processes (the
// default topology: the gateway and two shards, real wololo processes)
// through the ProcessService, as the masters of `wololo local` use it.
func TestLocalRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: starts a local cluster")
	}
	c, err := local.Start(context.Background(), local.Options{
		Binary: testkit.WololoBinary(t), DataDir: t.TempDir(), FreePorts: true, Insecure: true, Manual: true, Control: true,
		LogLevel: "warn", Log: testkit.Logger(t, hclog.Info), StopGrace: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	open := func(t *testing.T) master.Runtime {
		rt, err := master.NewLocalRuntime(c.ControlAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		return rt
	}
	runtimetest.Run(t, runtimetest.Deployment{
		Runtime:   open(t),
		Instances: []string{"shard-0", "shard-1", "gateway-0"},
		Reopen:    open,
		Crash:     func(t *testing.T, p master.Process) { signal(t, p, syscall.SIGKILL) },
		Pause:     func(t *testing.T, p master.Process) { signal(t, p, syscall.SIGSTOP) },
		Serves:    func(ctx context.Context, p master.Process) bool { return healthy(ctx, p.Address) },
		// A pid per process; the runner counts the starts it was asked for.
		RefPerProcess: true, CountsRestarts: true,
	})
}
