package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/roles/local"
)

// freeLocalBasePort finds a base port for `wololo local` whose n ports and
// their admin ports (deploy.AdminPortOffset above) are all free.
func freeLocalBasePort(t *testing.T, n int) int {
	t.Helper()
	free := func(from int) bool {
		for p := from; p < from+n; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				return false
			}
			l.Close()
		}
		return true
	}
	for base := 23000; base+deploy.AdminPortOffset+n < 65000; base += 101 {
		if free(base) && free(base+deploy.AdminPortOffset) {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// TestSecondLocalClusterIsRefused runs `wololo local` (three masters) and
// then two more: one on the same data directory is refused at once, naming
// the first one's pid (it used to print "processes up" from the first
// cluster's answers, never exit, and delete the first one's processes.sock
// when stopped); one on another data directory but the same ports is
// refused at once, naming a port (it used to wait forever). The first
// cluster's masters can still restart a killed process through its
// socket, and a job gives answers byte-equal to the reference.
func TestSecondLocalClusterIsRefused(t *testing.T) {
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[0]
	top := deploy.Default()
	base := freeLocalBasePort(t, 1+len(top.Instances())+top.Masters)
	data := t.TempDir()

	first := exec.Command(bin, "local", "--data", data, "--base-port", strconv.Itoa(base), "--log-level", "warn")
	var stdout, stderr testkit.SyncBuffer // read while the command runs
	first.Stdout, first.Stderr = &stdout, &stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- first.Wait() }()
	t.Cleanup(func() {
		first.Process.Kill()
		<-exited
	})
	if !stdout.Await(90*time.Second, func(s string) bool { return strings.Contains(s, "gateway listening on") }) {
		t.Fatalf("the first wololo local is not up after 90 s:\n%s%s", stdout.String(), stderr.String())
	}

	// refused runs a second `wololo local` and expects it to exit 1 within
	// 30 s saying want.
	refused := func(what string, want string, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		start := time.Now()
		out, err := exec.CommandContext(ctx, bin, append([]string{"local", "--log-level", "warn"}, args...)...).CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("%s: still running after 30 s:\n%s", what, out)
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("%s: %v, want exit status 1:\n%s", what, err, out)
		}
		if !strings.Contains(string(out), want) {
			t.Fatalf("%s: the output does not say %q:\n%s", what, want, out)
		}
		t.Logf("%s: refused after %s: %s", what, time.Since(start).Round(time.Millisecond), strings.TrimSpace(string(out)))
	}
	other := freeLocalBasePort(t, 1+len(top.Instances())+top.Masters)
	refused("the same data directory", fmt.Sprintf("is in use by another wololo local (pid %d)", first.Process.Pid),
		"--data", data, "--base-port", strconv.Itoa(other))
	refused("the same ports", fmt.Sprintf("port %d (127.0.0.1:%d, the gateway's public port) is in use", base, base),
		"--data", t.TempDir(), "--base-port", strconv.Itoa(base))

	// The first cluster's ProcessService is still there, and its masters
	// restart a killed process through it.
	sock := filepath.Join(data, local.ControlSocket)
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("the first cluster's socket: %v", err)
	}
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	procs := wololov1.NewProcessServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pidOf := func(instance string) (int64, bool) {
		t.Helper()
		l, err := procs.ListProcesses(ctx, &wololov1.ListProcessesRequest{})
		if err != nil {
			t.Fatalf("ListProcesses: %v", err)
		}
		for _, p := range l.Processes {
			if p.Instance == instance {
				return p.Pid, p.Running
			}
		}
		t.Fatalf("no %s in %v", instance, l.Processes)
		return 0, false
	}
	victim, running := pidOf("shard-1")
	if !running {
		t.Fatal("shard-1 is not running")
	}
	if err := syscall.Kill(int(victim), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, fmt.Sprintf("the masters to restart shard-1 (pid %d, killed)", victim), time.Minute, func() bool {
		pid, running := pidOf("shard-1")
		return running && pid != victim
	})

	out := t.TempDir()
	res, err := exec.CommandContext(ctx, bin, "client", "submit", "--tls-dir", filepath.Join(data, "tls"), "--server", fmt.Sprintf("127.0.0.1:%d", base),
		"--matches", d.matches, "--players", d.players, "--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("client submit to the first cluster: %v\n%s", err, res)
	}
	compareOutputs(t, d, out)

	first.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Fatalf("the first wololo local exited %v after SIGTERM:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the first wololo local did not stop within 30 s of SIGTERM")
	}
}
