package driver

import (
	"context"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/election"
	"github.com/wololo/wololo/internal/testkit"
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
	testkit.WaitFor(t, "the election messages to be delivered", 20*time.Second, func() bool {
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

// startElectors runs n Electors on one memNet, each with its own store
// and, if logs has one for it, logger.
func startElectors(t *testing.T, n int, clock func() time.Time, stores map[election.ID]*MemTermStore, logs map[election.ID]hclog.Logger) *memNet {
	t.Helper()
	net := &memNet{nodes: map[election.ID]*Elector{}, cut: map[election.ID]bool{}}
	for _, id := range ids(n) {
		if stores[id] == nil {
			stores[id] = NewMemTermStore(0)
		}
		e, err := New(Config{
			Election: election.DefaultConfig(id, ids(n)), Tick: 5 * time.Millisecond,
			Terms: stores[id], Send: net.send, Now: clock, Log: logs[id],
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
			if err := e.Serve(ctx); err != nil {
				t.Errorf("elector %d: %v", id, err)
			}
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	return net
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
// id, which acts; every store holds the term; when the leader is cut
// off the next id takes over and acts on the majority left, and the cut-off
// one stops acting.
func TestElectorsElectPersistAndFailOver(t *testing.T) {
	clock := newFakeClock()
	stores := map[election.ID]*MemTermStore{}
	net := startElectors(t, 3, clock.now, stores, nil)
	stepUntil(t, net, clock, "master 3 to lead and act", func() bool {
		for _, e := range net.nodes {
			if e.State().Leader != 3 {
				return false
			}
		}
		return net.nodes[3].Acting()
	})
	term := net.nodes[3].State().Term
	for id, s := range stores {
		got, err := s.Load()
		if err != nil || got != term {
			t.Fatalf("term stored by %d: %d, %v; leader's term %d", id, got, err, term)
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
	net := startElectors(t, 2, clock.now, map[election.ID]*MemTermStore{}, nil)
	stepUntil(t, net, clock, "master 2 to lead and act", func() bool {
		return net.nodes[1].State().Leader == 2 && net.nodes[2].Acting()
	})
	net.setCut(1, true)
	clock.advance(10 * 5 * time.Millisecond) // more than the lease, at once
	if net.nodes[2].Acting() {
		t.Fatal("still acting after its lease ran out during a pause")
	}
}

// TestStateLinesAreWhatTheChaosCheckReads: the election's state changes
// are logged under fixed messages; in JSON (what tools/chaos reads) with
// id, term and leader as numbers and the role by name, in text as they
// have always read.
func TestStateLinesAreWhatTheChaosCheckReads(t *testing.T) {
	clock := newFakeClock()
	var jsonOut, textOut testkit.SyncBuffer
	logs := map[election.ID]hclog.Logger{
		2: hclog.New(&hclog.LoggerOptions{Name: "master", Output: &jsonOut, JSONFormat: true}),
		1: hclog.New(&hclog.LoggerOptions{Name: "master", Output: &textOut}),
	}
	net := startElectors(t, 2, clock.now, map[election.ID]*MemTermStore{}, logs)
	stepUntil(t, net, clock, "master 2 to lead and act", func() bool {
		return net.nodes[1].State().Leader == 2 && net.nodes[2].Acting()
	})
	term := net.nodes[2].State().Term
	net.setCut(1, true)
	stepUntil(t, net, clock, "master 2 to stop acting", func() bool { return !net.nodes[2].Acting() })

	type line struct {
		Message string          `json:"@message"`
		ID      json.RawMessage `json:"id"`
		Term    json.RawMessage `json:"term"`
		Role    json.RawMessage `json:"role"`
		Leader  json.RawMessage `json:"leader"`
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(jsonOut.String()), "\n") {
		var v line
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		switch v.Message {
		case "election state", "acting started", "acting stopped":
			got = append(got, strings.Join([]string{v.Message, string(v.ID), string(v.Term), string(v.Role), string(v.Leader)}, " "))
		}
	}
	ts := strconv.FormatUint(uint64(term), 10)
	want := []string{
		"election state 2 " + ts + ` "leader" 2`,
		"acting started 2 " + ts + "  ",
		"acting stopped 2 " + ts + ` "leader" `,
	}
	if !slicesHaveInOrder(got, want) {
		t.Errorf("JSON election lines\n%s\nwant, in this order, among them\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if text := textOut.String(); !strings.Contains(text, "master: election state: id=1 role=follower leader=2 term="+ts+"\n") {
		t.Errorf("text log of master 1 has no election state line for term %s:\n%s", ts, text)
	}
}

// TestActingStoppedCarriesTheDueTick: a leader paused past its lease
// logs "acting stopped" only when it next runs, but the line says when the
// tick that ended acting was due (StoppedAtKey), which is when Acting began
// to answer false: the lease's end, long before the line.
func TestActingStoppedCarriesTheDueTick(t *testing.T) {
	clock := newFakeClock()
	var jsonOut testkit.SyncBuffer
	logs := map[election.ID]hclog.Logger{
		2: hclog.New(&hclog.LoggerOptions{Name: "master", Output: &jsonOut, JSONFormat: true, TimeFn: clock.now}),
	}
	net := startElectors(t, 2, clock.now, map[election.ID]*MemTermStore{}, logs)
	stepUntil(t, net, clock, "master 2 to lead and act", func() bool {
		return net.nodes[1].State().Leader == 2 && net.nodes[2].Acting()
	})
	net.setCut(1, true)
	paused := clock.now()
	clock.advance(100 * 5 * time.Millisecond) // 100 ticks at once: far past the lease
	if net.nodes[2].Acting() {
		t.Fatal("still acting after its lease ran out during a pause")
	}
	var stop struct {
		Message   string `json:"@message"`
		Timestamp string `json:"@timestamp"`
		StoppedAt string `json:"stopped-at"`
	}
	for _, l := range strings.Split(strings.TrimSpace(jsonOut.String()), "\n") {
		if strings.Contains(l, `"acting stopped"`) {
			if err := json.Unmarshal([]byte(l), &stop); err != nil {
				t.Fatalf("not a JSON line: %q: %v", l, err)
			}
		}
	}
	at, err := time.Parse(time.RFC3339Nano, stop.StoppedAt)
	if err != nil {
		t.Fatalf("acting stopped without a readable %s: %+v", StoppedAtKey, stop)
	}
	lease := time.Duration(election.DefaultConfig(2, ids(2)).LeaseTicks) * 5 * time.Millisecond
	if at.Before(paused) || at.After(paused.Add(lease+5*time.Millisecond)) {
		t.Errorf("stopped-at %s: want within a lease (%s) of the pause at %s, line written at %s", at, lease, paused.UTC(), stop.Timestamp)
	}
}

// slicesHaveInOrder reports whether want is a subsequence of got.
func slicesHaveInOrder(got, want []string) bool {
	for _, g := range got {
		if len(want) > 0 && g == want[0] {
			want = want[1:]
		}
	}
	return len(want) == 0
}

// TestElectorStartsFromTheStoredTerm: a master restarted with a stored
// term starts there (and keeps the promise it may have made).
func TestElectorStartsFromTheStoredTerm(t *testing.T) {
	e, err := New(Config{
		Election: election.DefaultConfig(1, ids(3)), Terms: NewMemTermStore(7),
		Send: func(context.Context, election.Message) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.State().Term; got != 7 {
		t.Fatalf("term %d, want the stored 7", got)
	}
}

// failingStore loads fine and cannot save.
type failingStore struct{}

func (failingStore) Load() (election.Term, error) { return 0, nil }
func (failingStore) Save(election.Term) error     { return errors.New("disk full") }

// TestElectorStopsWhenTheTermCannotBeSaved: a lone master that claims a
// term it cannot persist sends nothing, never acts, and Serve returns the
// error.
func TestElectorStopsWhenTheTermCannotBeSaved(t *testing.T) {
	clock := newFakeClock()
	var sent atomic.Int32
	e, err := New(Config{
		Election: election.DefaultConfig(1, ids(1)), Tick: 5 * time.Millisecond, Terms: failingStore{},
		Send: func(context.Context, election.Message) error { sent.Add(1); return nil }, Now: clock.now,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.Serve(context.Background()) }()
	clock.advance(100 * 5 * time.Millisecond) // far past listening: it claims a term
	if e.Acting() {
		t.Fatal("acting on a term it could not persist")
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("Serve returned %v, want the store's error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after the store failed")
	}
	if n := sent.Load(); n != 0 {
		t.Fatalf("%d messages sent", n)
	}
}

func TestNewRefusesAConfigWithoutSend(t *testing.T) {
	if _, err := New(Config{Election: election.DefaultConfig(1, ids(1))}); err == nil {
		t.Fatal("a Config without Send was accepted")
	}
	if _, err := New(Config{Election: election.DefaultConfig(4, ids(3)), Send: func(context.Context, election.Message) error { return nil }}); !errors.Is(err, election.ErrConfig) {
		t.Fatalf("an id outside the peers: %v, want election.ErrConfig", err)
	}
}

func TestMemTermStore(t *testing.T) {
	s := NewMemTermStore(3)
	if got, err := s.Load(); got != 3 || err != nil {
		t.Fatalf("Load: %d, %v", got, err)
	}
	if err := s.Save(9); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(); got != 9 || s.Saves() != 1 {
		t.Fatalf("after Save(9): %d, %d saves", got, s.Saves())
	}
}

// TestImportsOnlyElection keeps the package what its doc says: election,
// the standard library and hclog, nothing else (no gRPC, no protobuf).
func TestImportsOnlyElection(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			switch {
			case path == "github.com/wololo/wololo/election", path == "github.com/hashicorp/go-hclog":
			case !strings.Contains(first, "."): // the standard library
			default:
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
