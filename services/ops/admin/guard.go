package admin

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/wololo/wololo/services/wire/pki"
)

// Guard is who may call an admin listener and by which names.
type Guard struct {
	// Operator checks that a token is the operator's (nil error). Nil
	// when the process runs --insecure: there is no credential to check,
	// and every caller is served as the operator.
	Operator func(token string) error
	// Hosts are the host names and addresses a Host header may carry
	// besides loopback ones (GuardFor: this machine's names, the
	// process's own, the host --admin named).
	Hosts []string
	// LocalIP reports whether an address in a Host header is one of this
	// machine's (GuardFor: its interfaces' addresses); nil: none is.
	LocalIP func(net.IP) bool
}

// GuardFor is the guard of a process with credentials creds (nil with
// --insecure) serving on l (from Listen), known also by names (its
// instance name, which compose makes its host name).
func GuardFor(creds *pki.Credentials, l net.Listener, names ...string) Guard {
	g := Guard{Hosts: names, LocalIP: interfaceIP}
	if creds != nil {
		g.Operator = func(token string) error {
			id, err := creds.CheckToken(token)
			if err != nil {
				return err
			}
			if id.Kind != pki.Operator {
				return fmt.Errorf("the token is %s's, not an operator's", id)
			}
			return nil
		}
	}
	if h, err := os.Hostname(); err == nil {
		short, _, _ := strings.Cut(h, ".")
		g.Hosts = append(g.Hosts, h, short)
	}
	if bl, ok := l.(interface{ bindHost() string }); ok && bl.bindHost() != "" {
		g.Hosts = append(g.Hosts, bl.bindHost())
	}
	return g
}

// interfaceIP: ip is an address of one of this machine's interfaces.
func interfaceIP(ip net.IP) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// Policy is the Content-Security-Policy of every response but the page's
// (services/ops/dashboard has its own): nothing may be loaded, framed, based
// or posted.
const Policy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// Handler serves h behind g: the Host check and the security headers on
// every request, the operator's credential for the page and /api/cluster,
// and /metrics with or without the tenant labels (see the package doc).
func Handler(h Handlers, g Guard) http.Handler {
	mux := http.NewServeMux()
	if h.Metrics != nil {
		public := h.PublicMetrics
		if public == nil {
			public = http.NotFoundHandler()
		}
		mux.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch g.operator(r, false) {
			case operator:
				h.Metrics.ServeHTTP(w, r)
			case anonymous:
				public.ServeHTTP(w, r)
			default:
				refuse(w, http.StatusForbidden, "admin: the credential is not the operator's token (operator.token of this deployment's `wololo certs`)")
			}
		}))
	}
	if h.Dashboard != nil {
		mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch g.operator(r, r.URL.Path == "/") {
			case operator:
				h.Dashboard.ServeHTTP(w, r)
			case anonymous:
				w.Header().Add("WWW-Authenticate", `Basic realm="wololo operator", charset="UTF-8"`)
				w.Header().Add("WWW-Authenticate", `Bearer realm="wololo operator"`)
				refuse(w, http.StatusUnauthorized, "admin: the operator's only: send operator.token (of `wololo certs`) as Authorization: Bearer TOKEN, as the Basic password, or open /?token=TOKEN")
			default:
				refuse(w, http.StatusForbidden, "admin: the credential is not the operator's token (operator.token of this deployment's `wololo certs`)")
			}
		}))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Content-Security-Policy", Policy)
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		if !g.hostAllowed(r.Host) {
			refuse(w, http.StatusMisdirectedRequest, fmt.Sprintf("admin: Host %q is not a name of this listener (loopback, this machine's names and addresses, or --admin's host)", r.Host))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, code int, msg string) {
	http.Error(w, msg, code)
}

// A caller as the guard sees it.
type caller int

const (
	anonymous caller = iota // presents no credential
	operator                // the operator's token (or anyone, with --insecure)
	refused                 // presents a credential that is not the operator's
)

// operator says who r's caller is; page: the query's token counts too.
func (g Guard) operator(r *http.Request, page bool) caller {
	if g.Operator == nil {
		return operator
	}
	token, ok, err := credential(r, page)
	switch {
	case err != nil:
		return refused
	case !ok:
		return anonymous
	case g.Operator(token) != nil:
		return refused
	}
	return operator
}

var errMalformed = errors.New("malformed Authorization header")

// credential is the token r presents, if any: Authorization: Bearer
// TOKEN, or Basic with TOKEN as the password (any user name: a browser's
// own prompt), or, if page, ?token=TOKEN.
func credential(r *http.Request, page bool) (string, bool, error) {
	if auth := r.Header.Get("Authorization"); auth != "" {
		scheme, rest, _ := strings.Cut(auth, " ")
		switch strings.ToLower(scheme) {
		case "bearer":
			return strings.TrimSpace(rest), true, nil
		case "basic":
			b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
			if err != nil {
				return "", false, errMalformed
			}
			_, password, ok := strings.Cut(string(b), ":")
			if !ok {
				return "", false, errMalformed
			}
			return password, true, nil
		}
		return "", false, errMalformed
	}
	if page && r.URL.Query().Has("token") {
		return r.URL.Query().Get("token"), true, nil
	}
	return "", false, nil
}

// hostAllowed: a request's Host names this listener (see Guard.Hosts).
func (g Guard) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() {
			return true
		}
		if slices.ContainsFunc(g.Hosts, func(h string) bool { return ip.Equal(net.ParseIP(strings.Trim(h, "[]"))) }) {
			return true
		}
		return !ip.IsUnspecified() && g.LocalIP != nil && g.LocalIP(ip)
	}
	return slices.ContainsFunc(g.Hosts, func(h string) bool { return strings.EqualFold(strings.TrimSuffix(h, "."), host) })
}
