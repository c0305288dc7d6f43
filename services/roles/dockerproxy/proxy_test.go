package dockerproxy

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/wololo/wololo/deploy"
)

// policy is the tests' compose policy, of project p.
var policy = Policy{Project: "p", APIVersion: "1.41"}

func TestDecide(t *testing.T) {
	mine := "filters=" + url.QueryEscape(`{"label":{"wololo.project=p":true,"wololo.instance=q3-joiner-0":true}}`)
	legacy := "filters=" + url.QueryEscape(`{"label":["wololo.project=p"]}`)
	theirs := "filters=" + url.QueryEscape(`{"label":{"wololo.project=other":true}}`)
	privileged := true // a body: the attack of issue 22 item 8 is a HostConfig in it
	cases := []struct {
		method, path, query string
		body                bool
		allow               bool
		container           string
	}{
		{"HEAD", "/_ping", "", false, true, ""},
		{"GET", "/_ping", "", false, true, ""},
		{"GET", "/v1.41/_ping", "", false, true, ""},
		{"GET", "/_ping", "x=1", false, false, ""},
		{"POST", "/_ping", "", false, false, ""},
		{"GET", "/v1.41/containers/json", "all=1&" + mine, false, true, ""},
		{"GET", "/v1.41/containers/json", legacy, false, true, ""},
		{"GET", "/v1.41/containers/json", "", false, false, ""},
		{"GET", "/v1.41/containers/json", theirs, false, false, ""},
		{"GET", "/v1.41/containers/json", "filters=not+json", false, false, ""},
		{"GET", "/v1.41/containers/json", "all=1&size=1&" + mine, false, false, ""}, // a parameter the masters never send
		{"GET", "/v1.41/containers/json", mine + "&" + theirs, false, false, ""},    // filters twice: which one would the engine read?
		{"GET", "/v1.41/containers/json", mine + "&x=%zz", false, false, ""},        // does not parse
		{"GET", "/v1.41/containers/json", mine + ";all=1", false, false, ""},        // nor does this
		{"GET", "/v1.41/containers/json", "all=1&" + mine, privileged, false, ""},   // a body on a GET
		{"POST", "/v1.41/containers/abc123/start", "", false, true, "abc123"},
		{"POST", "/v1.41/containers/wololo-q3-joiner-0/kill", "signal=SIGKILL", false, true, "wololo-q3-joiner-0"},
		// Old and other API versions, unversioned calls.
		{"POST", "/v1.23/containers/abc123/start", "", privileged, false, ""},
		{"POST", "/v1.23/containers/abc123/start", "", false, false, ""},
		{"POST", "/v1.24/containers/abc123/start", "", false, false, ""},
		{"POST", "/v1.44/containers/abc123/start", "", false, false, ""},
		{"POST", "/v1.41.0/containers/abc123/start", "", false, false, ""},
		{"POST", "/v1/containers/abc123/start", "", false, false, ""},
		{"POST", "/v1.41", "", false, false, ""},
		{"POST", "/containers/abc123/start", "", false, false, ""},
		{"GET", "/containers/json", mine, false, false, ""},
		{"POST", "/V1.41/containers/abc123/start", "", false, false, ""},
		// Bodies and queries the masters never send.
		{"POST", "/v1.41/containers/abc123/start", "", privileged, false, ""},
		{"POST", "/v1.41/containers/abc123/start", "checkpoint=c1", false, false, ""},
		{"POST", "/v1.41/containers/abc123/start", "checkpoint-dir=/", false, false, ""},
		{"POST", "/v1.41/containers/abc123/kill", "signal=SIGKILL", privileged, false, ""},
		{"POST", "/v1.41/containers/abc123/kill", "", false, false, ""},
		{"POST", "/v1.41/containers/abc123/kill", "signal=SIGHUP", false, false, ""},
		{"POST", "/v1.41/containers/abc123/kill", "signal=SIGKILL&signal=SIGHUP", false, false, ""},
		{"POST", "/v1.41/containers/abc123/kill", "signal=SIGKILL&x=1", false, false, ""},
		// Calls the masters never make.
		{"GET", "/v1.41/containers/abc123/json", "", false, false, ""},
		{"POST", "/v1.41/containers/abc123/pause", "", false, false, ""},
		{"POST", "/v1.41/containers/abc123/unpause", "", false, false, ""},
		{"POST", "/v1.41/containers/abc123/restart", "", false, false, ""},
		{"POST", "/v1.41/containers/abc123/update", "", privileged, false, ""},
		{"GET", "/v1.41/containers/abc123/start", "", false, false, ""},
		{"post", "/v1.41/containers/abc123/start", "", false, false, ""},
		{"POST", "/v1.41/containers/abc123/exec", "", false, false, ""},
		{"POST", "/v1.41/containers/create", "", privileged, false, ""},
		{"DELETE", "/v1.41/containers/abc123", "", false, false, ""},
		{"GET", "/v1.41/images/json", "", false, false, ""},
		{"POST", "/v1.41/volumes/create", "", false, false, ""},
		{"GET", "/v1.41/containers/../images/json", "", false, false, ""},
		{"GET", "/v1.41/containers/abc%2F..%2Fx/json", "", false, false, ""},
		{"GET", "//containers/abc123/json", "", false, false, ""},
		{"GET", "/v1.41//containers/abc123/json", "", false, false, ""},
		{"POST", "/v1.41/containers/abc123/archive", "", false, false, ""},
		{"GET", "/v1.41/version", "", false, false, ""},
		{"GET", "", "", false, false, ""},
		{"POST", "/v1.41/containers/abc123/start/extra", "", false, false, ""},
	}
	for _, tc := range cases {
		// The compose proxy's rules hold with the swarm calls admitted too.
		for _, withSwarm := range []bool{false, true} {
			p := policy
			p.Swarm = withSwarm
			v := p.Decide(Request{Method: tc.method, Path: tc.path, Query: tc.query, HasBody: tc.body, ContentType: "application/json"})
			if v.Allow != tc.allow || v.Container != tc.container || v.Service != "" || v.ForcedUpdate || (!v.Allow && v.Reason == "") {
				t.Errorf("%s %s?%s body %v (swarm %v): %+v, want allow %v container %q", tc.method, tc.path, tc.query, tc.body, withSwarm, v, tc.allow, tc.container)
			}
			if want, _ := url.ParseQuery(tc.query); v.Allow && v.Query.Encode() != want.Encode() {
				t.Errorf("%s %s?%s: forwards query %q", tc.method, tc.path, tc.query, v.Query.Encode())
			}
		}
	}
	// Another pinned version admits its own and refuses 1.41.
	p := Policy{Project: "p", APIVersion: "1.44"}
	if v := p.Decide(Request{Method: "POST", Path: "/v1.44/containers/abc/start"}); !v.Allow {
		t.Errorf("1.44 pinned: its own start refused: %s", v.Reason)
	}
	if v := p.Decide(Request{Method: "POST", Path: "/v1.41/containers/abc/start"}); v.Allow || !strings.Contains(v.Reason, "API version 1.41 is not 1.44") {
		t.Errorf("1.44 pinned: a 1.41 start: %+v", v)
	}
}

func TestDecideSwarm(t *testing.T) {
	mine := "filters=" + url.QueryEscape(`{"label":{"wololo.project=p":true}}`)
	theirs := "filters=" + url.QueryEscape(`{"label":{"wololo.project=q":true}}`)
	const json, form = "application/json", "application/x-www-form-urlencoded"
	cases := []struct {
		method, path, query string
		body                bool
		contentType         string
		allow               bool
		service             string
		update              bool
	}{
		{"GET", "/v1.41/services", mine, false, "", true, "", false},
		{"GET", "/v1.41/tasks", mine, false, "", true, "", false},
		{"GET", "/v1.41/services", "", false, "", false, "", false},
		{"GET", "/v1.41/services", mine + "&status=true", false, "", false, "", false},
		{"GET", "/v1.41/tasks", theirs, false, "", false, "", false},
		{"GET", "/v1.41/tasks", mine, true, json, false, "", false},
		{"GET", "/v1.41/tasks", "filters=" + url.QueryEscape(`{"service":{"x":true}}`), false, "", false, "", false},
		{"GET", "/v1.41/services/abc", "", false, "", true, "abc", false},
		{"GET", "/v1.41/services/abc", "insertDefaults=false", false, "", true, "abc", false},
		{"GET", "/v1.41/services/abc", "other=1", false, "", false, "", false},
		{"POST", "/v1.41/services/abc/update", "version=12", true, json, true, "abc", true},
		{"POST", "/v1.41/services/abc/update", "version=12", false, json, false, "", false}, // no spec
		{"POST", "/v1.41/services/abc/update", "version=12", true, form, false, "", false},  // the engine would read the body as query
		{"POST", "/v1.41/services/abc/update", "version=12", true, "", false, "", false},
		{"POST", "/v1.23/services/abc/update", "version=12", true, json, false, "", false},
		{"POST", "/services/abc/update", "version=12", true, json, false, "", false},
		{"POST", "/v1.41/services/abc/update", "version=12&rollback=previous", true, json, false, "", false},
		{"POST", "/v1.41/services/abc/update", "version=12&registryAuthFrom=spec", true, json, false, "", false},
		{"POST", "/v1.41/services/abc/update", "version=12&version=13", true, json, false, "", false},
		{"POST", "/v1.41/services/abc/update", "", true, json, false, "", false},
		{"GET", "/v1.41/services/abc/update", "version=12", false, "", false, "", false},
		{"POST", "/v1.41/services/create", "", true, json, false, "", false},
		{"DELETE", "/v1.41/services/abc", "", false, "", false, "", false},
		{"POST", "/v1.41/services/abc", "", false, "", false, "", false},
		{"GET", "/v1.41/services/abc/logs", "", false, "", false, "", false},
		{"GET", "/v1.41/tasks/t1", "", false, "", false, "", false},
		{"GET", "/v1.41/secrets", mine, false, "", false, "", false},
		{"POST", "/v1.41/secrets/create", "", true, json, false, "", false},
		{"GET", "/v1.41/nodes", "", false, "", false, "", false},
		{"POST", "/v1.41/swarm/leave", "", false, "", false, "", false},
		{"GET", "/v1.41/services/../secrets", "", false, "", false, "", false},
	}
	for _, tc := range cases {
		r := Request{Method: tc.method, Path: tc.path, Query: tc.query, HasBody: tc.body, ContentType: tc.contentType}
		p := policy
		p.Swarm = true
		v := p.Decide(r)
		if v.Allow != tc.allow || v.Service != tc.service || v.ForcedUpdate != tc.update || (!v.Allow && v.Reason == "") {
			t.Errorf("%s %s?%s body %v %q: %+v, want allow %v service %q update %v", tc.method, tc.path, tc.query, tc.body, tc.contentType, v, tc.allow, tc.service, tc.update)
		}
		// Without --swarm, none of it passes.
		if v := policy.Decide(r); v.Allow {
			t.Errorf("%s %s?%s allowed without --swarm", tc.method, tc.path, tc.query)
		}
	}
}

func TestForcedUpdateOnly(t *testing.T) {
	current := `{"Name":"p_shard-0","Labels":{"wololo.project":"p"},"TaskTemplate":{"ContainerSpec":{"Image":"wololo:latest","Args":["worker"]},"ForceUpdate":3},"Mode":{"Replicated":{"Replicas":1}}}`
	cases := []struct {
		name, body string
		ok         bool
	}{
		{"forced", `{"Name":"p_shard-0","Labels":{"wololo.project":"p"},"TaskTemplate":{"ContainerSpec":{"Image":"wololo:latest","Args":["worker"]},"ForceUpdate":4},"Mode":{"Replicated":{"Replicas":1}}}`, true},
		{"forced, fields in another order", `{"Mode":{"Replicated":{"Replicas":1}},"TaskTemplate":{"ForceUpdate":9,"ContainerSpec":{"Args":["worker"],"Image":"wololo:latest"}},"Labels":{"wololo.project":"p"},"Name":"p_shard-0"}`, true},
		{"not raised", `{"Name":"p_shard-0","Labels":{"wololo.project":"p"},"TaskTemplate":{"ContainerSpec":{"Image":"wololo:latest","Args":["worker"]},"ForceUpdate":3},"Mode":{"Replicated":{"Replicas":1}}}`, false},
		{"another image", `{"Name":"p_shard-0","Labels":{"wololo.project":"p"},"TaskTemplate":{"ContainerSpec":{"Image":"evil:latest","Args":["worker"]},"ForceUpdate":4},"Mode":{"Replicated":{"Replicas":1}}}`, false},
		{"a mount added", `{"Name":"p_shard-0","Labels":{"wololo.project":"p"},"TaskTemplate":{"ContainerSpec":{"Image":"wololo:latest","Args":["worker"],"Mounts":[{"Type":"bind","Source":"/","Target":"/host"}]},"ForceUpdate":4},"Mode":{"Replicated":{"Replicas":1}}}`, false},
		{"scaled", `{"Name":"p_shard-0","Labels":{"wololo.project":"p"},"TaskTemplate":{"ContainerSpec":{"Image":"wololo:latest","Args":["worker"]},"ForceUpdate":4},"Mode":{"Replicated":{"Replicas":0}}}`, false},
		{"the label dropped", `{"Name":"p_shard-0","TaskTemplate":{"ContainerSpec":{"Image":"wololo:latest","Args":["worker"]},"ForceUpdate":4},"Mode":{"Replicated":{"Replicas":1}}}`, false},
		{"an unknown field", `{"Name":"p_shard-0","Labels":{"wololo.project":"p"},"TaskTemplate":{"ContainerSpec":{"Image":"wololo:latest","Args":["worker"],"Sneaky":true},"ForceUpdate":4},"Mode":{"Replicated":{"Replicas":1}}}`, false},
		{"two specs", `{"TaskTemplate":{"ForceUpdate":4}} {}`, false},
		{"not json", `nope`, false},
	}
	for _, tc := range cases {
		if err := ForcedUpdateOnly([]byte(current), []byte(tc.body)); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// fakeEngine is an engine API on a Unix socket speaking API versions 1.12
// to 1.41, as this project's test machine's 20.10 does: two containers, one
// of project p, one not. It records every call that reaches it, with its
// query and body.
type fakeEngine struct {
	mu   sync.Mutex
	seen []call
}

// call is a request as it reached the engine.
type call struct{ method, path, query, body string }

func (c call) String() string { return c.method + " " + c.path + "?" + c.query + " " + c.body }

var anyVersion = regexp.MustCompile(`^/v[0-9.]+(/.*)$`)

func (e *fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	e.seen = append(e.seen, call{r.Method, r.URL.Path, r.URL.RawQuery, string(body)})
	e.mu.Unlock()
	path := anyVersion.ReplaceAllString(r.URL.Path, "$1")
	labels := map[string]map[string]string{"mine": {deploy.LabelProject: "p"}, "theirs": {deploy.LabelProject: "q"}}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Api-Version", "1.41")
	switch {
	case path == "/_ping":
		w.Write([]byte("OK"))
	case path == "/version":
		w.Write([]byte(`{"Version":"20.10.24","ApiVersion":"1.41","MinAPIVersion":"1.12"}`))
	case path == "/services" || path == "/tasks":
		w.Write([]byte("[]"))
	case strings.HasPrefix(path, "/services/") && strings.HasSuffix(path, "/update"):
		w.Write([]byte("{}"))
	case strings.HasPrefix(path, "/services/"):
		id := strings.TrimPrefix(path, "/services/")
		json.NewEncoder(w).Encode(map[string]any{"ID": id, "Version": map[string]any{"Index": 5},
			"Spec": map[string]any{"Name": id, "Labels": labels[id], "TaskTemplate": map[string]any{"ContainerSpec": map[string]any{"Image": "wololo:latest"}, "ForceUpdate": 2}}})
	case path == "/containers/json":
		json.NewEncoder(w).Encode([]map[string]any{{"Id": "mine", "Labels": labels["mine"], "State": "running"}})
	case strings.HasSuffix(path, "/json"):
		id := strings.Split(path, "/")[2]
		json.NewEncoder(w).Encode(map[string]any{"Id": id, "Config": map[string]any{"Labels": labels[id]}})
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// calls returns the calls that reached the engine whose method and path
// end as given ("POST /containers/mine/start"), the proxy's own label
// lookups aside.
func (e *fakeEngine) calls(method, pathSuffix string) []call {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []call
	for _, c := range e.seen {
		if c.method == method && strings.HasSuffix(c.path, pathSuffix) {
			out = append(out, c)
		}
	}
	return out
}

func (e *fakeEngine) reached(what string) bool {
	method, path, _ := strings.Cut(what, " ")
	return len(e.calls(method, path)) > 0
}

// serve runs a proxy of policy in front of a fake engine and returns the
// engine and the proxy's socket.
func serve(t *testing.T, policy Policy) (*fakeEngine, string) {
	t.Helper()
	dir := t.TempDir()
	engine := &fakeEngine{}
	el, err := net.Listen("unix", filepath.Join(dir, "engine.sock"))
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(el, engine)
	t.Cleanup(func() { el.Close() })

	p, err := New("unix://"+filepath.Join(dir, "engine.sock"), policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := p.CheckEngine(ctx); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "proxy.sock")
	pl, err := Listen(sock, 0o600, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, pl) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return engine, sock
}

// dockerClient is the Docker client the masters use (deploy's pinned
// version), on the proxy's socket.
func dockerClient(t *testing.T, sock string) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.WithHost("unix://"+sock), client.WithVersion(deploy.DockerAPIVersion))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// TestProxyWithTheDockerClient runs the real Docker client against the
// proxy in front of a fake engine: the masters' calls go through, the rest
// is refused with the proxy's message and never reaches the engine.
func TestProxyWithTheDockerClient(t *testing.T) {
	engine, sock := serve(t, Policy{Project: "p", APIVersion: deploy.DockerAPIVersion, Swarm: true})
	cli := dockerClient(t, sock)
	ctx := context.Background()
	own := filters.NewArgs(filters.Arg("label", deploy.LabelProject+"=p"))
	if cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: own}); err != nil || len(cs) != 1 {
		t.Fatalf("list of the project's containers: %v, %v", cs, err)
	}
	if err := cli.ContainerStart(ctx, "mine", container.StartOptions{}); err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := cli.ContainerKill(ctx, "mine", "SIGKILL"); err != nil {
		t.Fatalf("kill: %v", err)
	}
	// The swarm runtime's calls: lists by label, a forced update.
	if _, err := cli.ServiceList(ctx, swarm.ServiceListOptions{Filters: own}); err != nil {
		t.Fatalf("service list: %v", err)
	}
	if _, err := cli.TaskList(ctx, swarm.TaskListOptions{Filters: own}); err != nil {
		t.Fatalf("task list: %v", err)
	}
	svc, _, err := cli.ServiceInspectWithRaw(ctx, "mine", swarm.ServiceInspectOptions{})
	if err != nil {
		t.Fatalf("service inspect: %v", err)
	}
	forced := svc.Spec
	forced.TaskTemplate.ForceUpdate++
	if _, err := cli.ServiceUpdate(ctx, "mine", svc.Version, forced, swarm.ServiceUpdateOptions{}); err != nil {
		t.Fatalf("forced update: %v", err)
	}
	for name, call := range map[string]func() error{
		"another image": func() error {
			spec := forced
			spec.TaskTemplate.ContainerSpec = &swarm.ContainerSpec{Image: "evil:latest"}
			_, err := cli.ServiceUpdate(ctx, "mine", svc.Version, spec, swarm.ServiceUpdateOptions{})
			return err
		},
		"update of another project's service": func() error {
			_, err := cli.ServiceUpdate(ctx, "theirs", svc.Version, forced, swarm.ServiceUpdateOptions{})
			return err
		},
		"task list without the filter":        func() error { _, err := cli.TaskList(ctx, swarm.TaskListOptions{}); return err },
		"service remove":                      func() error { return cli.ServiceRemove(ctx, "mine") },
		"list without the filter":             func() error { _, err := cli.ContainerList(ctx, container.ListOptions{All: true}); return err },
		"kill of another project's container": func() error { return cli.ContainerKill(ctx, "theirs", "SIGKILL") },
		"a kill with another signal":          func() error { return cli.ContainerKill(ctx, "mine", "SIGSTOP") },
		"a start from a checkpoint":           func() error { return cli.ContainerStart(ctx, "mine", container.StartOptions{CheckpointID: "c"}) },
		"pause":                               func() error { return cli.ContainerPause(ctx, "mine") },
		"inspect":                             func() error { _, err := cli.ContainerInspect(ctx, "mine"); return err },
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
	for _, call := range []string{"POST /containers/mine/start", "POST /containers/mine/kill"} {
		if !engine.reached(call) {
			t.Errorf("%s never reached the engine", call)
		}
	}
	if !engine.reached("POST /services/mine/update") {
		t.Error("the forced update never reached the engine")
	}
	for _, call := range []string{"POST /containers/theirs/kill", "DELETE /containers/mine", "POST /containers/create", "POST /containers/mine/pause",
		"POST /services/theirs/update", "DELETE /services/mine"} {
		if engine.reached(call) {
			t.Errorf("%s reached the engine", call)
		}
	}
	if kills := engine.calls("POST", "/containers/mine/kill"); len(kills) != 1 || kills[0].query != "signal=SIGKILL" {
		t.Errorf("kills that reached the engine: %v, want the one SIGKILL", kills)
	}
}

// TestOldAPIVersionStartWithAPrivilegedHostConfig is the attack of issue
// 22 item 8: a compromised master sends a container start in API version
// 1.23, whose body an engine before 25.0 still applies as the container's
// HostConfig, binding the host's / and making the container privileged.
// It is sent as raw HTTP on the proxy's socket, in every variant, and none
// of it reaches the engine; then the masters' own start of the same
// container goes through, with no body and in their version.
func TestOldAPIVersionStartWithAPrivilegedHostConfig(t *testing.T) {
	engine, sock := serve(t, Policy{Project: "p", APIVersion: deploy.DockerAPIVersion})
	raw := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	hostConfig := `{"Binds":["/:/host"],"Privileged":true,"CapAdd":["ALL"],"PidMode":"host"}`
	for _, a := range []struct {
		name, path string
		chunked    bool
	}{
		{"the v1.23 start of the report", "/v1.23/containers/mine/start", false},
		{"v1.23, chunked (no Content-Length)", "/v1.23/containers/mine/start", true},
		{"v1.12, the engine's oldest", "/v1.12/containers/mine/start", false},
		{"unversioned", "/containers/mine/start", false},
		{"the masters' version with the body", "/v1.41/containers/mine/start", false},
		{"the masters' version, chunked", "/v1.41/containers/mine/start", true},
		{"a kill carrying it", "/v1.41/containers/mine/kill?signal=SIGKILL", false},
	} {
		var body io.Reader = strings.NewReader(hostConfig)
		if a.chunked {
			body = io.MultiReader(body) // no length known: sent chunked
		}
		req, err := http.NewRequest(http.MethodPost, "http://docker"+a.path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := raw.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", a.name, err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(msg), "wololo docker-proxy: refused") {
			t.Errorf("%s: %s %s, want 403 and the proxy's refusal", a.name, resp.Status, msg)
		}
	}
	for _, c := range append(engine.calls("POST", "/start"), engine.calls("POST", "/kill")...) {
		t.Errorf("reached the engine: %s", c)
	}

	// The masters' start beside it: through, in their version, no body.
	if err := dockerClient(t, sock).ContainerStart(context.Background(), "mine", container.StartOptions{}); err != nil {
		t.Fatalf("the masters' start: %v", err)
	}
	starts := engine.calls("POST", "/containers/mine/start")
	if len(starts) != 1 || starts[0].path != "/v"+deploy.DockerAPIVersion+"/containers/mine/start" || starts[0].query != "" || starts[0].body != "" {
		t.Errorf("starts that reached the engine: %v, want the masters' one, bodiless", starts)
	}
}

// TestCheckEngine: the proxy refuses to start in front of an engine that
// does not speak its version, naming the flags.
func TestCheckEngine(t *testing.T) {
	engine := &fakeEngine{}
	sock := filepath.Join(t.TempDir(), "engine.sock")
	el, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(el, engine)
	defer el.Close()
	for version, ok := range map[string]bool{"1.41": true, "1.12": true, "1.40": true, "1.44": false, "1.11": false, "2.0": false} {
		p, err := New("unix://"+sock, Policy{Project: "p", APIVersion: version}, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = p.CheckEngine(context.Background())
		if (err == nil) != ok || err != nil && !strings.Contains(err.Error(), "--api-version") {
			t.Errorf("version %s against an engine of 1.12..1.41: %v, want ok %v", version, err, ok)
		}
	}
	for _, bad := range []string{"", "1", "v1.41", "1.41.0", "latest"} {
		if _, err := New("unix://"+sock, Policy{Project: "p", APIVersion: bad}, nil); err == nil {
			t.Errorf("API version %q accepted", bad)
		}
	}
}
