// Package dockerproxy is `wololo docker-proxy`: the only process of a
// compose deployment that holds the Docker socket. The masters talk to the
// engine through it, and it lets through exactly the calls their Docker
// runtime makes, for the project's labelled containers only, in the one
// Engine API version they speak: listing containers filtered by the
// project's label, and starting and SIGKILLing a container that carries
// that label (and the API-version ping). Everything else (creating
// containers, exec, images, volumes, networks, another project's
// containers, a list without the filter, another API version, a query
// parameter the masters never send, a body on a call that takes none) is
// refused with 403 and a JSON message that says what and why. A master
// that is compromised can thus restart or stop the graph's processes,
// which is its job, and nothing else on the host.
//
// Why one API version, and no body: the engine interprets a request by the
// version its path names, and old versions mean more. Engines before 25.0
// still honour API versions below 1.24, where a container's start takes a
// HostConfig in its body (binds, Privileged): a `POST /v1.23/containers/X/
// start` with `/` bound would make a root shell of any labelled container.
// Judging the path and query alone is not enough, then; the proxy admits
// the version the masters pin (deploy.DockerAPIVersion, --api-version) and
// no other, refuses a body wherever the masters send none, and forwards
// the query it judged and nothing else. The masters pin the version rather
// than negotiate it, so that what they send does not depend on what the
// engine (or whatever answers the ping) says.
//
// The decision is a pure function of the request (Policy.Decide) and of
// the container's labels (Labelled); the Proxy is the thin HTTP adapter that
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

	"github.com/wololo/wololo/deploy"
)

// Policy is what a proxy admits.
type Policy struct {
	// Project is the project whose containers and services may be acted on.
	Project string
	// APIVersion is the one Engine API version admitted ("1.41"): every
	// call but the ping must name it in its path (/v1.41/...).
	APIVersion string
	// Swarm admits the swarm runtime's service and task calls too.
	Swarm bool
}

// Request is what Decide judges: a call as it reached the proxy.
type Request struct {
	Method string
	// Path is the path as sent, in escaped form.
	Path string
	// Query is the raw query string; the proxy forwards only what it
	// parses into (Verdict.Query).
	Query string
	// HasBody: the request carries a body, or may (a chunked one).
	HasBody bool
	// ContentType is the Content-Type header.
	ContentType string
}

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
	// forced update only (ForcedUpdateOnly). No other call has a body.
	ForcedUpdate bool
	// Query is the query judged, to be forwarded encoded as it is.
	Query url.Values
	// Reason says why a request is refused.
	Reason string
}

var (
	versioned      = regexp.MustCompile(`^/v([0-9][0-9.]*)(/.*)$`)
	perContainer   = regexp.MustCompile(`^/containers/([a-zA-Z0-9][a-zA-Z0-9_.-]*)/(start|kill)$`)
	perService     = regexp.MustCompile(`^/services/([a-zA-Z0-9][a-zA-Z0-9_.-]*)(/update)?$`)
	digits         = regexp.MustCompile(`^[0-9]+$`)
	apiVersionForm = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
)

func refuse(reason string) Verdict { return Verdict{Reason: reason} }

// Decide judges a request by its method, path, query and whether it has a
// body.
func (p Policy) Decide(r Request) Verdict {
	if strings.Contains(r.Path, "%") || strings.Contains(r.Path, "..") || strings.Contains(r.Path, "//") || !strings.HasPrefix(r.Path, "/") {
		return refuse("the path is not in plain form")
	}
	query, err := url.ParseQuery(r.Query)
	if err != nil {
		return refuse("the query does not parse: " + err.Error())
	}
	for k, vs := range query {
		if len(vs) != 1 {
			return refuse("query parameter " + k + " is given " + fmt.Sprint(len(vs)) + " times")
		}
	}
	path := r.Path
	m := versioned.FindStringSubmatch(path)
	switch {
	case m != nil && m[1] != p.APIVersion:
		return refuse("API version " + m[1] + " is not " + p.APIVersion + ", the one the masters speak (older versions take more than the path says: a start with a HostConfig below 1.24)")
	case m != nil:
		path = m[2]
	case path != "/_ping":
		return refuse("a call must name API version " + p.APIVersion + " in its path (/v" + p.APIVersion + path + "); only the ping may go without")
	}
	v := p.decide(r.Method, path, query)
	if !v.Allow {
		return v
	}
	if r.HasBody != v.ForcedUpdate {
		if r.HasBody {
			return refuse(r.Method + " " + path + " takes no body")
		}
		return refuse("a service update needs its spec as the body")
	}
	if v.ForcedUpdate && r.ContentType != "application/json" {
		return refuse("a service update's body must be application/json, not " + fmt.Sprintf("%q", r.ContentType))
	}
	v.Query = query
	return v
}

// decide judges the unversioned path and the parsed query.
func (p Policy) decide(method, path string, query url.Values) Verdict {
	switch {
	case path == "/_ping":
		if method != http.MethodGet && method != http.MethodHead {
			break
		}
		if len(query) > 0 {
			return refuse("the ping takes no query")
		}
		return Verdict{Allow: true}
	case path == "/containers/json":
		if method != http.MethodGet {
			break
		}
		if !onlyKeys(query, "all", "filters") {
			return refuse("a container list takes ?all and ?filters and nothing else")
		}
		if !filtersProject(query.Get("filters"), p.Project) {
			return refuse("a container list must be filtered by label " + deploy.LabelProject + "=" + p.Project)
		}
		return Verdict{Allow: true}
	case p.Swarm && (path == "/services" || path == "/tasks"):
		if method != http.MethodGet {
			break
		}
		what := strings.TrimSuffix(path[1:], "s")
		if !onlyKeys(query, "filters") {
			return refuse("a " + what + " list takes ?filters and nothing else")
		}
		if !filtersProject(query.Get("filters"), p.Project) {
			return refuse("a " + what + " list must be filtered by label " + deploy.LabelProject + "=" + p.Project)
		}
		return Verdict{Allow: true}
	case p.Swarm && perService.MatchString(path):
		m := perService.FindStringSubmatch(path)
		if m[2] == "" && method == http.MethodGet {
			if !onlyKeys(query, "insertDefaults") {
				return refuse("a service inspect takes ?insertDefaults and nothing else")
			}
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
		if m == nil || method != http.MethodPost {
			break
		}
		switch m[2] {
		case "start":
			if len(query) > 0 {
				return refuse("a container start takes no query (no checkpoint)")
			}
		case "kill":
			if !onlyKeys(query, "signal") || query.Get("signal") != "SIGKILL" {
				return refuse("a container kill takes ?signal=SIGKILL and nothing else")
			}
		}
		return Verdict{Allow: true, Container: m[1]}
	}
	calls := "list of the project's containers, start and SIGKILL of one"
	if p.Swarm {
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
	want := deploy.LabelProject + "=" + project
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
	return labels[deploy.LabelProject] == project
}
