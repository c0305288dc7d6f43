package local

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"

	"github.com/wololo/wololo/internal/testkit"
)

// TestManualModeWaitsToBeToldToStart: with Manual set (the masters decide
// restarts), a killed process stays down until it is started through the
// ProcessService. What the masters' runtime makes of the service (start,
// kill, list, a second client) is checked by the runtimes' conformance
// suite (services/roles/master/runtimetest, TestLocalRuntime); this test
// keeps what is the runner's own: the socket's modes, the status codes,
// no restart of its own, and a job after the restart.
func TestManualModeWaitsToBeToldToStart(t *testing.T) {
	logs := &testkit.SyncBuffer{}
	c, err := Start(context.Background(), Options{
		Binary: testkit.WololoBinary(t), DataDir: t.TempDir(), FreePorts: true, LogLevel: "warn", Manual: true, Control: true,
		Log: hclog.New(&hclog.LoggerOptions{Name: "local", Level: hclog.Info, Output: io.MultiWriter(logs, testkit.Writer(t))}), StopGrace: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	// Only this user may reach the ProcessService or read the data.
	if !strings.HasPrefix(c.ControlAddr(), "unix://") {
		t.Fatalf("ProcessService at %q, want a Unix socket", c.ControlAddr())
	}
	for path, want := range map[string]os.FileMode{strings.TrimPrefix(c.ControlAddr(), "unix://"): 0o600, filepath.Dir(strings.TrimPrefix(c.ControlAddr(), "unix://")): 0o700} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: mode %v, %v; want %v", path, fi.Mode().Perm(), err, want)
		}
	}
	// Everything goes through the ProcessService, as the masters will.
	conn, err := grpc.NewClient(c.ControlAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	procs := wololov1.NewProcessServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	running := func(instance string) *wololov1.ProcessInfo {
		l, err := procs.ListProcesses(ctx, &wololov1.ListProcessesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range l.Processes {
			if p.Instance == instance {
				return p
			}
		}
		t.Fatalf("no %s in the list", instance)
		return nil
	}
	const victim = "shard-1"
	before := running(victim)
	if !before.Running || before.Pid == 0 {
		t.Fatalf("before: %+v", before)
	}
	if _, err := procs.StartProcess(ctx, &wololov1.StartProcessRequest{Instance: "nope-0"}); status.Code(err) != codes.NotFound {
		t.Fatalf("StartProcess of an unknown instance: %v, want NotFound", err)
	}
	if _, err := procs.SignalProcess(ctx, &wololov1.SignalProcessRequest{Instance: victim, Signal: int32(syscall.SIGKILL)}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the victim to be seen dead", 5*time.Second, func() bool { return !running(victim).Running })
	// The runner has taken its decision: it waits to be told.
	logs.WaitFor(t, "the runner to say it waits to be told to start "+victim, 10*time.Second, func(s string) bool {
		return strings.Contains(s, "waiting to be told to start it: instance="+victim)
	})
	if p := running(victim); p.Running {
		t.Fatalf("manual mode restarted %s by itself (pid %d)", victim, p.Pid)
	}
	if _, err := procs.SignalProcess(ctx, &wololov1.SignalProcessRequest{Instance: victim, Signal: 0}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("signal to a dead instance: %v, want FailedPrecondition", err)
	}
	if r, err := procs.StartProcess(ctx, &wololov1.StartProcessRequest{Instance: victim}); err != nil || !r.Started {
		t.Fatalf("StartProcess on a dead instance = %v, %v; want started", r, err)
	}
	if err := c.WaitInstance(ctx, victim); err != nil {
		t.Fatal(err)
	}
	if after := running(victim); !after.Running || after.Pid == before.Pid || after.Restarts != 1 {
		t.Fatalf("after StartProcess: %+v (before: pid %d)", after, before.Pid)
	}
	submitAndCompare(t, c)
}
