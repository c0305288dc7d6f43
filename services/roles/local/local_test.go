package local

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/reference"
)

// TestMain removes the shared binary and dataset after the tests.
func TestMain(m *testing.M) { testkit.Main(m) }

// data is the dataset the tests share, generated once per test binary.
type data struct {
	matches, players string
	want             reference.Result
}

var sharedData = testkit.NewShared("wololo-local-data-", func(dir string) (data, error) {
	if _, err := datagen.WriteDir(datagen.Config{Matches: 3000, Seed: 7}, dir); err != nil {
		return data{}, err
	}
	d := data{matches: filepath.Join(dir, "matches.csv"), players: filepath.Join(dir, "match_players.csv")}
	var err error
	d.want, err = reference.EvaluateFiles(d.matches, d.players)
	return d, err
})

func dataset(t *testing.T) (string, string, reference.Result) {
	t.Helper()
	d := sharedData.Get(t)
	return d.matches, d.players, d.want
}

// startCluster starts a local cluster whose runner logs to the test and to
// the buffer returned, for assertions.
func startCluster(t *testing.T, ctx context.Context) (*Cluster, *testkit.SyncBuffer) {
	t.Helper()
	logs := &testkit.SyncBuffer{}
	c, err := Start(ctx, Options{
		Binary: testkit.WololoBinary(t), DataDir: t.TempDir(), FreePorts: true, LogLevel: "warn",
		Log: hclog.New(&hclog.LoggerOptions{Name: "local", Level: hclog.Info, Output: io.MultiWriter(logs, testkit.Writer(t))}), StopGrace: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	return c, logs
}

func submitAndCompare(t *testing.T, c *Cluster) {
	t.Helper()
	matches, players, want := dataset(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := t.TempDir()
	tlsConfig, err := c.ClientTLS("client")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: tlsConfig, Matches: matches, Players: players, Out: out}); err != nil {
		t.Fatalf("submit: %v", err)
	}
	testkit.SameFiles(t, out, want.Files())
}

func procOf(c *Cluster, instance string) Proc {
	for _, p := range c.Processes() {
		if p.Instance == instance && !p.Replaced {
			return p
		}
	}
	return Proc{}
}

// TestClusterRunsRestartsAndStops runs a job on a local cluster, kills a
// worker and the gateway between jobs and sees them restarted, runs another
// job, then stops everything gracefully.
func TestClusterRunsRestartsAndStops(t *testing.T) {
	c, _ := startCluster(t, context.Background())
	top := c.Topology()
	if got, want := len(c.Instances()), len(top.Instances()); got != want {
		t.Fatalf("%d instances, want %d", got, want)
	}
	peers, err := deploy.ReadPeers(c.PeersFile())
	if err != nil {
		t.Fatal(err)
	}
	if peers["gateway-0"] != c.Addr("gateway-0") || peers["gateway-0"] == c.GatewayAddr() || len(peers) != len(c.Instances()) {
		t.Fatalf("peers file %v, gateway at %s", peers, c.GatewayAddr())
	}
	for _, p := range c.Processes() {
		if !p.Alive || p.PID == 0 || p.PeakRSS <= 0 || p.Restarts != 0 {
			t.Errorf("after start: %+v", p)
		}
		if _, err := os.Stat(p.LogFile); err != nil {
			t.Errorf("%s: no log file: %v", p.Instance, err)
		}
	}
	submitAndCompare(t, c)

	for _, victim := range []string{"shard-1", "gateway-0"} {
		old := procOf(c, victim)
		if err := c.Kill(victim, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, victim+" to be restarted", 10*time.Second, func() bool {
			p := procOf(c, victim)
			return p.Alive && p.PID != old.PID && p.Restarts == old.Restarts+1
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := c.WaitInstance(ctx, victim); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	b, _ := os.ReadFile(c.LogFile("shard-1"))
	if !strings.Contains(string(b), "start #2 of shard-1") || !strings.Contains(string(b), "killed by signal 9") {
		t.Errorf("the log file does not mark the restart:\n%s", b)
	}
	submitAndCompare(t, c)

	if err := c.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	for _, p := range c.Processes() {
		if p.Alive || p.Exit != "exit status 0" || p.MaxPeakRSS <= 0 {
			t.Errorf("after stop: %+v", p)
		}
	}
	if _, err := c.Signal("gateway-0", syscall.SIGKILL); !errors.Is(err, ErrNotRunning) {
		t.Errorf("signal after stop: %v", err)
	}
}

// TestCrashLoopIsLoggedAndRestartsContinue kills one instance five times in
// a row: the runner calls it a crash loop, and still restarts it.
func TestCrashLoopIsLoggedAndRestartsContinue(t *testing.T) {
	c, logs := startCluster(t, context.Background())
	const victim = "shard-1"
	for i := 1; i <= 5; i++ {
		testkit.WaitFor(t, victim+" to be up", 10*time.Second, func() bool { return procOf(c, victim).Alive })
		if err := c.Kill(victim, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, victim+" to die", 5*time.Second, func() bool { return !procOf(c, victim).Alive || procOf(c, victim).Restarts == i })
	}
	testkit.WaitFor(t, "the crash loop to be reported", 5*time.Second, func() bool { return strings.Contains(logs.String(), "CRASH LOOP") })
	start := time.Now()
	testkit.WaitFor(t, victim+" to come back", 10*time.Second, func() bool { p := procOf(c, victim); return p.Alive && p.Restarts == 5 })
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("restarted %s after a crash loop within %s; want the maximum backoff (2 s)", victim, waited)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitInstance(ctx, victim); err != nil {
		t.Fatal(err)
	}
}

// TestContextStopsTheCluster cancels the context Start was given.
func TestContextStopsTheCluster(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c, _ := startCluster(t, ctx)
	cancel()
	select {
	case <-c.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the cluster did not stop after its context was cancelled")
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Processes() {
		if p.Alive || p.Exit != "exit status 0" {
			t.Errorf("%+v", p)
		}
		if err := syscall.Kill(p.PID, 0); err == nil {
			t.Errorf("%s pid %d still exists", p.Instance, p.PID)
		}
	}
}

// TestReplaceMovesAnInstance starts a second process for an instance on a
// new port while the first is stopped (a zombie), and runs a job through
// the new one.
func TestReplaceMovesAnInstance(t *testing.T) {
	c, _ := startCluster(t, context.Background())
	const victim = "shard-0"
	old := procOf(c, victim)
	if err := syscall.Kill(old.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := c.Replace(victim, filepath.Join(c.DataDir(), victim+"-new")); err != nil {
		t.Fatal(err)
	}
	now := procOf(c, victim)
	if now.PID == old.PID || now.Addr == old.Addr {
		t.Fatalf("replace kept pid or address: old %+v new %+v", old, now)
	}
	peers, err := deploy.ReadPeers(c.PeersFile())
	if err != nil || peers[victim] != now.Addr {
		t.Fatalf("peers file says %q for %s (err %v), want %s", peers[victim], victim, err, now.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.WaitInstance(ctx, victim); err != nil {
		t.Fatal(err)
	}
	var zombie *Proc
	for _, p := range c.Processes() {
		if p.Replaced && p.PID == old.PID {
			zombie = &p
		}
	}
	if zombie == nil || !zombie.Alive {
		t.Fatalf("the replaced process is not listed as alive and replaced: %+v", c.Processes())
	}
	submitAndCompare(t, c)
	c.Stop()
	if err := syscall.Kill(old.PID, 0); err == nil {
		t.Errorf("the replaced pid %d survived Stop", old.PID)
	}
}

// TestLocalCommands runs `wololo local run` and `wololo local` (stopped by
// SIGTERM) as a user would.
func TestLocalCommands(t *testing.T) {
	bin := testkit.WololoBinary(t)
	matches, players, want := dataset(t)
	out := t.TempDir()
	res, err := exec.Command(bin, "local", "run", "--free-ports", "--matches", matches, "--players", players, "--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("wololo local run: %v\n%s", err, res)
	}
	for _, s := range []string{"peak resident memory", "gateway-0", "shard-1", "elapsed"} {
		if !strings.Contains(string(res), s) {
			t.Errorf("output lacks %q:\n%s", s, res)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(out, "q2.csv")); !bytes.Equal(got, want.Answers["q2"]) {
		t.Errorf("q2.csv differs from the reference")
	}

	data := t.TempDir()
	cmd := exec.Command(bin, "local", "--free-ports", "--data", data)
	stdout, stderr := &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = io.MultiWriter(stdout, testkit.Writer(t)), io.MultiWriter(stderr, testkit.Writer(t))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "wololo local to say where the gateway listens", 30*time.Second, func() bool {
		return strings.Contains(stdout.String(), "gateway listening on")
	})
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wololo local exited %v after SIGTERM\n%s%s", err, stdout.String(), stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("wololo local did not exit within 20 s of SIGTERM")
	}
	for _, name := range []string{"peers.json", "topology.json", "gateway-0.log", "shard-1.log"} {
		if _, err := os.Stat(filepath.Join(data, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
