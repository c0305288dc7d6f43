package dockerproxy

import (
	"bytes"
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

	"github.com/docker/docker/api/types/versions"
	"github.com/hashicorp/go-hclog"
	"github.com/wololo/wololo/services/ops/admin"
)

// Proxy serves the filtered engine API on one Unix socket, forwarding to
// the engine's.
type Proxy struct {
	policy   Policy
	upstream *http.Client // to the engine's socket
	forward  *httputil.ReverseProxy
	log      hclog.Logger
}

// New returns a proxy admitting what policy admits, in front of the engine
// at upstream ("unix:///var/run/docker.sock" or a plain socket path).
func New(upstream string, policy Policy, log hclog.Logger) (*Proxy, error) {
	path := strings.TrimPrefix(upstream, "unix://")
	if path == "" || strings.Contains(path, "://") {
		return nil, fmt.Errorf("docker proxy: upstream %q: want unix:///path/to/docker.sock", upstream)
	}
	if policy.Project == "" {
		return nil, errors.New("docker proxy: a project is required")
	}
	if !apiVersionForm.MatchString(policy.APIVersion) {
		return nil, fmt.Errorf("docker proxy: API version %q: want MAJOR.MINOR, such as 1.41", policy.APIVersion)
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
		policy: policy, log: log,
		upstream: &http.Client{Transport: transport, Timeout: 30 * time.Second},
		forward: &httputil.ReverseProxy{
			Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = "docker" },
			Transport: transport,
		},
	}
	return p, nil
}

// CheckEngine asks the engine which API versions it speaks and fails,
// naming --api-version, if the policy's is not among them: the masters
// would be refused every call.
func (p *Proxy) CheckEngine(ctx context.Context) error {
	var v struct{ APIVersion, MinAPIVersion string }
	if err := p.get(ctx, "/version", &v); err != nil {
		return fmt.Errorf("docker proxy: the engine's version: %w", err)
	}
	if v.APIVersion == "" || v.MinAPIVersion == "" {
		return fmt.Errorf("docker proxy: the engine names no API versions (%+v)", v)
	}
	if versions.LessThan(p.policy.APIVersion, v.MinAPIVersion) || versions.GreaterThan(p.policy.APIVersion, v.APIVersion) {
		return fmt.Errorf("docker proxy: the engine speaks API versions %s to %s, not %s, the masters' (--api-version and the masters' --docker-api-version: both must name one it speaks)", v.MinAPIVersion, v.APIVersion, p.policy.APIVersion)
	}
	return nil
}

// ServeHTTP judges a request and forwards it or refuses it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.EscapedPath()
	v := p.policy.Decide(Request{
		Method: r.Method, Path: raw, Query: r.URL.RawQuery,
		HasBody: r.ContentLength != 0, ContentType: r.Header.Get("Content-Type"),
	})
	if v.Allow && v.Container != "" {
		labels, err := p.labels(r.Context(), v.Container)
		switch {
		case err != nil:
			v = refuse(fmt.Sprintf("container %s: %v", v.Container, err))
		case !Labelled(labels, p.policy.Project):
			v = refuse(fmt.Sprintf("container %s is not one of project %s's", v.Container, p.policy.Project))
		}
	}
	if v.Allow && v.Service != "" {
		v = p.checkService(r, v)
	}
	if !v.Allow {
		p.log.Warn("refused", "method", r.Method, "path", raw, "reason", v.Reason)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": "wololo docker-proxy: refused: " + v.Reason})
		return
	}
	// What reaches the engine is what was judged: the query as parsed,
	// and no body but a service update's.
	out := r.Clone(r.Context())
	out.URL.RawQuery = v.Query.Encode()
	if !v.ForcedUpdate {
		out.Body, out.ContentLength = http.NoBody, 0
	}
	p.forward.ServeHTTP(w, out)
}

// maxSpec bounds the body of a service update the proxy reads.
const maxSpec = 1 << 20

// checkService admits a request on a service only if the service carries
// the project's label and, for an update, if its body is a forced update
// of the current spec and nothing else; the body read is put back for the
// engine.
func (p *Proxy) checkService(r *http.Request, v Verdict) Verdict {
	spec, err := p.serviceSpec(r.Context(), v.Service)
	if err != nil {
		return refuse(fmt.Sprintf("service %s: %v", v.Service, err))
	}
	var labelled struct{ Labels map[string]string }
	if err := json.Unmarshal(spec, &labelled); err != nil || !Labelled(labelled.Labels, p.policy.Project) {
		return refuse(fmt.Sprintf("service %s is not one of project %s's", v.Service, p.policy.Project))
	}
	if !v.ForcedUpdate {
		return v
	}
	if r.Header.Get("X-Registry-Auth") != "" {
		return refuse("a service update may not carry registry credentials")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxSpec+1))
	if err != nil || len(body) > maxSpec {
		return refuse(fmt.Sprintf("service %s: the update's body is unreadable or over %d bytes", v.Service, maxSpec))
	}
	if err := ForcedUpdateOnly(spec, body); err != nil {
		return refuse(fmt.Sprintf("service %s: only a forced update is allowed: %v", v.Service, err))
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return v
}

// serviceSpec asks the engine for a service's spec, as JSON.
func (p *Proxy) serviceSpec(ctx context.Context, service string) (json.RawMessage, error) {
	var s struct{ Spec json.RawMessage }
	if err := p.get(ctx, "/services/"+url.PathEscape(service), &s); err != nil {
		return nil, err
	}
	if len(s.Spec) == 0 {
		return nil, errors.New("inspect: no spec")
	}
	return s.Spec, nil
}

// get decodes the engine's answer to a GET of path into v.
func (p *Proxy) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker"+path, nil)
	if err != nil {
		return err
	}
	resp, err := p.upstream.Do(req)
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("inspect: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(v); err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	return nil
}

// labels asks the engine for a container's labels.
func (p *Proxy) labels(ctx context.Context, container string) (map[string]string, error) {
	var c struct {
		Config struct{ Labels map[string]string }
	}
	if err := p.get(ctx, "/containers/"+url.PathEscape(container)+"/json", &c); err != nil {
		return nil, err
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
func (p *Proxy) Serve(ctx context.Context, l net.Listener) error { return admin.Serve(ctx, l, p) }
