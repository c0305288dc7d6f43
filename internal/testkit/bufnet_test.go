package testkit

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// healthServer serves a health service reporting service SERVING; the
// caller serves it on a listener and stops it.
func healthServer(service string) *grpc.Server {
	s := grpc.NewServer()
	h := health.NewServer()
	h.SetServingStatus(service, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, h)
	return s
}

// waitNotReady waits until conn has seen its connection end (it leaves
// READY): an RPC sent before would go on the dying transport and fail
// with Unavailable, which WaitForReady does not retry.
func waitNotReady(t *testing.T, conn *grpc.ClientConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for s := conn.GetState(); s == connectivity.Ready; s = conn.GetState() {
		if !conn.WaitForStateChange(ctx, s) {
			t.Fatal("the client never saw its connection end")
		}
	}
}

func check(conn *grpc.ClientConn, service string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.WaitForReady(true))
	return err
}

func TestBufListenerServesOneServer(t *testing.T) {
	l, dial := BufListener(t)
	s := healthServer("one")
	go s.Serve(l)
	t.Cleanup(s.Stop)
	if err := check(dial(), "one"); err != nil {
		t.Fatal(err)
	}
	if first, second := dial(), dial(); first != second {
		t.Error("dial gave two connections to one listener")
	}
}

// TestBufNetRestartAndCut: a client reaches a server restarted at its
// address through the connection it had, and Cut breaks the streams open
// without stopping new ones.
func TestBufNetRestartAndCut(t *testing.T) {
	n := NewBufNet(t)
	first := healthServer("first")
	go first.Serve(n.Listen("b-0"))
	conn := n.Conn("b-0")
	if err := check(conn, "first"); err != nil {
		t.Fatal(err)
	}
	first.Stop()
	waitNotReady(t, conn)
	second := healthServer("second")
	go second.Serve(n.Listen("b-0"))
	t.Cleanup(second.Stop)
	if err := check(conn, "second"); err != nil {
		t.Fatalf("the restarted server: %v", err)
	}

	watch, err := healthpb.NewHealthClient(conn).Watch(context.Background(), &healthpb.HealthCheckRequest{Service: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watch.Recv(); err != nil {
		t.Fatal(err)
	}
	if cut := n.Cut(); cut != 1 {
		t.Errorf("Cut closed %d connections, want 1", cut)
	}
	if _, err := watch.Recv(); err == nil {
		t.Fatal("a stream outlived the cut")
	}
	waitNotReady(t, conn)
	if err := check(conn, "second"); err != nil {
		t.Fatalf("after the cut: %v", err)
	}
	if n.Cut() != 1 {
		t.Error("the connection made after the cut is not cut")
	}
}
