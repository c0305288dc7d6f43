package runtimetest_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/roles/master"
	"github.com/wololo/wololo/services/roles/master/runtimetest"
)

// TestSwarmRuntime runs the suite on two services of the wololo image (one
// replica each, restart policy none, stop-first updates: the stack's
// settings) labelled as instances of a project, through a manager's
// service and task API. Like the Swarm end-to-end test it changes the
// machine (it makes a one-node swarm on loopback when the engine is in
// none, and leaves it after), so it runs only with WOLOLO_TEST_MACHINE=1.
func TestSwarmRuntime(t *testing.T) {
	if os.Getenv("WOLOLO_TEST_MACHINE") != "1" {
		t.Skip("swarm runtime: may make a swarm on this engine; WOLOLO_TEST_MACHINE=1 runs it")
	}
	dockerOrSkip(t)
	switch state := docker(t, "info", "--format", "{{.Swarm.LocalNodeState}}"); state {
	case "active":
	case "inactive":
		docker(t, "swarm", "init", "--advertise-addr", "127.0.0.1", "--listen-addr", "127.0.0.1:2377")
		t.Cleanup(func() { _ = exec.Command("docker", "swarm", "leave", "--force").Run() })
	default:
		t.Skipf("this engine's swarm is %s", state)
	}
	project := testProject()
	image := wololoImage(t, project)
	instances := []string{"gateway-0", "gateway-1"}
	service := func(instance string) string { return project + "_" + instance }
	for _, in := range instances {
		var labels []string
		for _, kv := range []string{deploy.LabelProject + "=" + project, deploy.LabelInstance + "=" + in, deploy.LabelAddress + "=" + in + ":7101"} {
			labels = append(labels, "--label", kv, "--container-label", kv)
		}
		args := append([]string{"service", "create", "--detach", "--quiet", "--name", service(in), "--no-resolve-image",
			"--restart-condition", "none", "--update-order", "stop-first", "--update-parallelism", "1", "--update-delay", "0s"}, labels...)
		docker(t, append(append(args, image), gatewayArgs...)...)
		t.Cleanup(func() { _ = exec.Command("docker", "service", "rm", service(in)).Run() })
	}
	// The container of an instance's running task (a one-node swarm: this
	// engine holds it).
	container := func(t *testing.T, p master.Process) string {
		id := docker(t, "ps", "-q", "--filter", "label=com.docker.swarm.service.name="+service(p.Instance), "--filter", "status=running")
		if id == "" {
			t.Fatalf("no running container of %s: %+v", p.Instance, p)
		}
		return id
	}
	open := opener(func() (*master.SwarmRuntime, error) {
		return master.NewSwarmRuntime(project, "", deploy.DockerAPIVersion)
	})
	runtimetest.Run(t, runtimetest.Deployment{
		Runtime: open(t), Instances: instances, Reopen: open,
		Crash: func(t *testing.T, p master.Process) { docker(t, "kill", container(t, p)) },
		Pause: func(t *testing.T, p master.Process) { docker(t, "pause", container(t, p)) },
		// Serves is left out: the tasks publish no port on loopback.
		// A task per process; the services count nothing.
		RefPerProcess: true, CountsRestarts: false,
	})
}
