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
	"github.com/docker/docker/api/types/swarm"
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
		// The compose proxy's rules hold with the swarm calls admitted too.
		for _, withSwarm := range []bool{false, true} {
			v := Decide(tc.method, tc.path, tc.query, "p", withSwarm)
			if v.Allow != tc.allow || v.Container != tc.container || v.Service != "" || (!v.Allow && v.Reason == "") {
				t.Errorf("%s %s %v (swarm %v): %+v, want allow %v container %q", tc.method, tc.path, tc.query, withSwarm, v, tc.allow, tc.container)
			}
		}
	}
}

func TestDecideSwarm(t *testing.T) {
	mine := url.Values{"filters": {`{"label":{"wololo.project=p":true}}`}}
	theirs := url.Values{"filters": {`{"label":{"wololo.project=q":true}}`}}
	cases := []struct {
		method, path string
		query        url.Values
		allow        bool
		service      string
		update       bool
	}{
		{"GET", "/v1.41/services", mine, true, "", false},
		{"GET", "/v1.41/tasks", mine, true, "", false},
		{"GET", "/v1.41/services", nil, false, "", false},
		{"GET", "/v1.41/tasks", theirs, false, "", false},
		{"GET", "/v1.41/tasks", url.Values{"filters": {`{"service":{"x":true}}`}}, false, "", false},
		{"GET", "/v1.41/services/abc", nil, true, "abc", false},
		{"GET", "/v1.41/services/abc", url.Values{"insertDefaults": {"false"}}, true, "abc", false},
		{"GET", "/v1.41/services/abc", url.Values{"other": {"1"}}, false, "", false},
		{"POST", "/v1.41/services/abc/update", url.Values{"version": {"12"}}, true, "abc", true},
		{"POST", "/v1.41/services/abc/update", url.Values{"version": {"12"}, "rollback": {"previous"}}, false, "", false},
		{"POST", "/v1.41/services/abc/update", url.Values{"version": {"12"}, "registryAuthFrom": {"spec"}}, false, "", false},
		{"POST", "/v1.41/services/abc/update", nil, false, "", false},
		{"GET", "/v1.41/services/abc/update", url.Values{"version": {"12"}}, false, "", false},
		{"POST", "/v1.41/services/create", nil, false, "", false},
		{"DELETE", "/v1.41/services/abc", nil, false, "", false},
		{"POST", "/v1.41/services/abc", nil, false, "", false},
		{"GET", "/v1.41/services/abc/logs", nil, false, "", false},
		{"GET", "/v1.41/tasks/t1", nil, false, "", false},
		{"GET", "/v1.41/secrets", mine, false, "", false},
		{"POST", "/v1.41/secrets/create", nil, false, "", false},
		{"GET", "/v1.41/nodes", nil, false, "", false},
		{"POST", "/v1.41/swarm/leave", nil, false, "", false},
		{"GET", "/v1.41/services/../secrets", nil, false, "", false},
	}
	for _, tc := range cases {
		v := Decide(tc.method, tc.path, tc.query, "p", true)
		if v.Allow != tc.allow || v.Service != tc.service || v.ForcedUpdate != tc.update || (!v.Allow && v.Reason == "") {
			t.Errorf("%s %s %v: %+v, want allow %v service %q update %v", tc.method, tc.path, tc.query, v, tc.allow, tc.service, tc.update)
		}
		// Without --swarm, none of it passes.
		if v := Decide(tc.method, tc.path, tc.query, "p", false); v.Allow {
			t.Errorf("%s %s %v allowed without --swarm", tc.method, tc.path, tc.query)
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

	p, err := New("unix://"+filepath.Join(dir, "engine.sock"), "p", true, nil)
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
	if !engine.reached("POST /services/mine/update") {
		t.Error("the forced update never reached the engine")
	}
	for _, call := range []string{"POST /containers/theirs/kill", "DELETE /containers/mine", "POST /containers/create", "POST /services/theirs/update", "DELETE /services/mine"} {
		if engine.reached(call) {
			t.Errorf("%s reached the engine", call)
		}
	}
}
