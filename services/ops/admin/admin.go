// Package admin serves a process's admin HTTP listener: /metrics (the
// Prometheus text format) on every process and, on the gateway, the web
// page of the whole deployment (services/ops/dashboard) at / with its data at
// /api/cluster. It serves nothing that changes state, but what it shows is
// the operator's: /api/cluster lists every client's names, jobs and ids,
// which Cluster/Get gives only to the operator certificate, and /metrics
// labels series with job ids. So, on every request (guard.go):
//
//   - The listener binds to loopback unless told otherwise (--admin
//     ADDR): a deployment that publishes it or lets a Prometheus scrape it
//     says so (tools/compose passes 0.0.0.0 to its containers).
//   - The Host header must be a loopback name or address, one of this
//     machine's host names or addresses, the process's own name, or the
//     host --admin named; anything else is 421 Misdirected Request. A web
//     page that rebinds its own DNS name to 127.0.0.1 (DNS rebinding) is
//     the same origin as the page to the browser, but its requests carry
//     its name, never one of these.
//   - The page and /api/cluster are the operator's only: 401 without a
//     credential, 403 with one that is not the operator's. /metrics answers
//     everyone, but only the operator gets the job and client labels;
//     everyone else gets the same series summed over them
//     (services/ops/metrics.PublicHandler), and a wrong credential is 403 so
//     that a misconfigured scraper notices.
//   - Every response carries X-Content-Type-Options: nosniff,
//     X-Frame-Options: DENY, Referrer-Policy: no-referrer, Cache-Control:
//     no-store and a Content-Security-Policy that allows nothing
//     (default-src 'none'); the page replaces it with its own, as strict
//     but for its one inline script and style, allowed by hash
//     (services/ops/dashboard).
//
// The operator's credential is a bearer token, operator.token, that
// `wololo certs` writes beside operator.pem (0600), signed by the
// deployment's CA so that every process checks it with the CA certificate
// it holds anyway and none holds anything that would let it present it
// (services/wire/pki). It is presented as "Authorization: Bearer TOKEN", as the
// password of HTTP Basic authentication (any user name), or, for the page
// only, as ?token=TOKEN in the address a browser opens (the page then sends
// it as a header). A token rather than mutual TLS with the operator's
// certificate, because of who calls:
//
//   - a browser opening the page would need the operator's key imported as
//     a PKCS#12 file and the deployment's CA trusted (or a warning clicked
//     away) for an HTTPS listener; a token is pasted into Basic
//     authentication's prompt or opened as the address `wololo local`
//     prints;
//   - Prometheus reads a token from a file (authorization:
//     credentials_file) as easily as a certificate, and curl takes either;
//   - `wololo top` and grpcurl users read Cluster/Get over gRPC with the
//     operator certificate and never come here;
//   - the listener stays plain HTTP, so that nothing about the scrapers'
//     and health tools' transport changes and the token is the only new
//     thing.
//
// Plain HTTP means the token crosses the network in the clear where the
// listener is reached over one (inside compose's project network); on
// loopback, the default, it does not leave the machine. A process run with
// --insecure has no CA and so no token: it serves everything to everyone
// (still on loopback by default, still checking Host), as its gRPC ports
// check no identity either.
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
	Metrics       http.Handler // at /metrics, for the operator: every label
	PublicMetrics http.Handler // at /metrics, for anyone else: no job or client labels
	Dashboard     http.Handler // at / (the page and /api/cluster), the operator's only; the gateway's
}

// DefaultHost is where an admin listener binds unless --admin says
// otherwise: loopback only.
const DefaultHost = "127.0.0.1"

// Listen opens a process's admin listener from its --admin flag: "none"
// for none (nil, nil), "" for DefaultHost on defaultPort (the topology's
// admin port of the process), else the address given. The listener
// remembers the host it was given, which Host headers may then name
// (GuardFor).
func Listen(flag string, defaultPort int) (net.Listener, error) {
	if flag == "none" {
		return nil, nil
	}
	addr := flag
	if addr == "" {
		addr = net.JoinHostPort(DefaultHost, strconv.Itoa(defaultPort))
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("admin listener on %q: %w", addr, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin listener on %s: %w", addr, err)
	}
	return boundListener{Listener: l, host: host}, nil
}

// boundListener is a listener and the host its address was given with (a
// name stays a name).
type boundListener struct {
	net.Listener
	host string
}

func (l boundListener) bindHost() string { return l.host }

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
