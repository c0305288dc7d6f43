package master

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/election"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// memNet connects Electors in memory; a cut master neither sends nor
// receives.
type memNet struct {
	mu    sync.Mutex
	nodes map[election.ID]*Elector
	cut   map[election.ID]bool
}

func (n *memNet) send(_ context.Context, m election.Message) error {
	n.mu.Lock()
	to, cut := n.nodes[m.To], n.cut[m.To] || n.cut[m.From]
	n.mu.Unlock()
	if to == nil || cut {
		return errors.New("unreachable")
	}
	to.Receive(m)
	return nil
}

func (n *memNet) setCut(id election.ID, cut bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cut[id] = cut
}

// quiesce waits until no Elector has a message queued or in Send. The
// answer to a message is queued inside the Send that delivers it, so zero
// everywhere means the network is idle until the next tick: a fake clock
// then moves in ticks that every message keeps up with, however loaded
// the machine is.
func (n *memNet) quiesce(t *testing.T) {
	t.Helper()
	waitFor(t, "the election messages to be delivered", func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		for _, e := range n.nodes {
			if e.unsent.Load() != 0 {
				return false
			}
		}
		return true
	})
}

// fakeClock is a clock tests move by hand.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func newFakeClock() *fakeClock               { c := &fakeClock{}; c.ns.Store(time.Now().UnixNano()); return c }
func ids(n int) (out []election.ID) {
	for i := 1; i <= n; i++ {
		out = append(out, election.ID(i))
	}
	return out
}
func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !f(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// startElectors runs n Electors on one memNet, with term files in dir.
func startElectors(t *testing.T, n int, clock func() time.Time, dir string) (*memNet, map[election.ID]context.CancelFunc) {
	t.Helper()
	net := &memNet{nodes: map[election.ID]*Elector{}, cut: map[election.ID]bool{}}
	cancels := map[election.ID]context.CancelFunc{}
	for _, id := range ids(n) {
		e, err := NewElector(ElectorConfig{
			Election: election.DefaultConfig(id, ids(n)), Tick: 5 * time.Millisecond,
			TermFile: filepath.Join(dir, "term-"+string(rune('0'+id))), Send: net.send, Now: clock,
		})
		if err != nil {
			t.Fatal(err)
		}
		net.nodes[id] = e
	}
	for id, e := range net.nodes {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := e.Run(ctx); err != nil {
				t.Errorf("elector %d: %v", id, err)
			}
		}()
		cancels[id] = cancel
		t.Cleanup(func() { cancel(); <-done })
	}
	return net, cancels
}

// stepUntil moves the fake clock one tick at a time, letting every message
// of each tick be delivered, until cond holds.
func stepUntil(t *testing.T, net *memNet, clock *fakeClock, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i == 2000 {
			t.Fatalf("%s: not after %d ticks", what, i)
		}
		clock.advance(5 * time.Millisecond) // one tick
		net.quiesce(t)
	}
}

// TestElectorsElectPersistAndFailOver: three Electors elect the highest
// id, which acts; every term file holds the term; when the leader is cut
// off the next id takes over and acts on the majority left, and the cut-off
// one stops acting.
func TestElectorsElectPersistAndFailOver(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	net, _ := startElectors(t, 3, clock.now, dir)
	stepUntil(t, net, clock, "master 3 to lead and act", func() bool {
		for _, e := range net.nodes {
			if e.State().Leader != 3 {
				return false
			}
		}
		return net.nodes[3].Acting()
	})
	term := net.nodes[3].State().Term
	for id := range net.nodes {
		got, err := ReadTerm(filepath.Join(dir, "term-"+string(rune('0'+id))))
		if err != nil || got != term {
			t.Fatalf("term file of %d: %d, %v; leader's term %d", id, got, err, term)
		}
	}
	net.setCut(3, true)
	stepUntil(t, net, clock, "master 2 to take over and act", func() bool {
		s := net.nodes[2].State()
		return s.Role == election.RoleLeader && s.Term > term && net.nodes[2].Acting()
	})
	if net.nodes[3].Acting() {
		t.Fatal("the cut-off master 3 still acts while master 2 does")
	}
}

// TestElectorCatchesUpTicksBeforeActing: a leader whose clock jumps (its
// process was paused) and which hears nothing stops acting at the very
// next question, before any ticker fires.
func TestElectorCatchesUpTicksBeforeActing(t *testing.T) {
	clock := newFakeClock()
	net, _ := startElectors(t, 2, clock.now, t.TempDir())
	stepUntil(t, net, clock, "master 2 to lead and act", func() bool {
		return net.nodes[1].State().Leader == 2 && net.nodes[2].Acting()
	})
	net.setCut(1, true)
	clock.advance(10 * 5 * time.Millisecond) // more than the lease, at once
	if net.nodes[2].Acting() {
		t.Fatal("still acting after its lease ran out during a pause")
	}
}

func TestReadTerm(t *testing.T) {
	dir := t.TempDir()
	if got, err := ReadTerm(filepath.Join(dir, "missing")); got != 0 || err != nil {
		t.Fatalf("missing file: %d, %v", got, err)
	}
	if got, err := ReadTerm(""); got != 0 || err != nil {
		t.Fatalf("no file: %d, %v", got, err)
	}
	path := filepath.Join(dir, "term")
	for content, want := range map[string]election.Term{"7\n": 7, "12": 12} {
		os.WriteFile(path, []byte(content), 0o644)
		if got, err := ReadTerm(path); got != want || err != nil {
			t.Fatalf("%q: %d, %v", content, got, err)
		}
	}
	os.WriteFile(path, []byte("seven"), 0o644)
	if _, err := ReadTerm(path); err == nil {
		t.Fatal("a garbled term file was accepted")
	}
}

// fakeRuntime lists fixed processes.
type fakeRuntime struct{ procs []Process }

func (f *fakeRuntime) List(context.Context) ([]Process, error)     { return f.procs, nil }
func (f *fakeRuntime) Start(context.Context, string) (bool, error) { return true, nil }
func (f *fakeRuntime) Kill(context.Context, string) error          { return nil }

func newTestMaster(t testing.TB, self int, rt Runtime) *Master {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	top := deploy.Default()
	top.Masters = 3
	m, err := New(Config{
		Self: self, Topology: top, Listener: l, Runtime: rt, RuntimeName: "local",
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
	l.probe = func(ctx context.Context, conn *grpc.ClientConn) bool {
		if strings.HasSuffix(conn.Target(), "127.0.0.1:1") {
			pausedProbes.Add(1)
			<-release
			return true
		}
		healthyProbes.Add(1)
		healthyDone <- struct{}{}
		return true
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
		waitFor(t, "the healthy process's probe to finish", func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			return !l.probing["healthy"]
		})
	}
	waitFor(t, "the hung probe to start", func() bool { return pausedProbes.Load() > 0 })
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
