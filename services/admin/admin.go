// Package admin serves a process's admin HTTP listener: /metrics (the
// Prometheus text format) on every process and, on the gateway, the web
// page of the whole deployment (services/dashboard) at /. The listener is
// internal, like the Status service: plain HTTP, meant for the
// deployment's own network (compose publishes only the gateway's, and on
// 127.0.0.1 only); it serves nothing that changes state.
//
// It serves handlers it is given; it knows nothing of what they show.
package admin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Handlers are what an admin listener serves; nil ones are left out.
type Handlers struct {
	Metrics   http.Handler // at /metrics
	Dashboard http.Handler // at /, the gateway's only
}

// Mux routes the handlers.
func Mux(h Handlers) *http.ServeMux {
	mux := http.NewServeMux()
	if h.Metrics != nil {
		mux.Handle("GET /metrics", h.Metrics)
	}
	if h.Dashboard != nil {
		mux.Handle("/", h.Dashboard)
	}
	return mux
}

// Listen opens a process's admin listener from its --admin flag: "none"
// for none (nil, nil), "" for every interface on defaultPort (the
// topology's admin port of the process), else the address given.
func Listen(flag string, defaultPort int) (net.Listener, error) {
	if flag == "none" {
		return nil, nil
	}
	addr := flag
	if addr == "" {
		addr = net.JoinHostPort("0.0.0.0", strconv.Itoa(defaultPort))
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin listener on %s: %w", addr, err)
	}
	return l, nil
}

// ShutdownGrace is how long a stopping listener lets requests finish.
const ShutdownGrace = 2 * time.Second

// Serve serves h on l until ctx ends (nil) or serving fails; then it lets
// requests in flight finish for ShutdownGrace. Any of wololo's small HTTP
// servers (the docker-proxy's too) serves through it.
func Serve(ctx context.Context, l net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve http on %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve http on %s: %w", l.Addr(), err)
	}
	return nil
}
