package admin

import (
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/services/wire/pki"
)

func text(s string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, s) })
}

// TestGuard: every refusal and every grant of an admin listener, with the
// headers every response carries. The handlers stand for the real ones:
// "all-labels" for the operator's /metrics, "summed" for everyone else's,
// "page" for the dashboard (its page and /api/cluster).
func TestGuard(t *testing.T) {
	ca, _ := pki.NewCA("mine")
	other, _ := pki.NewCA("theirs")
	gateway, _ := ca.Credentials(pki.Identity{Kind: pki.Instance, Name: "gateway-0"})
	op := pki.Identity{Kind: pki.Operator, Name: "operator"}
	token, _ := ca.Token(op, time.Hour)
	theirs, _ := other.Token(op, time.Hour)
	clients, _ := ca.Token(pki.Identity{Kind: pki.Client, Name: "alice"}, time.Hour)
	expired, _ := ca.Token(op, -time.Minute)

	l, err := Listen("127.0.0.1:0", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	g := GuardFor(gateway, l, "gateway-0")
	g.LocalIP = func(ip net.IP) bool { return ip.Equal(net.ParseIP("10.0.0.5")) } // this machine's address, for the test
	h := Handler(Handlers{Metrics: text("all-labels"), PublicMetrics: text("summed"), Dashboard: text("page")}, g)
	insecure := Handler(Handlers{Metrics: text("all-labels"), PublicMetrics: text("summed"), Dashboard: text("page")}, Guard{})
	noPage := Handler(Handlers{Metrics: text("all-labels"), PublicMetrics: text("summed")}, g)

	bearer := func(tok string) string { return "Bearer " + tok }
	basic := func(user, pass string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	cases := []struct {
		name, host, path, auth string
		h                      http.Handler
		code                   int
		body                   string
	}{
		// Who calls.
		{"page without a credential", "127.0.0.1:8101", "/", "", h, 401, "operator's only"},
		{"api without a credential", "127.0.0.1:8101", "/api/cluster", "", h, 401, "operator's only"},
		{"api with the token", "127.0.0.1:8101", "/api/cluster", bearer(token), h, 200, "page"},
		{"page with the token as Basic password", "localhost:8101", "/", basic("anyone", token), h, 200, "page"},
		{"page with the token in its address", "localhost:8101", "/?token=" + token, "", h, 200, "page"},
		{"api with the token in its address", "localhost:8101", "/api/cluster?token=" + token, "", h, 401, "operator's only"},
		{"api with another CA's token", "127.0.0.1:8101", "/api/cluster", bearer(theirs), h, 403, "not the operator's"},
		{"api with a client's token", "127.0.0.1:8101", "/api/cluster", bearer(clients), h, 403, "not the operator's"},
		{"api with an expired token", "127.0.0.1:8101", "/api/cluster", bearer(expired), h, 403, "not the operator's"},
		{"api with a made-up token", "127.0.0.1:8101", "/api/cluster", bearer("secret"), h, 403, "not the operator's"},
		{"api with an unknown scheme", "127.0.0.1:8101", "/api/cluster", "Digest " + token, h, 403, "not the operator's"},
		{"api with Basic that is not base64", "127.0.0.1:8101", "/api/cluster", "Basic !!", h, 403, "not the operator's"},
		{"metrics without a credential", "127.0.0.1:8101", "/metrics", "", h, 200, "summed"},
		{"metrics with the token", "127.0.0.1:8101", "/metrics", bearer(token), h, 200, "all-labels"},
		{"metrics with another CA's token", "127.0.0.1:8101", "/metrics", bearer(theirs), h, 403, "not the operator's"},
		{"metrics with the token in the address", "127.0.0.1:8101", "/metrics?token=" + token, "", h, 200, "summed"},
		{"a process without a page", "127.0.0.1:8101", "/api/cluster", bearer(token), noPage, 404, ""},
		{"--insecure: the page to anyone", "127.0.0.1:8101", "/api/cluster", "", insecure, 200, "page"},
		{"--insecure: every label to anyone", "127.0.0.1:8101", "/metrics", "", insecure, 200, "all-labels"},
		// By which name (DNS rebinding: a page's requests carry its own name).
		{"a foreign name", "attacker.example:8101", "/metrics", "", h, 421, "not a name of this listener"},
		{"a foreign name with the token", "attacker.example:8101", "/api/cluster", bearer(token), h, 421, "not a name"},
		{"a foreign name under --insecure", "rebind.attacker.example", "/api/cluster", "", insecure, 421, "not a name"},
		{"a name ending in localhost", "localhost.attacker.example:8101", "/metrics", "", h, 421, "not a name"},
		{"no Host", "", "/metrics", "", h, 421, "not a name"},
		{"an unspecified address", "0.0.0.0:8101", "/metrics", "", h, 421, "not a name"},
		{"another machine's address", "10.0.0.6:8101", "/metrics", "", h, 421, "not a name"},
		{"localhost with a dot, in capitals", "LOCALHOST.:8101", "/metrics", "", h, 200, "summed"},
		{"IPv6 loopback", "[::1]:8101", "/metrics", "", h, 200, "summed"},
		{"127.0.0.2", "127.0.0.2", "/metrics", "", h, 200, "summed"},
		{"the process's name (compose's host name)", "gateway-0:8101", "/metrics", "", h, 200, "summed"},
		{"this machine's address", "10.0.0.5:8101", "/metrics", "", h, 200, "summed"},
	}
	for _, c := range cases {
		req := httptest.NewRequest("GET", c.path, nil)
		req.Host = c.host
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		rec := httptest.NewRecorder()
		c.h.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != c.code || !strings.Contains(body, c.body) {
			t.Errorf("%s: %d %q, want %d with %q", c.name, rec.Code, body, c.code, c.body)
		}
		if served := body == "page" || body == "all-labels" || body == "summed"; served != (c.code == 200) || (served && body != c.body) {
			t.Errorf("%s: served %q", c.name, body)
		}
		for k, v := range map[string]string{
			"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Content-Security-Policy": Policy,
			"Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
		} {
			if got := rec.Header().Get(k); got != v {
				t.Errorf("%s: %s %q, want %q", c.name, k, got, v)
			}
		}
		if challenged := rec.Header().Get("WWW-Authenticate") != ""; challenged != (c.code == 401) {
			t.Errorf("%s: %d with WWW-Authenticate %q", c.name, rec.Code, rec.Header().Values("WWW-Authenticate"))
		}
	}
}

// TestGuardNamesTheBindHost: a host --admin named may be the Host.
func TestGuardNamesTheBindHost(t *testing.T) {
	l, err := Listen("localhost:0", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if g := GuardFor(nil, l); !g.hostAllowed("localhost:1") || g.Operator != nil {
		t.Fatalf("guard %+v", g)
	}
	l2 := boundListener{Listener: l, host: "wololo.example"}
	if g := GuardFor(nil, l2); !g.hostAllowed("wololo.example:8101") || !g.hostAllowed("WOLOLO.example.") || g.hostAllowed("other.example") {
		t.Fatalf("the bind host: %+v", g)
	}
}

func TestServeRoutesAndStops(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, l, Handler(Handlers{Metrics: text("metrics"), PublicMetrics: text("metrics"), Dashboard: text("page")}, Guard{}))
	}()
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
}

// TestListen: loopback by default, none for "none", and a taken address
// named in the error.
func TestListen(t *testing.T) {
	if l, err := Listen("none", 1); l != nil || err != nil {
		t.Fatalf(`Listen("none") = %v, %v; want no listener`, l, err)
	}
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	l, err := Listen("", port)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if a := l.Addr().(*net.TCPAddr); !a.IP.IsLoopback() || a.Port != port {
		t.Fatalf("the default admin listener is on %s, want 127.0.0.1:%d", a, port)
	}
	if _, err := Listen(l.Addr().String(), 1); err == nil || !strings.Contains(err.Error(), "admin listener on "+l.Addr().String()) {
		t.Fatalf("a taken address: %v, want an error naming it", err)
	}
}
