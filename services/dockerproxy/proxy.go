package dockerproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Proxy serves the filtered engine API on one Unix socket, forwarding to
// the engine's.
type Proxy struct {
	project  string
	upstream *http.Client // to the engine's socket
	forward  *httputil.ReverseProxy
	log      hclog.Logger
}

// New returns a proxy for project in front of the engine at upstream
// ("unix:///var/run/docker.sock" or a plain socket path).
func New(upstream, project string, log hclog.Logger) (*Proxy, error) {
	path := strings.TrimPrefix(upstream, "unix://")
	if path == "" || strings.Contains(path, "://") {
		return nil, fmt.Errorf("docker proxy: upstream %q: want unix:///path/to/docker.sock", upstream)
	}
	if project == "" {
		return nil, errors.New("docker proxy: a project is required")
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	transport := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}
	target := &url.URL{Scheme: "http", Host: "docker"}
	p := &Proxy{
		project: project, log: log,
		upstream: &http.Client{Transport: transport, Timeout: 30 * time.Second},
		forward: &httputil.ReverseProxy{
			Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = "docker" },
			Transport: transport,
		},
	}
	return p, nil
}

// ServeHTTP judges a request and forwards it or refuses it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.EscapedPath()
	v := Decide(r.Method, raw, r.URL.Query(), p.project)
	if v.Allow && v.Container != "" {
		labels, err := p.labels(r.Context(), v.Container)
		switch {
		case err != nil:
			v = refuse(fmt.Sprintf("container %s: %v", v.Container, err))
		case !Labelled(labels, p.project):
			v = refuse(fmt.Sprintf("container %s is not one of project %s's", v.Container, p.project))
		}
	}
	if !v.Allow {
		p.log.Warn("refused", "method", r.Method, "path", raw, "reason", v.Reason)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": "wololo docker-proxy: refused: " + v.Reason})
		return
	}
	p.forward.ServeHTTP(w, r)
}

// labels asks the engine for a container's labels.
func (p *Proxy) labels(ctx context.Context, container string) (map[string]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/containers/"+url.PathEscape(container)+"/json", nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.upstream.Do(req)
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("inspect: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	var c struct {
		Config struct{ Labels map[string]string }
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&c); err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	return c.Config.Labels, nil
}

// Listen makes the Unix socket at path (removing a stale one) with the
// given mode and, unless uid and gid are -1, owner.
func Listen(path string, mode os.FileMode, uid, gid int) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, mode); err != nil {
		l.Close()
		return nil, err
	}
	if uid != -1 || gid != -1 {
		if err := os.Chown(path, uid, gid); err != nil {
			l.Close()
			return nil, fmt.Errorf("chown socket: %w", err)
		}
	}
	return l, nil
}

// Serve serves l until ctx ends.
func (p *Proxy) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(stop)
	<-served
	return nil
}
