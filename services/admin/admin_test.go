package admin

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestServeRoutesAndStops(t *testing.T) {
	text := func(s string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, s) })
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, l, Mux(Handlers{Metrics: text("metrics"), Dashboard: text("page")})) }()
	for path, want := range map[string]string{"/metrics": "metrics", "/": "page", "/api/cluster": "page"} {
		resp, err := http.Get("http://" + l.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != want {
			t.Errorf("%s: %q, want %q", path, b, want)
		}
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after its context ended: %v", err)
		}
	case <-time.After(ShutdownGrace + time.Second):
		t.Fatal("Serve did not return after its context ended")
	}

	// Without a dashboard, only /metrics is served.
	mux := Mux(Handlers{Metrics: text("metrics")})
	if _, pattern := mux.Handler(&http.Request{Method: "GET", URL: mustURL(t, "/")}); pattern != "" {
		t.Errorf("/ is routed to %q on a process without a dashboard", pattern)
	}
}

func mustURL(t *testing.T, path string) *url.URL {
	t.Helper()
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestListen(t *testing.T) {
	if l, err := Listen("none", 1); l != nil || err != nil {
		t.Fatalf(`Listen("none") = %v, %v; want no listener`, l, err)
	}
	l, err := Listen("127.0.0.1:0", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := Listen(l.Addr().String(), 1); err == nil || !strings.Contains(err.Error(), "admin listener on "+l.Addr().String()) {
		t.Fatalf("a taken address: %v, want an error naming it", err)
	}
}
