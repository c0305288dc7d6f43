package master

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/swarm"

	"github.com/wololo/wololo/deploy"
)

func swarmTask(id string, created time.Time, force uint64, state, desired swarm.TaskState) swarm.Task {
	t := swarm.Task{ID: id, ServiceID: "svc", DesiredState: desired}
	t.CreatedAt = created
	t.Spec.ForceUpdate = force
	t.Status.State = state
	return t
}

func TestSwarmProcess(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	svc := func(force uint64) swarm.Service {
		s := swarm.Service{ID: "svc"}
		s.Spec.Labels = map[string]string{deploy.LabelInstance: "shard-0", deploy.LabelAddress: "shard-0:7102"}
		s.Spec.TaskTemplate.ForceUpdate = force
		return s
	}
	failed := swarmTask("old", t0, 0, swarm.TaskStateFailed, swarm.TaskStateShutdown)
	failed.Status.Err = "task: non-zero exit (137)"
	failed.Status.ContainerStatus = &swarm.ContainerStatus{ExitCode: 137}
	running := swarmTask("new0123456789abc", t0.Add(time.Second), 1, swarm.TaskStateRunning, swarm.TaskStateRunning)
	running.Status.ContainerStatus = &swarm.ContainerStatus{PID: 42}
	cases := []struct {
		name    string
		force   uint64
		tasks   []swarm.Task
		listed  bool
		running bool
		exit    string
	}{
		{"no task yet", 0, nil, false, false, ""},
		{"first task starting", 0, []swarm.Task{swarmTask("a", t0, 0, swarm.TaskStatePreparing, swarm.TaskStateRunning)}, false, false, ""},
		{"running", 1, []swarm.Task{failed, running}, true, true, ""},
		{"running, listed in any order", 1, []swarm.Task{running, failed}, true, true, ""},
		{"exited", 0, []swarm.Task{failed}, true, false, "failed: task: non-zero exit (137)"},
		{"exited cleanly", 0, []swarm.Task{swarmTask("a", t0, 0, swarm.TaskStateComplete, swarm.TaskStateShutdown)}, true, false, "complete"},
		{"forced update made no task yet", 1, []swarm.Task{failed}, false, false, ""},
		{"an older update's task still on its way", 2, []swarm.Task{failed, swarmTask("b", t0.Add(time.Second), 1, swarm.TaskStatePending, swarm.TaskStateRunning)}, false, false, ""},
		{"the new task waits for the old to stop", 1, []swarm.Task{
			swarmTask("a", t0, 0, swarm.TaskStateRunning, swarm.TaskStateShutdown),
			swarmTask("b", t0.Add(time.Second), 1, swarm.TaskStateReady, swarm.TaskStateReady)}, false, false, ""},
		{"running but told to stop, nothing coming (its node down)", 0, []swarm.Task{swarmTask("a", t0, 0, swarm.TaskStateRunning, swarm.TaskStateShutdown)}, true, false, "running, told to shutdown (its node down?)"},
		{"forced update's task assigned to a node that went down", 1, []swarm.Task{
			swarmTask("a", t0, 0, swarm.TaskStateRunning, swarm.TaskStateShutdown),
			swarmTask("b", t0.Add(time.Second), 1, swarm.TaskStateAssigned, swarm.TaskStateShutdown)}, true, false, "assigned, told to shutdown (its node down?)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, listed := swarmProcess("shard-0", &swarmInstance{service: svc(tc.force), tasks: tc.tasks})
			if listed != tc.listed || p.Running != tc.running || p.Exit != tc.exit || p.Address != "shard-0:7102" {
				t.Fatalf("got %+v listed %v; want listed %v running %v exit %q", p, listed, tc.listed, tc.running, tc.exit)
			}
			if tc.running && (p.PID != 42 || p.Ref != "new012345678") {
				t.Errorf("running task: pid %d ref %q", p.PID, p.Ref)
			}
		})
	}
}

func TestGroupTasksKeepsTheProjectsLabelledServices(t *testing.T) {
	a := swarm.Service{ID: "a"}
	a.Spec.Labels = map[string]string{deploy.LabelInstance: "gateway-0"}
	unlabelled := swarm.Service{ID: "b"}
	got := groupTasks([]swarm.Service{a, unlabelled}, []swarm.Task{{ID: "1", ServiceID: "a"}, {ID: "2", ServiceID: "b"}, {ID: "3", ServiceID: "zz"}})
	if len(got) != 1 || got["gateway-0"] == nil || len(got["gateway-0"].tasks) != 1 || got["gateway-0"].tasks[0].ID != "1" {
		t.Fatalf("groupTasks: %+v", got)
	}
}

// fakeManager is a swarm manager's API for one service and its tasks; it
// records the forced updates and kills it is asked for.
type fakeManager struct {
	mu      sync.Mutex
	service swarm.Service
	tasks   []swarm.Task
	updates []swarm.ServiceSpec
	kills   []string
	killErr bool // the container is on another node
	// outOfSequence is how many updates to refuse as the swarm refuses
	// one whose version another change overtook.
	outOfSequence int
}

func (f *fakeManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	path := r.URL.Path
	if i := strings.Index(path[1:], "/"); strings.HasPrefix(path, "/v1.") && i > 0 {
		path = path[i+1:]
	}
	w.Header().Set("Api-Version", "1.41")
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	switch {
	case path == "/_ping":
		w.Write([]byte("OK"))
	case path == "/services" && strings.Contains(r.URL.Query().Get("filters"), deploy.LabelProject+"=p"):
		enc.Encode([]swarm.Service{f.service})
	case path == "/tasks" && strings.Contains(r.URL.Query().Get("filters"), deploy.LabelProject+"=p"):
		enc.Encode(f.tasks)
	case path == "/services/svc" && r.Method == http.MethodGet:
		enc.Encode(f.service)
	case path == "/services/svc/update" && r.Method == http.MethodPost && f.outOfSequence > 0:
		f.outOfSequence--
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"message":"rpc error: code = Unknown desc = update out of sequence"}`))
	case path == "/services/svc/update" && r.Method == http.MethodPost && r.URL.Query().Get("version") == "7":
		var spec swarm.ServiceSpec
		if err := json.NewDecoder(r.Body).Decode(&spec); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.updates = append(f.updates, spec)
		enc.Encode(swarm.ServiceUpdateResponse{})
	case strings.HasPrefix(path, "/containers/") && strings.HasSuffix(path, "/kill"):
		if f.killErr {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"No such container"}`))
			return
		}
		f.kills = append(f.kills, strings.TrimSuffix(strings.TrimPrefix(path, "/containers/"), "/kill"))
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "unexpected "+r.Method+" "+r.URL.String(), http.StatusTeapot)
	}
}

func TestSwarmRuntimeStartsWithAForcedUpdateAndKills(t *testing.T) {
	t0 := time.Now()
	f := &fakeManager{}
	f.service.ID = "svc"
	f.service.Version.Index = 7
	f.service.Spec.Name = "p_shard-0"
	f.service.Spec.Labels = map[string]string{deploy.LabelProject: "p", deploy.LabelInstance: "shard-0", deploy.LabelAddress: "shard-0:7102"}
	f.service.Spec.TaskTemplate.ForceUpdate = 3
	f.service.Spec.TaskTemplate.ContainerSpec = &swarm.ContainerSpec{Image: "wololo:latest", Args: []string{"worker"}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	rt, err := NewSwarmRuntime("p", "tcp://"+strings.TrimPrefix(srv.URL, "http://"), deploy.DockerAPIVersion)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	running := swarmTask("t1", t0, 3, swarm.TaskStateRunning, swarm.TaskStateRunning)
	running.ServiceID = "svc"
	running.Status.ContainerStatus = &swarm.ContainerStatus{ContainerID: "c1", PID: 9}
	f.tasks = []swarm.Task{running}
	if ps, err := rt.List(ctx); err != nil || len(ps) != 1 || !ps[0].Running || ps[0].Instance != "shard-0" {
		t.Fatalf("List: %+v %v", ps, err)
	}
	if started, err := rt.Start(ctx, "shard-0"); err != nil || started || len(f.updates) != 0 {
		t.Fatalf("Start of a running instance: %v %v, %d updates", started, err, len(f.updates))
	}
	// A silent one on this engine: its container is killed.
	if err := rt.Kill(ctx, "shard-0"); err != nil || len(f.kills) != 1 || f.kills[0] != "c1" {
		t.Fatalf("Kill: %v, kills %v", err, f.kills)
	}
	// On another node: a forced update stops it.
	f.killErr = true
	if err := rt.Kill(ctx, "shard-0"); err != nil || len(f.updates) != 1 || f.updates[0].TaskTemplate.ForceUpdate != 4 {
		t.Fatalf("Kill elsewhere: %v, updates %+v", err, f.updates)
	}
	// Ended: Start forces an update of the spec as it is, ForceUpdate + 1.
	f.updates = nil
	f.tasks[0].Status.State, f.tasks[0].DesiredState = swarm.TaskStateFailed, swarm.TaskStateShutdown
	if ps, err := rt.List(ctx); err != nil || len(ps) != 1 || ps[0].Running || ps[0].Exit == "" {
		t.Fatalf("List of an ended task: %+v %v", ps, err)
	}
	if started, err := rt.Start(ctx, "shard-0"); err != nil || !started || len(f.updates) != 1 {
		t.Fatalf("Start of an ended instance: %v %v, updates %d", started, err, len(f.updates))
	}
	if u := f.updates[0]; u.TaskTemplate.ForceUpdate != 4 || u.Name != "p_shard-0" || u.TaskTemplate.ContainerSpec.Image != "wololo:latest" {
		t.Errorf("update sent %+v", u)
	}
	if _, err := rt.Start(ctx, "nope-0"); err == nil {
		t.Error("Start of an unknown instance succeeded")
	}
	// An update another change overtook (seen on a swarm right after a
	// pause): read and made again.
	f.updates, f.outOfSequence = nil, 2
	if started, err := rt.Start(ctx, "shard-0"); err != nil || !started || len(f.updates) != 1 {
		t.Fatalf("Start refused twice out of sequence: %v %v, updates %d", started, err, len(f.updates))
	}
	f.updates, f.outOfSequence = nil, 100
	if _, err := rt.Start(ctx, "shard-0"); err == nil || !strings.Contains(err.Error(), "update out of sequence") || len(f.updates) != 0 {
		t.Fatalf("Start refused every time: %v, updates %d", err, len(f.updates))
	}
}
