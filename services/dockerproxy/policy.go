// Package dockerproxy is `wololo docker-proxy`: the only process of a
// compose deployment that holds the Docker socket. The masters talk to the
// engine through it, and it lets through exactly what their Docker runtime
// needs, for the project's labelled containers only: the API-version ping,
// listing containers filtered by the project's label, and inspecting,
// starting, killing, pausing and unpausing a container that carries that
// label. Everything else (creating containers, exec, images, volumes,
// networks, another project's containers, a list without the filter) is
// refused with 403 and a JSON message that says what and why. A master
// that is compromised can thus restart or stop the graph's processes, which
// is its job, and nothing else on the host.
//
// The decision is a pure function of the request (Decide) and of the
// container's labels (Labelled); the Proxy is the thin HTTP adapter that
// asks the engine for those labels and forwards what is allowed. It touches
// nothing but the two sockets.
//
// In front of a swarm manager (--swarm, for the masters' swarm runtime) it
// also lets through the service and task calls that runtime makes: a
// service list and a task list filtered by the project's label, the inspect
// of a service that carries the label, and the update of such a service
// that is a forced update and nothing else: the body must be the service's
// current spec with TaskTemplate.ForceUpdate raised (ForcedUpdateOnly), so
// a master can have a task replaced but not change its image, command,
// mounts, networks, placement or replicas. Creating or removing services,
// secrets, configs, networks and nodes stays refused.
package dockerproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/docker/docker/api/types/swarm"
)

// LabelProject is the label a container of a project carries (see
// deploy.LabelProject; repeated here so that this package imports nothing
// of the module).
const LabelProject = "wololo.project"

// Verdict is what Decide says of a request.
type Verdict struct {
	// Allow: forward it (after the container check, if Container is set).
	Allow bool
	// Container is the container the request acts on, whose labels must
	// show the project before it is forwarded ("" if none).
	Container string
	// Service is the swarm service the request acts on, whose labels must
	// show the project before it is forwarded ("" if none).
	Service string
	// ForcedUpdate: the request updates Service, and its body must be a
	// forced update only (ForcedUpdateOnly).
	ForcedUpdate bool
	// Reason says why a request is refused.
	Reason string
}

var (
	version      = regexp.MustCompile(`^/v[0-9]+\.[0-9]+(/.*)$`)
	perContainer = regexp.MustCompile(`^/containers/([a-zA-Z0-9][a-zA-Z0-9_.-]*)/(json|start|kill|pause|unpause)$`)
	perService   = regexp.MustCompile(`^/services/([a-zA-Z0-9][a-zA-Z0-9_.-]*)(/update)?$`)
	digits       = regexp.MustCompile(`^[0-9]+$`)
)

func refuse(reason string) Verdict { return Verdict{Reason: reason} }

// Decide judges a request by its method, its path as sent (escaped form)
// and its query, for the given project; withSwarm admits the swarm
// runtime's service and task calls too.
func Decide(method, rawPath string, query url.Values, project string, withSwarm bool) Verdict {
	if strings.Contains(rawPath, "%") || strings.Contains(rawPath, "..") || strings.Contains(rawPath, "//") || !strings.HasPrefix(rawPath, "/") {
		return refuse("the path is not in plain form")
	}
	path := rawPath
	if m := version.FindStringSubmatch(path); m != nil {
		path = m[1]
	}
	switch {
	case path == "/_ping":
		if method == http.MethodGet || method == http.MethodHead {
			return Verdict{Allow: true}
		}
	case path == "/containers/json":
		if method != http.MethodGet {
			break
		}
		if !filtersProject(query.Get("filters"), project) {
			return refuse("a container list must be filtered by label " + LabelProject + "=" + project)
		}
		return Verdict{Allow: true}
	case withSwarm && (path == "/services" || path == "/tasks"):
		if method != http.MethodGet {
			break
		}
		if !filtersProject(query.Get("filters"), project) {
			return refuse("a " + strings.TrimSuffix(path[1:], "s") + " list must be filtered by label " + LabelProject + "=" + project)
		}
		return Verdict{Allow: true}
	case withSwarm && perService.MatchString(path):
		m := perService.FindStringSubmatch(path)
		if m[2] == "" && method == http.MethodGet && onlyKeys(query, "insertDefaults") {
			return Verdict{Allow: true, Service: m[1]}
		}
		if m[2] == "/update" && method == http.MethodPost {
			if !onlyKeys(query, "version") || !digits.MatchString(query.Get("version")) {
				return refuse("a service update takes ?version=N and nothing else (no rollback, no registry auth)")
			}
			return Verdict{Allow: true, Service: m[1], ForcedUpdate: true}
		}
	default:
		m := perContainer.FindStringSubmatch(path)
		if m == nil {
			break
		}
		want := http.MethodPost
		if m[2] == "json" {
			want = http.MethodGet
		}
		if method != want {
			break
		}
		return Verdict{Allow: true, Container: m[1]}
	}
	calls := "list, inspect, start, kill, pause, unpause of the project's containers"
	if withSwarm {
		calls += "; list, inspect and forced update of its services; list of its tasks"
	}
	return refuse(method + " " + path + " is not among the calls a master may make (" + calls + ")")
}

// onlyKeys reports whether the query has no parameter but the allowed ones.
func onlyKeys(query url.Values, allowed ...string) bool {
	for k := range query {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return false
		}
	}
	return true
}

// ForcedUpdateOnly checks that an update body asks for a forced update of
// a service and nothing else: requested is current (the service's spec as
// the engine shows it) with TaskTemplate.ForceUpdate raised. A field the
// API types do not know is refused, so that nothing slips past the
// comparison.
func ForcedUpdateOnly(current, requested []byte) error {
	var cur, req swarm.ServiceSpec
	if err := json.Unmarshal(current, &cur); err != nil {
		return fmt.Errorf("the service's current spec: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(requested))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("the update's spec: %w", err)
	}
	if dec.More() {
		return errors.New("the update's body holds more than one spec")
	}
	if req.TaskTemplate.ForceUpdate <= cur.TaskTemplate.ForceUpdate {
		return fmt.Errorf("not a forced update: TaskTemplate.ForceUpdate %d, the service's is %d", req.TaskTemplate.ForceUpdate, cur.TaskTemplate.ForceUpdate)
	}
	req.TaskTemplate.ForceUpdate = cur.TaskTemplate.ForceUpdate
	a, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if !bytes.Equal(a, b) {
		return errors.New("the update changes more than TaskTemplate.ForceUpdate")
	}
	return nil
}

// filtersProject reports whether a container list's filters (the engine's
// JSON, either form) require the project's label.
func filtersProject(raw, project string) bool {
	want := LabelProject + "=" + project
	var byMap map[string]map[string]bool
	if json.Unmarshal([]byte(raw), &byMap) == nil {
		return byMap["label"][want]
	}
	var byList map[string][]string
	if json.Unmarshal([]byte(raw), &byList) == nil {
		for _, l := range byList["label"] {
			if l == want {
				return true
			}
		}
	}
	return false
}

// Labelled reports whether a container's labels put it in the project.
func Labelled(labels map[string]string, project string) bool {
	return labels[LabelProject] == project
}
