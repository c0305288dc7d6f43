package dockerproxy

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
)

func TestDecide(t *testing.T) {
	mine := url.Values{"filters": {`{"label":{"wololo.project=p":true,"wololo.instance=q3-joiner-0":true}}`}}
	legacy := url.Values{"filters": {`{"label":["wololo.project=p"]}`}}
	theirs := url.Values{"filters": {`{"label":{"wololo.project=other":true}}`}}
	cases := []struct {
		method, path string
		query        url.Values
		allow        bool
		container    string
	}{
		{"HEAD", "/_ping", nil, true, ""},
		{"GET", "/_ping", nil, true, ""},
		{"GET", "/v1.41/containers/json", mine, true, ""},
		{"GET", "/containers/json", legacy, true, ""},
		{"GET", "/v1.41/containers/json", nil, false, ""},
		{"GET", "/v1.41/containers/json", theirs, false, ""},
		{"GET", "/v1.41/containers/json", url.Values{"filters": {`not json`}}, false, ""},
		{"GET", "/v1.41/containers/abc123/json", nil, true, "abc123"},
		{"POST", "/v1.41/containers/abc123/start", nil, true, "abc123"},
		{"POST", "/v1.41/containers/wololo-q3-joiner-0/kill", url.Values{"signal": {"SIGKILL"}}, true, "wololo-q3-joiner-0"},
		{"POST", "/containers/abc123/pause", nil, true, "abc123"},
		{"POST", "/containers/abc123/unpause", nil, true, "abc123"},
		{"GET", "/containers/abc123/start", nil, false, ""},
		{"post", "/containers/abc123/start", nil, false, ""},
		{"POST", "/containers/abc123/exec", nil, false, ""},
		{"POST", "/containers/create", nil, false, ""},
		{"DELETE", "/containers/abc123", nil, false, ""},
		{"GET", "/images/json", nil, false, ""},
		{"POST", "/v1.41/volumes/create", nil, false, ""},
		{"GET", "/containers/../images/json", nil, false, ""},
		{"GET", "/containers/abc%2F..%2Fx/json", nil, false, ""},
		{"GET", "//containers/abc123/json", nil, false, ""},
		{"GET", "/v1.41//containers/abc123/json", nil, false, ""},
		{"POST", "/containers/abc123/archive", nil, false, ""},
		{"GET", "/version", nil, false, ""},
		{"GET", "", nil, false, ""},
		{"POST", "/v1.41/containers/abc123/start/extra", nil, false, ""},
	}
	for _, tc := range cases {
		v := Decide(tc.method, tc.path, tc.query, "p")
		if v.Allow != tc.allow || v.Container != tc.container || (!v.Allow && v.Reason == "") {
			t.Errorf("%s %s %v: %+v, want allow %v container %q", tc.method, tc.path, tc.query, v, tc.allow, tc.container)
		}
	}
}

// fakeEngine is an engine API on a Unix socket: two containers, one of
// project p, one not; it records what reached it.
type fakeEngine struct {
	mu   sync.Mutex
	seen []string
}

func (e *fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.seen = append(e.seen, r.Method+" "+r.URL.Path)
	e.mu.Unlock()
	path := version.ReplaceAllString(r.URL.Path, "$1")
	labels := map[string]map[string]string{"mine": {LabelProject: "p"}, "theirs": {LabelProject: "q"}}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Api-Version", "1.41")
	switch {
	case path == "/_ping":
		w.Write([]byte("OK"))
	case path == "/containers/json":
		json.NewEncoder(w).Encode([]map[string]any{{"Id": "mine", "Labels": labels["mine"], "State": "running"}})
	case strings.HasSuffix(path, "/json"):
		id := strings.Split(path, "/")[2]
		json.NewEncoder(w).Encode(map[string]any{"Id": id, "Config": map[string]any{"Labels": labels[id]}})
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func (e *fakeEngine) reached(call string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	method, path, _ := strings.Cut(call, " ")
	for _, s := range e.seen {
		if strings.HasPrefix(s, method+" ") && strings.HasSuffix(s, path) {
			return true
		}
	}
	return false
}

// TestProxyWithTheDockerClient runs the real Docker client against the
// proxy in front of a fake engine: the masters' calls go through, the rest
// is refused with the proxy's message and never reaches the engine.
func TestProxyWithTheDockerClient(t *testing.T) {
	dir := t.TempDir()
	engine := &fakeEngine{}
	el, err := net.Listen("unix", filepath.Join(dir, "engine.sock"))
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(el, engine)
	defer el.Close()

	p, err := New("unix://"+filepath.Join(dir, "engine.sock"), "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "proxy.sock")
	pl, err := Listen(sock, 0o600, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, pl) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	cli, err := client.NewClientWithOpts(client.WithHost("unix://"+sock), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	own := filters.NewArgs(filters.Arg("label", LabelProject+"=p"))
	if cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: own}); err != nil || len(cs) != 1 {
		t.Fatalf("list of the project's containers: %v, %v", cs, err)
	}
	if err := cli.ContainerStart(ctx, "mine", container.StartOptions{}); err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := cli.ContainerKill(ctx, "mine", "SIGKILL"); err != nil {
		t.Fatalf("kill: %v", err)
	}
	if err := cli.ContainerPause(ctx, "mine"); err != nil {
		t.Fatalf("pause: %v", err)
	}
	for name, call := range map[string]func() error{
		"list without the filter":             func() error { _, err := cli.ContainerList(ctx, container.ListOptions{All: true}); return err },
		"kill of another project's container": func() error { return cli.ContainerKill(ctx, "theirs", "SIGKILL") },
		"remove":                              func() error { return cli.ContainerRemove(ctx, "mine", container.RemoveOptions{}) },
		"create": func() error {
			_, err := cli.ContainerCreate(ctx, &container.Config{Image: "x"}, nil, nil, nil, "evil")
			return err
		},
	} {
		err := call()
		if err == nil || !strings.Contains(err.Error(), "wololo docker-proxy: refused") {
			t.Errorf("%s: %v, want the proxy's refusal", name, err)
		}
	}
	for _, call := range []string{"POST /containers/mine/start", "POST /containers/mine/kill", "POST /containers/mine/pause"} {
		if !engine.reached(call) {
			t.Errorf("%s never reached the engine", call)
		}
	}
	for _, call := range []string{"POST /containers/theirs/kill", "DELETE /containers/mine", "POST /containers/create"} {
		if engine.reached(call) {
			t.Errorf("%s reached the engine", call)
		}
	}
}
