package local

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/internal/testkit"
)

// TestDataDirLock: a data directory is held by one runner at a time; the
// second is told the holder's pid; a lock file a dead runner left (its pid
// inside, no lock held) does not stand in the way; the file is never
// removed.
func TestDataDirLock(t *testing.T) {
	dir := t.TempDir()
	own := os.Getpid()
	first, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, LockFile)); holderPID(b) != own {
		t.Fatalf("the lock file holds %q, want this process's pid %d", b, own)
	}
	_, err = lockDataDir(dir)
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.PID != own || inUse.Dir != dir {
		t.Fatalf("a second lock: %v; want an InUseError naming pid %d", err, own)
	}
	for _, want := range []string{dir, "pid " + strconv.Itoa(own), "--data"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	first.release()
	first.release() // twice is harmless
	again, err := lockDataDir(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again.release()

	stale := t.TempDir()
	if err := os.WriteFile(filepath.Join(stale, LockFile), []byte("999999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := lockDataDir(stale)
	if err != nil {
		t.Fatalf("a lock file left by a dead runner: %v", err)
	}
	l.release()
	if _, err := os.Stat(filepath.Join(stale, LockFile)); err != nil {
		t.Fatalf("the lock file was removed: %v", err)
	}
}

func TestHolderPID(t *testing.T) {
	for _, c := range []struct {
		content string
		want    int
	}{
		{"1234\n", 1234},
		{"1234", 1234},
		{"", 0}, // the holder has not written it yet
		{"x", 0},
		{"-3\n", 0},
		{"0\n", 0},
	} {
		if got := holderPID([]byte(c.content)); got != c.want {
			t.Errorf("holderPID(%q) = %d, want %d", c.content, got, c.want)
		}
	}
}

// TestCheckPorts: the first port in use is named, with whose it was to be.
func TestCheckPorts(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	free, err := FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	addr := func(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
	heldAddr := held.Addr().String()
	_, heldPort, _ := net.SplitHostPort(heldAddr)
	for _, c := range []struct {
		name string
		uses []portUse
		want string // the address named; "" for none
	}{
		{"all free", []portUse{{addr(free[0]), "the gateway's public port"}, {addr(free[1]), "shard-0's gRPC port"}}, ""},
		{"one in use", []portUse{{addr(free[0]), "the gateway's public port"}, {heldAddr, "shard-0's admin port"}, {addr(free[1]), "x"}}, heldAddr},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkPorts(c.uses)
			var inUse *PortInUseError
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("checkPorts: %v", err)
			case c.want == "":
			case !errors.As(err, &inUse) || inUse.Addr != c.want || !inUse.Ours:
				t.Fatalf("checkPorts: %v; want a PortInUseError for %s, one of the cluster's", err, c.want)
			default:
				for _, s := range []string{"port " + heldPort + " ", "shard-0's admin port", "--base-port", "--free-ports"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%q does not say %q", err, s)
					}
				}
			}
		})
	}
}

// TestPortInUseSaysWhetherItIsOurs: a port a child could not listen on
// is the cluster's, named, when it is one of its instances'; else it was
// named by something else (an extra flag), and not the cluster's.
func TestPortInUseSaysWhetherItIsOurs(t *testing.T) {
	uses := []portUse{{"127.0.0.1:7100", "the gateway's public port"}, {"127.0.0.1:7101", "shard-0's gRPC port"}}
	if got := portInUse(uses, "127.0.0.1:7101"); *got != (PortInUseError{Addr: "127.0.0.1:7101", What: "shard-0's gRPC port", Ours: true}) {
		t.Errorf("an instance's port: %+v", *got)
	}
	if got := portInUse(uses, "127.0.0.1:9"); *got != (PortInUseError{Addr: "127.0.0.1:9", What: "a port of the cluster"}) {
		t.Errorf("a port no instance was given: %+v", *got)
	}
}

// TestStartAgainWhenAPickedPortIsTaken: a start whose picked free port
// another process holds by the time it checks is made again on ports
// picked anew, and the cluster comes up on those; the held port is none
// of its.
func TestStartAgainWhenAPickedPortIsTaken(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := held.Addr().(*net.TCPAddr).Port
	picks := 0
	t.Cleanup(func() { pickFreePorts = FreePorts })
	pickFreePorts = func(n int) ([]int, error) {
		picks++
		ports, err := FreePorts(n)
		if picks == 1 && err == nil {
			ports[len(ports)-1] = heldPort // the last instance's admin port: taken since it was picked
		}
		return ports, err
	}
	c, err := Start(context.Background(), Options{
		Binary: testkit.WololoBinary(t), DataDir: t.TempDir(), FreePorts: true, LogLevel: "warn",
		Log: hclog.New(&hclog.LoggerOptions{Name: "local", Level: hclog.Info, Output: testkit.Writer(t)}),
	})
	if err != nil {
		t.Fatalf("start after a picked port was taken: %v", err)
	}
	defer c.Stop()
	if picks != 2 {
		t.Fatalf("ports picked %d times, want 2 (the first start found one taken)", picks)
	}
	c.mu.Lock()
	uses := c.portUsesLocked()
	c.mu.Unlock()
	for _, u := range uses {
		if u.addr == held.Addr().String() {
			t.Fatalf("the cluster came up with the taken port as %s", u.what)
		}
	}
}

// TestPortTakenIn reads the port a child could not listen on from what it
// wrote before it exited.
func TestPortTakenIn(t *testing.T) {
	for _, c := range []struct {
		name, log, want string
	}{
		{"gRPC", "wololo worker: listen on 127.0.0.1:7104: listen tcp 127.0.0.1:7104: bind: address already in use\n", "127.0.0.1:7104"},
		{"admin", "wololo master: admin listener on 127.0.0.1:8110: listen tcp 127.0.0.1:8110: bind: address already in use", "127.0.0.1:8110"},
		{"public", "wololo gateway: listen for clients on 127.0.0.1:7100: listen tcp 127.0.0.1:7100: bind: address already in use", "127.0.0.1:7100"},
		{"the last of two", "listen tcp 127.0.0.1:1: bind: address already in use\nlisten tcp 127.0.0.1:2: bind: address already in use\n", "127.0.0.1:2"},
		{"another failure", "wololo worker: open store: permission denied\n", ""},
		{"nothing", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := portTakenIn(c.log); got != c.want {
				t.Fatalf("portTakenIn = %q, want %q", got, c.want)
			}
		})
	}
}

// TestOneClusterPerDataDirectoryAndPort: a second runner on a running
// cluster's data directory is refused at once, naming the first one's pid;
// one whose port is taken is refused at once, naming the port; one whose
// child dies on a port taken after the check names that port; only a
// process this runner started counts as its instance. The first cluster
// runs a job byte-equal to the reference after all that.
func TestOneClusterPerDataDirectoryAndPort(t *testing.T) {
	first, err := Start(context.Background(), Options{
		Binary: testkit.WololoBinary(t), DataDir: t.TempDir(), FreePorts: true, LogLevel: "warn", Control: true,
		Log: hclog.New(&hclog.LoggerOptions{Name: "local", Level: hclog.Info, Output: testkit.Writer(t)}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Stop() })
	quick := func(what string, o Options) error {
		t.Helper()
		o.Binary, o.LogLevel, o.Log, o.ReadyTimeout = testkit.WololoBinary(t), "warn", hclog.NewNullLogger(), 60*time.Second
		start := time.Now()
		c, err := Start(context.Background(), o)
		if err == nil {
			c.Stop()
			t.Fatalf("%s: started", what)
		}
		if took := time.Since(start); took > 15*time.Second {
			t.Errorf("%s: refused after %s; want at once", what, took)
		}
		t.Logf("%s: refused after %s: %v", what, time.Since(start).Round(time.Millisecond), err)
		return err
	}

	err = quick("the same data directory", Options{DataDir: first.DataDir(), FreePorts: true})
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.PID != os.Getpid() {
		t.Fatalf("the same data directory: %v; want an InUseError naming pid %d", err, os.Getpid())
	}
	for _, name := range []string{ControlSocket, "peers.json", "topology.json"} {
		if _, err := os.Stat(filepath.Join(first.DataDir(), name)); err != nil {
			t.Errorf("the refused runner touched the first one's %s: %v", name, err)
		}
	}

	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := held.Addr().(*net.TCPAddr).Port
	err = quick("a port in use", Options{DataDir: t.TempDir(), BasePort: port})
	var portErr *PortInUseError
	if !errors.As(err, &portErr) || portErr.Addr != held.Addr().String() || !strings.Contains(err.Error(), "the gateway's public port") {
		t.Fatalf("a port in use: %v; want a PortInUseError for the public port %s", err, held.Addr())
	}

	// A port taken after the check (here: every graph process's admin
	// address given again, the last flag winning): the child's exit names it.
	err = quick("a child's port taken", Options{DataDir: t.TempDir(), FreePorts: true, ExtraArgs: []string{"--admin", held.Addr().String()}})
	if !errors.As(err, &portErr) || portErr.Addr != held.Addr().String() || !strings.Contains(err.Error(), "exited (exit status 1) at start") {
		t.Fatalf("a child's port taken: %v; want its exit and a PortInUseError for %s", err, held.Addr())
	}

	// Another process answering on an instance's address is not the
	// instance.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shard := procOf(first, "shard-0")
	if err := first.probe(ctx, shard.Addr, "shard-0", shard.PID); err != nil {
		t.Fatalf("probe of its own process: %v", err)
	}
	var foreign *foreignError
	if err := first.probe(ctx, shard.Addr, "shard-0", shard.PID+1); !errors.As(err, &foreign) || foreign.pid != int64(shard.PID) {
		t.Fatalf("probe expecting another pid: %v; want a foreignError naming pid %d", err, shard.PID)
	}

	submitAndCompare(t, first)
}

// TestPortInUseMakesNothing: a start refused because a port is in use
// makes no CA in its data directory, and removes the data directory it
// made; a data directory that was there stays, without a CA.
func TestPortInUseMakesNothing(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := held.Addr().(*net.TCPAddr).Port
	fresh, existing := filepath.Join(t.TempDir(), "data"), t.TempDir()
	for _, dir := range []string{fresh, existing} {
		c, err := Start(context.Background(), Options{DataDir: dir, BasePort: port, Log: hclog.NewNullLogger()})
		if err == nil {
			c.Stop()
			t.Fatalf("a start on a port in use (data directory %s) started", dir)
		}
		var portErr *PortInUseError
		if !errors.As(err, &portErr) {
			t.Fatalf("a start on a port in use: %v, want a PortInUseError", err)
		}
	}
	if _, err := os.Stat(fresh); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the data directory the failed start made is still there (%v)", err)
	}
	if _, err := os.Stat(existing); err != nil {
		t.Errorf("the data directory that was there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(existing, "tls")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the failed start made a CA in %s (%v)", existing, err)
	}
}
