package e2e

import (
	"context"
	"crypto/tls"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/roles/master"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
)

// TestFloodWithoutCertificates floods the gateway from 127.0.0.1 the way
// the second attack did, on both its ports at once: thousands of
// Health/Watch streams without a certificate, hundreds of TLS connections
// without one and raw connections that never handshake, thousands of
// JobService calls without a certificate, and a client's Uploads that
// never send their first frame. While it lasts, a master's probes (health
// and Status, on its long-lived connection and on new ones) keep being
// answered as the masters need, and a real job runs beside it with its
// four answers byte-equal to the reference. The Watch streams and
// connections held stay within the caps, the Uploads end with
// DeadlineExceeded, and the log grows by a bounded number of lines while
// /metrics counts every refusal.
func TestFloodWithoutCertificates(t *testing.T) {
	out := &testkit.SyncBuffer{}
	log := hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Warn, Output: out})
	const firstFrame = 2 * time.Second
	c := startCluster(t, deploy.Default(), node.ClusterOptions{Log: log, RPCLimits: rpc.Limits{FirstFrame: firstFrame}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ports := map[string]string{"public": c.GatewayAddr(), "internal": c.Addrs["gateway-0"]}
	anonTLS := &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true} // no certificate
	dial := func(addr string, cfg *tls.Config) *grpc.ClientConn {
		t.Helper()
		conn, err := rpc.NewClient(addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	masterCreds, err := c.CA.Credentials(pki.Identity{Kind: pki.Master, Name: "master-1"})
	if err != nil {
		t.Fatal(err)
	}
	masterTLS := masterCreds.ClientTLS("gateway-0")
	malloryTLS, err := c.ClientTLS("mallory")
	if err != nil {
		t.Fatal(err)
	}

	// The master: health and Status of the gateway's internal port every
	// 250 ms with a 500 ms timeout on its long-lived connection (what a
	// master's loop does: silence past 1.75 s gets a process restarted),
	// and every second the same on a new connection.
	masterConn := dial(ports["internal"], masterTLS)
	probe := func(conn *grpc.ClientConn, timeout time.Duration, opts ...grpc.CallOption) error {
		pctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		r, err := healthpb.NewHealthClient(conn).Check(pctx, &healthpb.HealthCheckRequest{}, opts...)
		if err == nil && r.Status != healthpb.HealthCheckResponse_SERVING {
			return status.Errorf(codes.Unavailable, "health %s", r.Status)
		}
		if err == nil {
			_, err = wololov1.NewStatusClient(conn).Get(pctx, &wololov1.GetRequest{}, opts...)
		}
		return err
	}
	if err := probe(masterConn, 10*time.Second, grpc.WaitForReady(true)); err != nil {
		t.Fatal(err)
	}
	floodCtx, stopFlood := context.WithCancel(ctx)
	floodStart := time.Now()
	var probes sync.WaitGroup
	var probed atomic.Int64 // the master's probes on its connection so far
	var maxGap time.Duration
	var probeErrs []error
	probes.Add(1)
	go func() {
		defer probes.Done()
		last := time.Now()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-floodCtx.Done():
				return
			case <-tick.C:
			}
			err := probe(masterConn, 500*time.Millisecond)
			probed.Add(1)
			if err == nil {
				last = time.Now()
			} else {
				t.Logf("a master's probe failed %s into the flood: %v", time.Since(floodStart).Round(time.Millisecond), err)
			}
			maxGap = max(maxGap, time.Since(last))
			if n%4 == 0 {
				conn, err := rpc.NewClient(ports["internal"], masterTLS)
				if err == nil {
					err = probe(conn, 2*time.Second, grpc.WaitForReady(true))
					conn.Close()
				}
				if err != nil {
					probeErrs = append(probeErrs, err)
				}
			}
		}
	}()

	// The flood's own connections for streams and calls are up before the
	// connection flood takes the rest of the places.
	ready := func(conn *grpc.ClientConn) *grpc.ClientConn {
		t.Helper()
		if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true)); err != nil {
			t.Fatal(err)
		}
		return conn
	}
	watchConns := map[string][]*grpc.ClientConn{}
	for port, addr := range ports {
		for i := 0; i < 8; i++ {
			watchConns[port] = append(watchConns[port], ready(dial(addr, anonTLS)))
		}
	}
	var callConns []*grpc.ClientConn
	for i := 0; i < 16; i++ {
		callConns = append(callConns, ready(dial(ports["public"], anonTLS)))
	}
	mallory := ready(dial(ports["public"], malloryTLS))

	logStart, _ := out.Since(0)
	floodStart = time.Now()
	var flood sync.WaitGroup
	var watchesHeld, watchesRefused, callsRefused, connsUp atomic.Int64
	var unexpected sync.Map // what the flood got that it should not have
	for port, addr := range ports {
		// Health/Watch streams: 8 connections x 400 streams, each opened
		// once the one before it was answered, and held.
		for _, conn := range watchConns[port] {
			flood.Add(1)
			go func() {
				defer flood.Done()
				for j := 0; j < 400; j++ {
					w, err := healthpb.NewHealthClient(conn).Watch(floodCtx, &healthpb.HealthCheckRequest{})
					if err == nil {
						_, err = w.Recv() // held open until the flood ends
					}
					switch {
					case err == nil:
						watchesHeld.Add(1)
					case status.Code(err) == codes.ResourceExhausted && strings.Contains(err.Error(), "--max-streams-per-addr"):
						watchesRefused.Add(1)
					case floodCtx.Err() == nil:
						unexpected.Store(port+" watch: "+status.Code(err).String(), err)
					}
				}
			}()
		}
		// TLS connections without a certificate, held if they get up (a
		// refused one is closed: gRPC would dial it again and again).
		for i := 0; i < 150; i++ {
			flood.Add(1)
			go func() {
				defer flood.Done()
				conn, err := rpc.NewClient(addr, anonTLS)
				if err != nil {
					return
				}
				defer conn.Close()
				pctx, cancel := context.WithTimeout(floodCtx, 5*time.Second)
				_, err = healthpb.NewHealthClient(conn).Check(pctx, &healthpb.HealthCheckRequest{})
				cancel()
				if status.Code(err) == codes.Unavailable {
					return
				}
				connsUp.Add(1) // served, or refused a call: connected
				<-floodCtx.Done()
			}()
		}
		// Raw connections that never handshake, 20 every 100 ms.
		flood.Add(1)
		go func() {
			defer flood.Done()
			var raws []net.Conn
			defer func() {
				for _, r := range raws {
					r.Close()
				}
			}()
			for floodCtx.Err() == nil {
				for i := 0; i < 20; i++ {
					if r, err := net.Dial("tcp", addr); err == nil {
						raws = append(raws, r)
					}
				}
				select {
				case <-floodCtx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	// JobService calls without a certificate: 6,000, 16 at a time.
	var callers sync.WaitGroup
	for _, conn := range callConns {
		flood.Add(1)
		callers.Add(1)
		go func() {
			defer flood.Done()
			defer callers.Done()
			for j := 0; j < 375 && floodCtx.Err() == nil; j++ {
				_, err := wololov1.NewJobServiceClient(conn).GetJob(floodCtx, &wololov1.GetJobRequest{JobId: "nightly"})
				switch status.Code(err) {
				case codes.Unauthenticated, codes.ResourceExhausted:
					callsRefused.Add(1)
				default:
					if floodCtx.Err() == nil {
						unexpected.Store("GetJob: "+status.Code(err).String(), err)
					}
				}
			}
		}()
	}
	// A client's Uploads that never send their first frame.
	uploadsEnded := make(chan time.Duration, 20)
	for i := 0; i < 20; i++ {
		go func() {
			start := time.Now()
			u, err := wololov1.NewJobServiceClient(mallory).Upload(floodCtx)
			if err == nil {
				_, err = u.Recv()
			}
			if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "--first-frame-timeout") {
				unexpected.Store("silent upload: "+status.Code(err).String(), err)
			}
			uploadsEnded <- time.Since(start)
		}()
	}

	// The real job, beside it all, once the flood has reached the caps.
	testkit.WaitFor(t, "the flood to reach the caps (a watch and a call refused)", time.Minute, func() bool {
		return watchesRefused.Load() > 0 && callsRefused.Load() > 0
	})
	submit(t, c, testDatasets(t)[0])
	for i := 0; i < 20; i++ {
		select {
		case took := <-uploadsEnded:
			if took > firstFrame+5*time.Second {
				t.Errorf("a silent upload ended after %s, want about %s", took, firstFrame)
			}
		case <-ctx.Done():
			t.Fatal("silent uploads still held")
		}
	}
	callsAnswered := make(chan struct{})
	go func() { callers.Wait(); close(callsAnswered) }()
	select {
	case <-callsAnswered:
	case <-time.After(time.Minute):
		t.Logf("%d calls of the flood refused, not all answered after a minute", callsRefused.Load())
	}
	// A few more master probes while it all is held.
	from := probed.Load()
	testkit.WaitFor(t, "four more probes of the master's", time.Minute, func() bool { return probed.Load() >= from+4 })
	held := watchesHeld.Load()
	stopFlood()
	flood.Wait()
	probes.Wait()
	floodTime := time.Since(floodStart)

	unexpected.Range(func(k, v any) bool {
		t.Errorf("%s: %v", k, v)
		return true
	})
	t.Logf("flood of %s: %d watches held, %d refused; %d calls refused; %d of 300 connections without a certificate up",
		floodTime.Round(time.Millisecond), held, watchesRefused.Load(), callsRefused.Load(), connsUp.Load())
	if held > 2*rpc.DefaultMaxStreamsPerAddr {
		t.Errorf("%d watches held on the two ports, want at most %d each (--max-streams-per-addr)", held, rpc.DefaultMaxStreamsPerAddr)
	}
	if watchesRefused.Load() < 5000 {
		t.Errorf("only %d watches refused; the flood did not reach the cap", watchesRefused.Load())
	}
	// 8 of the watch connections per port were up before, and count too.
	if up := connsUp.Load(); up > 2*rpc.DefaultMaxConnsPerAddr {
		t.Errorf("%d connections without a certificate up on the two ports, want at most %d each (--max-conns-per-addr)", up, rpc.DefaultMaxConnsPerAddr)
	}
	if silent := master.DefaultDetection - master.DefaultEvery; maxGap > silent {
		t.Errorf("the master's probes went unanswered for %s; past %s it restarts the gateway", maxGap, silent)
	}
	for _, err := range probeErrs {
		t.Errorf("a master's probe on a new connection: %v", err)
	}

	// The log: at most refusalLogLines lines in full and a summary per
	// server (two: the gateway's ports) and 10 s window, and a few lines
	// of the job's own; the summaries, which come at the end of their
	// windows, count the refusals.
	summary := regexp.MustCompile(`refusals not logged one by one: .*refused=(\d+)`)
	summarisedIn := func(lines string) int {
		n := 0
		for _, m := range summary.FindAllStringSubmatch(lines, -1) {
			k, _ := strconv.Atoi(m[1])
			n += k
		}
		return n
	}
	out.Await(2*rpc.RefusalLogPeriod+5*time.Second, func(written string) bool { return summarisedIn(written[len(logStart):]) >= 10000 })
	lines, _ := out.Since(len(logStart))
	summarised := summarisedIn(lines)
	if summarised < 10000 {
		t.Errorf("the log's summaries count %d refusals, want the flood's (at least 10,000)", summarised)
	}
	n := strings.Count(lines, "\n")
	windows := int(time.Since(floodStart)/rpc.RefusalLogPeriod) + 2
	if bound := 2*windows*11 + 10; n > bound {
		t.Errorf("the log grew by %d lines (%d bytes) during the flood, want at most %d:\n%.3000s", n, len(lines), bound, lines)
	}
	t.Logf("the log grew by %d lines, %d bytes:\n%.6000s", n, len(lines), lines)
	// /metrics counts every refusal.
	reg := prometheus.NewRegistry()
	reg.MustRegister(c.Nodes["gateway-0"].Refusals().Collectors()...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += " " + l.GetName() + "=" + l.GetValue()
			}
			counts[key] += m.GetCounter().GetValue()
		}
	}
	t.Logf("refusals counted: %v", counts)
	calls := counts["wololo_rpc_refused_calls_total code=ResourceExhausted method=/grpc.health.v1.Health/Watch plane=public"] +
		counts["wololo_rpc_refused_calls_total code=ResourceExhausted method=/grpc.health.v1.Health/Watch plane=internal"]
	if calls != float64(watchesRefused.Load()) {
		t.Errorf("counted %v refused watches, the flood saw %d", calls, watchesRefused.Load())
	}
	if n := counts["wololo_rpc_refused_calls_total code=DeadlineExceeded method=/wololo.v1.JobService/Upload plane=public"]; n != 20 {
		t.Errorf("counted %v uploads without a first frame, want 20", n)
	}
	if n := counts["wololo_rpc_refused_connections_total plane=public reason=too-many-connections"]; n == 0 {
		t.Error("no connection counted refused past the cap")
	}
}
