package master

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/wololo/wololo/deploy"
)

// SwarmRuntime is the Runtime of a Docker Swarm stack: one replicated
// service of one replica per instance, labelled like the compose
// deployment's containers, with Swarm's restart policy set to none so that
// the leading master is the only supervisor. It talks to a manager's
// service and task API (in the stack, through the docker-proxy on the
// master's manager node):
//
//   - List reads the project's services and their tasks; an instance is
//     its service's newest task. A running task is a running process, a
//     finished one (complete, failed, shutdown, rejected, orphaned) an
//     exited one. A task still on its way (new to starting), or a service
//     whose forced update has not produced its task yet, is left out of
//     the list: the orchestrator is starting it, so there is nothing to
//     probe and nothing to restart; once it runs it gets the Supervisor's
//     Timeout to answer, as a process that has just appeared does.
//   - Start replaces an instance that is not running with a forced service
//     update (TaskTemplate.ForceUpdate + 1): a new task of the same spec,
//     on the node its placement allows (its volume's). The stack sets the
//     update order stop-first, so the old task is gone before the new one
//     starts.
//   - Kill SIGKILLs the running task's container when this engine holds it
//     (a single-node swarm, or a task on the master's own node) and
//     otherwise (the kill refused or failed) forces an update, which stops the old task (SIGTERM, then
//     SIGKILL after the service's stop grace period) before it starts a new
//     one.
type SwarmRuntime struct {
	cli     *client.Client
	project string
}

// NewSwarmRuntime talks to the manager at host (in a stack the
// docker-proxy's socket, "unix:///run/wololo-docker/docker.sock"), or, if
// host is empty, to the one the environment names, in API version
// apiVersion (deploy.DockerAPIVersion).
func NewSwarmRuntime(project, host, apiVersion string) (*SwarmRuntime, error) {
	cli, err := dockerClient(host, apiVersion)
	if err != nil {
		return nil, err
	}
	return &SwarmRuntime{cli: cli, project: project}, nil
}

// Close releases the client.
func (r *SwarmRuntime) Close() error { return r.cli.Close() }

// swarmInstance is one instance as the manager shows it: its service and
// the service's tasks.
type swarmInstance struct {
	service swarm.Service
	tasks   []swarm.Task
}

func (r *SwarmRuntime) projectFilter() filters.Args {
	return filters.NewArgs(filters.Arg("label", deploy.LabelProject+"="+r.project))
}

// instances reads the project's services and tasks, by instance name.
func (r *SwarmRuntime) instances(ctx context.Context) (map[string]*swarmInstance, error) {
	svcs, err := r.cli.ServiceList(ctx, swarm.ServiceListOptions{Filters: r.projectFilter()})
	if err != nil {
		return nil, fmt.Errorf("list services of project %s: %w", r.project, err)
	}
	tasks, err := r.cli.TaskList(ctx, swarm.TaskListOptions{Filters: r.projectFilter()})
	if err != nil {
		return nil, fmt.Errorf("list tasks of project %s: %w", r.project, err)
	}
	return groupTasks(svcs, tasks), nil
}

// groupTasks puts each task under its service's instance; services
// without an instance label, and tasks of no listed service, are left out.
func groupTasks(svcs []swarm.Service, tasks []swarm.Task) map[string]*swarmInstance {
	out := map[string]*swarmInstance{}
	byID := map[string]*swarmInstance{}
	for _, s := range svcs {
		name := s.Spec.Labels[deploy.LabelInstance]
		if name == "" {
			continue
		}
		in := &swarmInstance{service: s}
		out[name], byID[s.ID] = in, in
	}
	for _, t := range tasks {
		if in := byID[t.ServiceID]; in != nil {
			in.tasks = append(in.tasks, t)
		}
	}
	return out
}

// newest is the service's latest task (by creation, then version), or
// false if it has none.
func (in *swarmInstance) newest() (swarm.Task, bool) {
	if len(in.tasks) == 0 {
		return swarm.Task{}, false
	}
	best := in.tasks[0]
	for _, t := range in.tasks[1:] {
		if t.CreatedAt.After(best.CreatedAt) || (t.CreatedAt.Equal(best.CreatedAt) && t.Version.Index > best.Version.Index) {
			best = t
		}
	}
	return best, true
}

// taskEnded reports whether a task's state is final: its container, if it
// had one, is gone and it will not run again.
func taskEnded(s swarm.TaskState) bool {
	switch s {
	case swarm.TaskStateComplete, swarm.TaskStateFailed, swarm.TaskStateShutdown,
		swarm.TaskStateRejected, swarm.TaskStateOrphaned, swarm.TaskStateRemove:
		return true
	}
	return false
}

// swarmProcess is what the runtime reports of an instance, and whether it
// reports it at all (see SwarmRuntime: an instance the orchestrator is
// still starting is not listed).
func swarmProcess(name string, in *swarmInstance) (Process, bool) {
	p := Process{Instance: name, Address: in.service.Spec.Labels[deploy.LabelAddress]}
	t, ok := in.newest()
	switch {
	case !ok:
		return p, false // created, no task scheduled yet
	case t.Spec.ForceUpdate < in.service.Spec.TaskTemplate.ForceUpdate:
		// A forced update has not made its task yet (or an older one's
		// task is still on its way): the new one is coming.
		return p, false
	case taskEnded(t.Status.State):
		p.Exit = taskExit(t)
		p.Ref = shortID(t.ID)
		return p, true
	case taskEnded(t.DesiredState):
		// Told to stop, and no forced update is making its successor (the
		// case above): with the restart policy none, the orchestrator runs
		// nothing in its place. Swarm does this when the task's node goes
		// down: the task stays as the node last reported it (running, or
		// assigned and never started) until the node comes back, which may
		// be never. Waiting for it would leave the instance down for good.
		p.Exit = fmt.Sprintf("%s, told to %s (its node down?)", t.Status.State, t.DesiredState)
		p.Ref = shortID(t.ID)
		return p, true
	case t.Status.State == swarm.TaskStateRunning && t.DesiredState == swarm.TaskStateRunning:
		p.Running, p.Ref = true, shortID(t.ID)
		if cs := t.Status.ContainerStatus; cs != nil {
			p.PID = int64(cs.PID)
		}
		return p, true
	default:
		// On its way (new .. starting).
		return p, false
	}
}

// taskExit describes how a task ended, e.g. "failed: task: non-zero exit
// (137)".
func taskExit(t swarm.Task) string {
	how := string(t.Status.State)
	switch {
	case t.Status.Err != "":
		how += ": " + t.Status.Err
	case t.Status.Message != "":
		how += ": " + t.Status.Message
	}
	if cs := t.Status.ContainerStatus; cs != nil && cs.ExitCode != 0 && !strings.Contains(how, fmt.Sprint(cs.ExitCode)) {
		how += fmt.Sprintf(" (exit code %d)", cs.ExitCode)
	}
	return how
}

// List implements Runtime.
func (r *SwarmRuntime) List(ctx context.Context) ([]Process, error) {
	ins, err := r.instances(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Process, 0, len(ins))
	for name, in := range ins {
		if p, ok := swarmProcess(name, in); ok {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Instance < out[j].Instance })
	return out, nil
}

func (r *SwarmRuntime) instance(ctx context.Context, name string) (*swarmInstance, error) {
	ins, err := r.instances(ctx)
	if err != nil {
		return nil, err
	}
	in := ins[name]
	if in == nil {
		return nil, fmt.Errorf("project %s has no service of instance %s", r.project, name)
	}
	return in, nil
}

// Start implements Runtime: a forced update of the instance's service,
// unless its newest task runs or is on its way.
func (r *SwarmRuntime) Start(ctx context.Context, instance string) (bool, error) {
	in, err := r.instance(ctx, instance)
	if err != nil {
		return false, err
	}
	if p, listed := swarmProcess(instance, in); !listed || p.Running {
		return false, nil // running, or on its way: List's rule
	}
	if err := r.forceUpdate(ctx, in.service.ID); err != nil {
		return false, fmt.Errorf("start %s: %w", instance, err)
	}
	return true, nil
}

// forceUpdate bumps a service's TaskTemplate.ForceUpdate, from its current
// spec (read again, so that the version the update names is current).
// The swarm refuses an update whose version another change of the
// service overtook between the read and the update ("update out of
// sequence": the orchestrator's own, or another master's): it is read
// and made again, a few times.
func (r *SwarmRuntime) forceUpdate(ctx context.Context, serviceID string) error {
	const attempts = 4
	for attempt := 1; ; attempt++ {
		err := r.forceUpdateOnce(ctx, serviceID)
		if err == nil || attempt == attempts || !outOfSequence(err) {
			return err
		}
	}
}

// outOfSequence says whether the swarm refused an update for naming a
// version of the service that is no longer its current one.
func outOfSequence(err error) bool {
	return strings.Contains(err.Error(), "update out of sequence")
}

func (r *SwarmRuntime) forceUpdateOnce(ctx context.Context, serviceID string) error {
	s, _, err := r.cli.ServiceInspectWithRaw(ctx, serviceID, swarm.ServiceInspectOptions{})
	if err != nil {
		return fmt.Errorf("inspect service: %w", err)
	}
	spec := s.Spec
	spec.TaskTemplate.ForceUpdate++
	resp, err := r.cli.ServiceUpdate(ctx, s.ID, s.Version, spec, swarm.ServiceUpdateOptions{})
	if err != nil {
		return fmt.Errorf("forced update of service %s: %w", s.Spec.Name, err)
	}
	if len(resp.Warnings) > 0 {
		return fmt.Errorf("forced update of service %s: %s", s.Spec.Name, strings.Join(resp.Warnings, "; "))
	}
	return nil
}

// Kill implements Runtime: SIGKILL to the running task's container where
// this engine holds it, else a forced update (which stops it, gracefully
// first).
func (r *SwarmRuntime) Kill(ctx context.Context, instance string) error {
	in, err := r.instance(ctx, instance)
	if err != nil {
		return err
	}
	t, ok := in.newest()
	if !ok || taskEnded(t.Status.State) {
		return nil
	}
	if cs := t.Status.ContainerStatus; cs != nil && cs.ContainerID != "" {
		kctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := r.cli.ContainerKill(kctx, cs.ContainerID, "SIGKILL")
		cancel()
		if err == nil {
			return nil
		}
		// Not this engine's (on another node), or gone meanwhile: the
		// manager stops it.
	}
	if err := r.forceUpdate(ctx, in.service.ID); err != nil {
		return fmt.Errorf("kill %s: %w", instance, err)
	}
	return nil
}
