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
package dockerproxy

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
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
	// Reason says why a request is refused.
	Reason string
}

var (
	version      = regexp.MustCompile(`^/v[0-9]+\.[0-9]+(/.*)$`)
	perContainer = regexp.MustCompile(`^/containers/([a-zA-Z0-9][a-zA-Z0-9_.-]*)/(json|start|kill|pause|unpause)$`)
)

func refuse(reason string) Verdict { return Verdict{Reason: reason} }

// Decide judges a request by its method, its path as sent (escaped form)
// and its query, for the given project.
func Decide(method, rawPath string, query url.Values, project string) Verdict {
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
	return refuse(method + " " + path + " is not among the calls a master may make (list, inspect, start, kill, pause, unpause of the project's containers)")
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
