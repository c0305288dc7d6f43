package rpc

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/wire/pki"
)

func TestKeyedCounter(t *testing.T) {
	type op struct {
		acquire bool // else release
		key     string
		want    bool // acquire's result
	}
	cases := []struct {
		name string
		max  int
		ops  []op
		held map[string]int
	}{
		{"up to max per key", 2, []op{{true, "a", true}, {true, "a", true}, {true, "a", false}, {true, "b", true}}, map[string]int{"a": 2, "b": 1}},
		{"a release makes room", 1, []op{{true, "a", true}, {true, "a", false}, {false, "a", false}, {true, "a", true}}, map[string]int{"a": 1}},
		{"a release of nothing does nothing", 1, []op{{false, "a", false}, {true, "a", true}, {true, "a", false}}, map[string]int{"a": 1}},
		{"released to nothing leaves no entry", 3, []op{{true, "a", true}, {false, "a", false}}, map[string]int{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newKeyedCounter[string](tc.max)
			for i, o := range tc.ops {
				if !o.acquire {
					c.release(o.key)
				} else if got := c.acquire(o.key); got != o.want {
					t.Fatalf("op %d: acquire(%s) = %v, want %v", i, o.key, got, o.want)
				}
			}
			if len(c.n) != len(tc.held) {
				t.Fatalf("entries %v, want %v", c.n, tc.held)
			}
			for k, n := range tc.held {
				if c.held(k) != n {
					t.Errorf("held(%s) = %d, want %d", k, c.held(k), n)
				}
			}
		})
	}
}

func TestConnTable(t *testing.T) {
	anon := func(addr string) caller { return caller{addr: addr} }
	alice := caller{addr: "a", who: `client "alice"`}
	type step struct {
		do     string // accept, hand (handshaken), handx (exempt), close
		conn   int
		addr   string // accept
		who    caller // hand
		want   bool   // hand's result
		evicts int    // accept's evicted conn, 0 for none
	}
	cases := []struct {
		name             string
		steps            []step
		pending, counted int
	}{
		{"a handshake moves a connection from pending to its caller", []step{
			{do: "accept", conn: 1, addr: "a"}, {do: "hand", conn: 1, who: anon("a"), want: true},
		}, 0, 1},
		{"past max per caller the handshake is refused", []step{
			{do: "accept", conn: 1, addr: "a"}, {do: "accept", conn: 2, addr: "a"},
			{do: "hand", conn: 1, who: anon("a"), want: true}, {do: "hand", conn: 2, who: anon("a"), want: true},
			{do: "accept", conn: 3, addr: "a"}, {do: "hand", conn: 3, who: anon("a"), want: false}, {do: "close", conn: 3},
		}, 0, 2},
		{"callers of one address are counted apart", []step{
			{do: "accept", conn: 1, addr: "a"}, {do: "accept", conn: 2, addr: "a"},
			{do: "hand", conn: 1, who: anon("a"), want: true}, {do: "hand", conn: 2, who: anon("a"), want: true},
			{do: "accept", conn: 3, addr: "a"}, {do: "hand", conn: 3, who: alice, want: true},
		}, 0, 3},
		{"the deployment's processes are not counted", []step{
			{do: "accept", conn: 1, addr: "a"}, {do: "accept", conn: 2, addr: "a"},
			{do: "hand", conn: 1, who: anon("a"), want: true}, {do: "hand", conn: 2, who: anon("a"), want: true},
			{do: "accept", conn: 3, addr: "a"}, {do: "handx", conn: 3, want: true},
		}, 0, 2},
		{"the oldest pending is evicted past max", []step{
			{do: "accept", conn: 1, addr: "a"}, {do: "accept", conn: 2, addr: "a"},
			{do: "accept", conn: 3, addr: "a", evicts: 1}, {do: "accept", conn: 4, addr: "b"},
			{do: "hand", conn: 1, who: anon("a"), want: false}, {do: "close", conn: 1},
			{do: "handx", conn: 3, want: true},
		}, 2, 0},
		{"a closed connection gives its place back", []step{
			{do: "accept", conn: 1, addr: "a"}, {do: "hand", conn: 1, who: anon("a"), want: true},
			{do: "accept", conn: 2, addr: "a"}, {do: "hand", conn: 2, who: anon("a"), want: true},
			{do: "close", conn: 1}, {do: "accept", conn: 3, addr: "a"}, {do: "hand", conn: 3, who: anon("a"), want: true},
			{do: "close", conn: 2}, {do: "close", conn: 2},
		}, 0, 1},
		{"a pending connection closed leaves the queue", []step{
			{do: "accept", conn: 1, addr: "a"}, {do: "accept", conn: 2, addr: "a"}, {do: "close", conn: 1},
			{do: "accept", conn: 3, addr: "a"},
		}, 2, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tb := newConnTable[int](2)
			for i, s := range tc.steps {
				switch s.do {
				case "accept":
					ev, ok := tb.accept(s.addr, s.conn)
					if (s.evicts != 0) != ok || ok && ev != s.evicts {
						t.Fatalf("step %d: accept evicted %d, %v; want %d", i, ev, ok, s.evicts)
					}
				case "hand", "handx":
					if got := tb.handshaken(s.conn, s.who, s.do == "handx"); got != s.want {
						t.Fatalf("step %d: handshaken(%d) = %v, want %v", i, s.conn, got, s.want)
					}
				case "close":
					tb.closed(s.conn)
				}
			}
			if p, c := tb.sizes(); p != tc.pending || c != tc.counted {
				t.Fatalf("pending %d, counted %d; want %d, %d", p, c, tc.pending, tc.counted)
			}
		})
	}
}

func TestLogLimiter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type note struct {
		key  string
		at   time.Duration // after t0
		full bool
	}
	cases := []struct {
		name    string
		notes   []note
		flushAt time.Duration
		want    *summary // nil: none
	}{
		{"each key's first is logged, up to lines keys", []note{
			{"a", 0, true}, {"a", 1, false}, {"b", 2, true}, {"c", 3, false}, {"a", 4, false},
		}, 10 * time.Second, &summary{period: 10 * time.Second, total: 5, unlogged: 3, top: []keyCount{{"a", 2}, {"c", 1}}}},
		{"nothing unlogged: no summary", []note{{"a", 0, true}, {"b", 1, true}}, 10 * time.Second, nil},
		{"no flush before the period", []note{{"a", 0, true}, {"a", 1, false}}, 9 * time.Second, nil},
		{"keys past maxKeys count as others", []note{
			{"a", 0, true}, {"b", 0, true}, {"c", 0, false}, {"d", 0, false}, {"e", 0, false}, {"e", 0, false}, {"f", 0, false},
		}, 11 * time.Second, &summary{period: 11 * time.Second, total: 7, unlogged: 5, top: []keyCount{{"e", 2}, {"c", 1}, {"d", 1}}, others: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLogLimiter(10*time.Second, 2, 3)
			for i, n := range tc.notes {
				full, opened := l.note(n.key, t0.Add(n.at))
				if full != n.full || opened != (i == 0) {
					t.Fatalf("note %d (%s): full %v opened %v; want %v %v", i, n.key, full, opened, n.full, i == 0)
				}
			}
			s, ok := l.flush(t0.Add(tc.flushAt))
			if ok != (tc.want != nil) {
				t.Fatalf("flush: %v, %v; want %v", s, ok, tc.want)
			}
			if ok && fmt.Sprint(s) != fmt.Sprint(*tc.want) {
				t.Fatalf("summary %+v, want %+v", s, *tc.want)
			}
		})
	}
	// A window that ended opens anew: its keys are logged again.
	l := newLogLimiter(time.Second, 1, 10)
	l.note("a", t0)
	l.note("a", t0)
	if s, ok := l.flush(t0.Add(time.Second)); !ok || s.most() != "1 x a" {
		t.Fatalf("flush = %+v %v (%q)", s, ok, s.most())
	}
	if full, opened := l.note("a", t0.Add(2*time.Second)); !full || !opened {
		t.Fatalf("after a flush: full %v opened %v; want a new window logging a again", full, opened)
	}
}

// counted is a RefusalCounter for tests.
type counted struct {
	mu    sync.Mutex
	calls map[string]int // "plane code method"
	conns map[string]int // "plane reason"
}

func (c *counted) RefusedCall(plane, code, method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[plane+" "+code+" "+method]++
}

func (c *counted) RefusedConnection(plane, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conns == nil {
		c.conns = map[string]int{}
	}
	c.conns[plane+" "+reason]++
}

func (c *counted) call(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[key]
}

func (c *counted) conn(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns[key]
}

// tlsServer serves a TLS server (instance x-0 of a new CA) with limits,
// and returns its address and a dialer of new connections presenting id's
// certificate (none for a zero id), each closed with the test.
func tlsServer(t *testing.T, limits Limits, log hclog.Logger, counter RefusalCounter) (addr string, dial func(id pki.Identity) *grpc.ClientConn) {
	t.Helper()
	return tlsServerWith(t, Options{Status: fine{}, Limits: limits, Log: log, Refusals: counter, Grace: 100 * time.Millisecond})
}

// tlsServerWith is tlsServer with the given options, their Credentials
// set to instance x-0's.
func tlsServerWith(t *testing.T, o Options) (addr string, dial func(id pki.Identity) *grpc.ClientConn) {
	t.Helper()
	ca, err := pki.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	creds, err := ca.Credentials(pki.Identity{Kind: pki.Instance, Name: "x-0"})
	if err != nil {
		t.Fatal(err)
	}
	o.Credentials = creds
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	t.Cleanup(func() { cancel(); <-served })
	dial = func(id pki.Identity) *grpc.ClientConn {
		t.Helper()
		cfg := &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true}
		if id.Name != "" {
			c, err := ca.Credentials(id)
			if err != nil {
				t.Fatal(err)
			}
			cfg = c.ClientTLS("x-0")
		}
		conn, err := NewClient(l.Addr().String(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	return l.Addr().String(), dial
}

var (
	master = pki.Identity{Kind: pki.Master, Name: "master-1"}
	alice  = pki.Identity{Kind: pki.Client, Name: "alice"}
	nobody = pki.Identity{}
)

// watch opens a Health/Watch on conn and waits for its first answer.
func watch(ctx context.Context, conn *grpc.ClientConn) error {
	w, err := healthpb.NewHealthClient(conn).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return err
	}
	_, err = w.Recv()
	return err
}

// TestStreamsPerAddress: callers without a certificate hold at most
// MaxStreamsPerAddr calls from one address, the next is ResourceExhausted
// naming the flag, counted and logged once; a client's calls and a
// master's are counted apart (the master's not at all), and a call that
// ends gives its place back.
func TestStreamsPerAddress(t *testing.T) {
	var out testkit.SyncBuffer
	c := &counted{}
	_, dial := tlsServer(t, Limits{MaxStreamsPerAddr: 3}, hclog.New(&hclog.LoggerOptions{Output: &out}), c)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	held, cancelHeld := context.WithCancel(ctx)
	anon := []*grpc.ClientConn{dial(nobody), dial(nobody)}
	for i := 0; i < 3; i++ {
		if err := watch(held, anon[i%2]); err != nil {
			t.Fatalf("watch %d: %v", i, err)
		}
	}
	for i := 0; i < 20; i++ {
		err := watch(ctx, anon[i%2])
		if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-streams-per-addr") {
			t.Fatalf("watch past the cap: %v, want ResourceExhausted naming --max-streams-per-addr", err)
		}
	}
	if _, err := healthpb.NewHealthClient(anon[0]).Check(ctx, &healthpb.HealthCheckRequest{}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a unary health check past the cap: %v, want ResourceExhausted", err)
	}
	// Others are counted apart.
	m := dial(master)
	for i := 0; i < 10; i++ {
		if err := watch(ctx, m); err != nil {
			t.Fatalf("a master's watch %d: %v", i, err)
		}
	}
	if _, err := wololov1.NewStatusClient(m).Get(ctx, &wololov1.GetRequest{}); err != nil {
		t.Fatalf("a master's Status during the flood: %v", err)
	}
	a := dial(alice)
	for i := 0; i < 3; i++ {
		if err := watch(ctx, a); err != nil {
			t.Fatalf("a client's watch %d: %v", i, err)
		}
	}
	if err := watch(ctx, a); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("the client's 4th watch: %v, want ResourceExhausted", err)
	}
	if n := c.call("internal ResourceExhausted /grpc.health.v1.Health/Watch"); n != 21 {
		t.Errorf("counted %d refused watches, want 21: 20 anonymous, 1 alice's (%v)", n, c.calls)
	}
	// Ended calls give their places back.
	cancelHeld()
	testkit.WaitForNil(t, "a place back after the held watches ended", 5*time.Second, func() error { return watch(ctx, anon[0]) })
	if n := strings.Count(out.String(), "call refused"); n != 3 {
		t.Errorf("%d lines logged in full, want 3: the first of each caller and method (anonymous Watch and Check, alice's Watch)\n%s", n, out.String())
	}
}

// TestConnectionsPerAddress: connections without a certificate from one
// address past MaxConnsPerAddr are closed after their handshake; a
// master's are not counted and keep working, also ones opened while the
// cap is full; raw connections that never handshake are closed oldest
// first instead of shutting new ones out.
func TestConnectionsPerAddress(t *testing.T) {
	c := &counted{}
	addr, dial := tlsServer(t, Limits{MaxConnsPerAddr: 2}, nil, c)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	check := func(conn *grpc.ClientConn) error {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := healthpb.NewHealthClient(conn).Check(cctx, &healthpb.HealthCheckRequest{})
		return err
	}
	var open []*grpc.ClientConn
	for i := 0; i < 2; i++ {
		conn := dial(nobody)
		if err := check(conn); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		open = append(open, conn)
	}
	// Closed at once: a refused client connection tries again in the
	// background, and would take a place given back before the test's.
	for i := 0; i < 3; i++ {
		conn := dial(nobody)
		if err := check(conn); status.Code(err) != codes.Unavailable {
			t.Fatalf("connection past the cap: %v, want it closed (Unavailable)", err)
		}
		conn.Close()
	}
	// Raw connections that never handshake, many more than the cap.
	for i := 0; i < 20; i++ {
		raw, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
	}
	if !testkit.Await(5*time.Second, func() bool { return c.conn("internal "+reasonEvicted) >= 18 }) {
		t.Fatalf("counted %d pending connections evicted, want at least 18 (%v)", c.conn("internal "+reasonEvicted), c.conns)
	}
	for i := 0; i < 3; i++ {
		m := dial(master)
		if err := check(m); err != nil {
			t.Fatalf("a new master connection %d while the cap is full: %v", i, err)
		}
		if _, err := wololov1.NewStatusClient(m).Get(ctx, &wololov1.GetRequest{}); err != nil {
			t.Fatalf("a master's Status: %v", err)
		}
	}
	for _, conn := range open {
		if err := check(conn); err != nil {
			t.Fatalf("a connection within the cap after the flood: %v", err)
		}
	}
	if n := c.conn("internal " + reasonTooMany); n < 3 {
		t.Errorf("counted %d connections refused past the cap, want at least 3 (%v)", n, c.conns)
	}
	// A closed connection gives its place back.
	open[0].Close()
	testkit.WaitForNil(t, "a place back after a connection closed", 5*time.Second, func() error {
		conn := dial(nobody)
		err := check(conn)
		if err != nil {
			conn.Close()
		}
		return err
	})
}

// TestFirstFrameDeadline: a stream whose first message does not come
// within FirstFrame ends with DeadlineExceeded naming the flag, counted;
// one that sends it in time is served.
func TestFirstFrameDeadline(t *testing.T) {
	c := &counted{}
	_, dial := tlsServer(t, Limits{FirstFrame: 300 * time.Millisecond}, nil, c)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn := dial(nobody)
	desc := &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}
	start := time.Now()
	s, err := conn.NewStream(ctx, desc, "/grpc.health.v1.Health/Watch")
	if err != nil {
		t.Fatal(err)
	}
	err = s.RecvMsg(new(healthpb.HealthCheckResponse))
	if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "--first-frame-timeout") {
		t.Fatalf("a watch without its request: %v, want DeadlineExceeded naming --first-frame-timeout", err)
	}
	if took := time.Since(start); took < 300*time.Millisecond || took > 5*time.Second {
		t.Fatalf("ended after %s, want about 300ms", took)
	}
	if err := watch(ctx, conn); err != nil {
		t.Fatalf("a watch with its request: %v", err)
	}
	if n := c.call("internal DeadlineExceeded /grpc.health.v1.Health/Watch"); n != 1 {
		t.Errorf("counted %d, want 1 (%v)", n, c.calls)
	}
}

// TestRefusalsAreSummarised: 5,000 calls refused for want of a
// certificate cost the log one line in full and one summary with their
// count, and are all counted.
func TestRefusalsAreSummarised(t *testing.T) {
	var out testkit.SyncBuffer
	c := &counted{}
	r := newRefusals(Internal, hclog.New(&hclog.LoggerOptions{Output: &out}), c)
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	armed := 0
	r.after = func(d time.Duration, _ func()) {
		if d != RefusalLogPeriod {
			t.Errorf("flush armed after %s, want %s", d, RefusalLogPeriod)
		}
		armed++
	}
	err := status.Error(codes.Unauthenticated, "/wololo.v1.Status/Get needs a certificate of the deployment's CA")
	for i := 0; i < 5000; i++ {
		r.call("/wololo.v1.Status/Get", caller{addr: "127.0.0.1"}, err)
	}
	if armed != 1 {
		t.Fatalf("flush armed %d times, want once per window", armed)
	}
	now = now.Add(RefusalLogPeriod)
	r.flush()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "call refused") || !strings.Contains(lines[1], "not-logged=4999") || !strings.Contains(lines[1], "refused=5000") {
		t.Fatalf("log:\n%s\nwant one refusal line and one summary of 4999 more", out.String())
	}
	if n := c.call("internal Unauthenticated /wololo.v1.Status/Get"); n != 5000 {
		t.Fatalf("counted %d, want 5000", n)
	}
}
