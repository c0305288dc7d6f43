package master

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/wololo/wololo/deploy"
)

// DockerRuntime is the Runtime of a Docker deployment: containers of one
// project, found by label, through the Docker Engine API. Containers carry
// no restart policy; the leading master is their only supervisor.
type DockerRuntime struct {
	cli     *client.Client
	project string
}

// NewDockerRuntime talks to the engine at host (in a compose deployment the
// docker-proxy's socket, "unix:///run/wololo-docker/docker.sock"), or, if
// host is empty, to the one named by the environment (DOCKER_HOST, or the
// local socket), in API version apiVersion (deploy.DockerAPIVersion).
func NewDockerRuntime(project, host, apiVersion string) (*DockerRuntime, error) {
	cli, err := dockerClient(host, apiVersion)
	if err != nil {
		return nil, err
	}
	return &DockerRuntime{cli: cli, project: project}, nil
}

// dockerClient is an Engine API client of the engine at host, or, if host
// is empty, of the one the environment names: the Docker and Swarm
// runtimes' client. It speaks API version apiVersion and no other: not
// negotiated (nor taken from $DOCKER_API_VERSION), since the docker-proxy
// admits exactly one version (services/roles/dockerproxy says why).
func dockerClient(host, apiVersion string) (*client.Client, error) {
	if apiVersion == "" {
		return nil, errors.New("docker client: no API version")
	}
	opts := []client.Opt{client.FromEnv}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	opts = append(opts, client.WithVersion(apiVersion))
	cli, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return cli, nil
}

// Close releases the client.
func (r *DockerRuntime) Close() error { return r.cli.Close() }

func (r *DockerRuntime) containers(ctx context.Context, instance string) ([]container.Summary, error) {
	args := filters.NewArgs(filters.Arg("label", deploy.LabelProject+"="+r.project))
	if instance != "" {
		args.Add("label", deploy.LabelInstance+"="+instance)
	}
	cs, err := r.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return nil, fmt.Errorf("list containers of project %s: %w", r.project, err)
	}
	return cs, nil
}

func (r *DockerRuntime) one(ctx context.Context, instance string) (container.Summary, error) {
	cs, err := r.containers(ctx, instance)
	if err != nil {
		return container.Summary{}, err
	}
	if len(cs) != 1 {
		return container.Summary{}, fmt.Errorf("project %s has %d containers of instance %s, want 1", r.project, len(cs), instance)
	}
	return cs[0], nil
}

// List implements Runtime. A paused container counts as running: it is
// the probes that find it silent.
func (r *DockerRuntime) List(ctx context.Context) ([]Process, error) {
	cs, err := r.containers(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]Process, 0, len(cs))
	for _, c := range cs {
		p := Process{
			Instance: c.Labels[deploy.LabelInstance], Address: c.Labels[deploy.LabelAddress], Ref: shortID(c.ID),
			Running: c.State == container.StateRunning || c.State == container.StatePaused,
		}
		if !p.Running {
			p.Exit = c.Status
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Instance < out[j].Instance })
	return out, nil
}

// Start implements Runtime.
func (r *DockerRuntime) Start(ctx context.Context, instance string) (bool, error) {
	c, err := r.one(ctx, instance)
	if err != nil {
		return false, err
	}
	if c.State == container.StateRunning || c.State == container.StatePaused {
		return false, nil
	}
	if err := r.cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		return false, fmt.Errorf("start container of %s: %w", instance, err)
	}
	return true, nil
}

// Kill implements Runtime: SIGKILL, which the engine delivers to a paused
// container too.
func (r *DockerRuntime) Kill(ctx context.Context, instance string) error {
	c, err := r.one(ctx, instance)
	if err != nil {
		return err
	}
	if c.State != container.StateRunning && c.State != container.StatePaused {
		return nil
	}
	if err := r.cli.ContainerKill(ctx, c.ID, "SIGKILL"); err != nil {
		return fmt.Errorf("kill container of %s: %w", instance, err)
	}
	return nil
}

// shortID is the 12-character form of a container id, as docker ps shows.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
