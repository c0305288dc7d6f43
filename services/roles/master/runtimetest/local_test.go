package runtimetest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
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

// opener is a Deployment's Reopen: a runtime made by make, closed when
// the test ends.
func opener[R interface {
	master.Runtime
	Close() error
}](make func() (R, error)) func(*testing.T) master.Runtime {
	return func(t *testing.T) master.Runtime {
		rt, err := make()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		return rt
	}
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
	runLocal(t, func(rt master.Runtime) master.Runtime { return rt })
}

// runLocal starts a local cluster whose processes the masters start (the
// runner restarts nothing) and runs the suite on its LocalRuntime, as
// wrap makes it.
func runLocal(t *testing.T, wrap func(master.Runtime) master.Runtime) {
	c, err := local.Start(context.Background(), local.Options{
		Binary: testkit.WololoBinary(t), DataDir: t.TempDir(), FreePorts: true, Insecure: true, Manual: true, Control: true,
		LogLevel: "warn", Log: testkit.Logger(t, hclog.Info), StopGrace: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	connect := opener(func() (*master.LocalRuntime, error) { return master.NewLocalRuntime(c.ControlAddr()) })
	open := func(t *testing.T) master.Runtime { return wrap(connect(t)) }
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

// broken is a runtime with the defects the suite is there to catch, one
// per check: a Kill of a stopped instance that errs (as LocalRuntime's
// did before the suite), a Start of a running instance that says it
// started it, a List that forgets how a process ended, and calls that
// ignore their context.
type broken struct{ master.Runtime }

func (b broken) List(ctx context.Context) ([]master.Process, error) {
	ps, err := b.Runtime.List(ctx)
	for i := range ps {
		ps[i].Exit = ""
	}
	return ps, err
}

func (b broken) Start(_ context.Context, instance string) (bool, error) {
	started, err := b.Runtime.Start(context.Background(), instance)
	return started || err == nil, err
}

func (b broken) Kill(ctx context.Context, instance string) error {
	for _, p := range must(b.Runtime.List(ctx)) {
		if p.Instance == instance && !p.Running {
			return fmt.Errorf("kill %s: not running", instance)
		}
	}
	return b.Runtime.Kill(ctx, instance)
}

func must[T any](v T, _ error) T { return v }

// TestSuiteCatchesABrokenRuntime runs the suite, in a child test process,
// on the local runtime made broken, and checks that the checks made to
// catch each defect fail, and that one no defect touches passes: a suite
// that lets everything through would not notice a regression.
func TestSuiteCatchesABrokenRuntime(t *testing.T) {
	if os.Getenv(brokenEnv) == "1" {
		runLocal(t, func(rt master.Runtime) master.Runtime { return broken{rt} })
		return
	}
	if testing.Short() {
		t.Skip("short mode: starts a local cluster")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSuiteCatchesABrokenRuntime$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), brokenEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed a broken runtime:\n%s", out)
	}
	for _, want := range []string{
		"--- FAIL: TestSuiteCatchesABrokenRuntime/kill_of_a_stopped_instance_does_nothing",
		"--- FAIL: TestSuiteCatchesABrokenRuntime/start_of_a_running_instance_starts_nothing",
		"--- FAIL: TestSuiteCatchesABrokenRuntime/kill_ends_only_its_instance's_process",
		"--- FAIL: TestSuiteCatchesABrokenRuntime/a_cancelled_context_fails_the_calls_and_changes_nothing",
		"--- PASS: TestSuiteCatchesABrokenRuntime/lists_every_instance_running",
		"--- PASS: TestSuiteCatchesABrokenRuntime/unknown_instances_are_errors",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the suite on a broken runtime: no %q in its output", want)
		}
	}
	if t.Failed() {
		t.Logf("the child's output:\n%s", out)
	}
}

// brokenEnv makes TestSuiteCatchesABrokenRuntime the child that runs the
// suite on the broken runtime.
const brokenEnv = "WOLOLO_RUNTIMETEST_BROKEN"
