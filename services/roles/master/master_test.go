package master

import (
	"context"
	"errors"
	"math"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// fakeRuntime lists fixed processes.
type fakeRuntime struct{ procs []Process }

func (f *fakeRuntime) List(context.Context) ([]Process, error)     { return f.procs, nil }
func (f *fakeRuntime) Start(context.Context, string) (bool, error) { return true, nil }
func (f *fakeRuntime) Kill(context.Context, string) error          { return nil }

func newTestMaster(t testing.TB, self int, rt Runtime) *Master {
	t.Helper()
	return newTestMasterIn(t, self, rt, "")
}

// newTestMasterIn makes a master of three with the given data directory
// (empty: the term in memory).
func newTestMasterIn(t testing.TB, self int, rt Runtime, dataDir string) *Master {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	top := deploy.Default()
	top.Masters = 3
	m, err := New(Config{
		Self: self, Topology: top, Listener: l, Runtime: rt, RuntimeName: "local", DataDir: dataDir,
		Resolver: func(string) (string, error) { return "", errors.New("no peers in this test") },
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNewRefusesAnIDOutsideTheMasters(t *testing.T) {
	top := deploy.Default()
	top.Masters = 3
	for _, id := range []int{0, 4, -1} {
		if _, err := New(Config{Self: id, Topology: top, Runtime: &fakeRuntime{}}); err == nil {
			t.Errorf("id %d accepted", id)
		}
	}
}

func TestDeliverRefusesBadMessages(t *testing.T) {
	srv := &electionServer{m: newTestMaster(t, 2, &fakeRuntime{})}
	hb := wololov1.ElectionKind_ELECTION_KIND_HEARTBEAT
	cases := []struct {
		name string
		req  *wololov1.DeliverRequest
		want codes.Code
	}{
		{"good", &wololov1.DeliverRequest{Kind: hb, From: 3, To: 2, Term: 1, Seq: 4}, codes.OK},
		{"unspecified kind", &wololov1.DeliverRequest{From: 3, To: 2}, codes.InvalidArgument},
		{"unknown kind", &wololov1.DeliverRequest{Kind: 99, From: 3, To: 2}, codes.InvalidArgument},
		{"from itself", &wololov1.DeliverRequest{Kind: hb, From: 2, To: 2}, codes.InvalidArgument},
		{"from no master", &wololov1.DeliverRequest{Kind: hb, From: 4, To: 2}, codes.InvalidArgument},
		{"from zero", &wololov1.DeliverRequest{Kind: hb, To: 2}, codes.InvalidArgument},
		{"for another master", &wololov1.DeliverRequest{Kind: hb, From: 3, To: 1}, codes.InvalidArgument},
		{"a term far ahead", &wololov1.DeliverRequest{Kind: hb, From: 3, To: 2, Term: MaxTermStep + 1}, codes.InvalidArgument},
		{"the largest term", &wololov1.DeliverRequest{Kind: hb, From: 3, To: 2, Term: math.MaxUint64}, codes.InvalidArgument},
		{"a term at the margin", &wololov1.DeliverRequest{Kind: hb, From: 3, To: 2, Term: MaxTermStep}, codes.OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := srv.Deliver(context.Background(), c.req)
			if got := status.Code(err); got != c.want {
				t.Fatalf("code %s (%v), want %s", got, err, c.want)
			}
		})
	}
}

// TestStatusDescribesEveryProcess: Status names the election and every
// supervised process (the graph and the other masters) with the runtime's
// view of it.
func TestStatusDescribesEveryProcess(t *testing.T) {
	rt := &fakeRuntime{procs: []Process{
		{Instance: "gateway-0", Running: true, PID: 41, Ref: "41", Restarts: 2},
		{Instance: "master-3", Running: false, Exit: "killed by signal 9", Restarts: 1},
	}}
	m := newTestMaster(t, 2, rt)
	procs, _ := rt.List(context.Background())
	m.observe(procs)
	st := m.Status()
	if st.Id != 2 || st.Runtime != "local" || len(st.Peers) != 3 || st.ElectionRole != "follower" {
		t.Fatalf("status %+v", st)
	}
	want := len(deploy.Default().Instances()) + 2 // the graph and masters 1 and 3
	if len(st.Processes) != want {
		t.Fatalf("%d processes, want %d", len(st.Processes), want)
	}
	by := map[string]*wololov1.SupervisedProcess{}
	for _, p := range st.Processes {
		by[p.Instance] = p
	}
	if g := by["gateway-0"]; g.State != "alive" || g.Pid != "41" || g.Restarts != 2 || g.LastSeen == nil {
		t.Errorf("gateway-0: %+v", g)
	}
	if m3 := by["master-3"]; m3.State != "exited" || m3.Exit != "killed by signal 9" || m3.Pid != "" {
		t.Errorf("master-3: %+v", m3)
	}
	if m1 := by["master-1"]; m1.State != "unknown" {
		t.Errorf("master-1: %+v", m1)
	}
	if _, self := by["master-2"]; self {
		t.Error("a master supervises itself")
	}
}

// TestLoopRoundsDoNotWaitForHungProbes: a process whose probe hangs (a
// paused one) neither delays a round nor gets a second probe while the
// first is in flight, and the others keep being probed every round.
func TestLoopRoundsDoNotWaitForHungProbes(t *testing.T) {
	rt := &fakeRuntime{procs: []Process{
		{Instance: "paused", Running: true, Address: "127.0.0.1:1"},
		{Instance: "healthy", Running: true, Address: "127.0.0.1:2"},
	}}
	l := NewLoop(LoopConfig{Runtime: rt, Instances: []string{"paused", "healthy"}, Acting: func() bool { return false }})
	release := make(chan struct{})
	var pausedProbes, healthyProbes atomic.Int32
	healthyDone := make(chan struct{}, 10)
	l.probe = func(ctx context.Context, conn *grpc.ClientConn) Answer {
		if strings.HasSuffix(conn.Target(), "127.0.0.1:1") {
			pausedProbes.Add(1)
			<-release
			return Serving
		}
		healthyProbes.Add(1)
		healthyDone <- struct{}{}
		return Serving
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conns := map[string]*grpc.ClientConn{}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	before := map[string]time.Time{}
	for _, s := range l.States() {
		before[s.Instance] = s.LastSeen
	}
	for round := 1; round <= 3; round++ {
		done := make(chan struct{})
		go func() { l.round(ctx, conns); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d waited for the hung probe", round)
		}
		<-healthyDone // that round's probe of the healthy process answered
		testkit.WaitFor(t, "the healthy process's probe to finish", 20*time.Second, func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			return !l.probing["healthy"]
		})
	}
	testkit.WaitFor(t, "the hung probe to start", 20*time.Second, func() bool { return pausedProbes.Load() > 0 })
	if got := pausedProbes.Load(); got != 1 {
		t.Errorf("the hung process was probed %d times at once, want 1", got)
	}
	if got := healthyProbes.Load(); got != 3 {
		t.Errorf("the healthy process was probed %d times in 3 rounds, want 3", got)
	}
	seen := func(instance string) time.Time {
		for _, s := range l.States() {
			if s.Instance == instance {
				return s.LastSeen
			}
		}
		return time.Time{}
	}
	if !seen("paused").Equal(before["paused"]) {
		t.Error("the hung process counts as seen before its probe answered")
	}
	close(release)
	l.probes.Wait()
	if !seen("paused").After(before["paused"]) || !seen("healthy").After(before["healthy"]) {
		t.Errorf("answers not recorded: %v -> paused %v, healthy %v", before, seen("paused"), seen("healthy"))
	}
}

// countingRuntime lists fixed processes and counts the calls.
type countingRuntime struct {
	fakeRuntime
	lists int
}

func (c *countingRuntime) List(ctx context.Context) ([]Process, error) {
	c.lists++
	return c.fakeRuntime.List(ctx)
}

// TestWaitGoneAsksOnceWhenNotRunning: a killed instance that is listed as
// not running, or not listed (a swarm task being replaced), is gone at the
// first look; only one still running is asked about until the limit.
func TestWaitGoneAsksOnceWhenNotRunning(t *testing.T) {
	for _, c := range []struct {
		name  string
		procs []Process
		once  bool
	}{
		{"listed, exited", []Process{{Instance: "shard-0", Exit: "killed"}}, true},
		{"not listed", []Process{{Instance: "shard-1", Running: true}}, true},
		{"still running", []Process{{Instance: "shard-0", Running: true}}, false},
	} {
		rt := &countingRuntime{fakeRuntime: fakeRuntime{procs: c.procs}}
		l := &Loop{cfg: LoopConfig{Runtime: rt}}
		l.waitGone(context.Background(), "shard-0", 100*time.Millisecond)
		if once := rt.lists == 1; once != c.once {
			t.Errorf("%s: %d lists", c.name, rt.lists)
		}
	}
}
