package runtimetest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/roles/master"
	"github.com/wololo/wololo/services/roles/master/runtimetest"
)

// dockerOrSkip skips the test where no Docker engine answers.
func dockerOrSkip(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("short mode: no containers")
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("no Docker engine answers: %v %s", err, strings.TrimSpace(string(out)))
	}
}

// docker runs the docker command and returns its output, trimmed.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// wololoImage builds an image of the wololo binary FROM scratch (the
// engine pulls nothing) for project, removed after the test.
func wololoImage(t *testing.T, project string) string {
	t.Helper()
	dir := t.TempDir()
	bin, err := os.ReadFile(testkit.WololoBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wololo"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY wololo /wololo\nENTRYPOINT [\"/wololo\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	image := project + ":test"
	docker(t, "build", "-q", "-t", image, dir)
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })
	return image
}

// testProject is a project name no other deployment on the engine has.
func testProject() string { return fmt.Sprintf("wololotest%d", time.Now().UnixNano()%1e9) }

// gatewayArgs run a gateway that serves without certificates or a store.
var gatewayArgs = []string{"gateway", "--listen", "0.0.0.0:7101", "--public", "0.0.0.0:7100", "--insecure"}

// TestDockerRuntime runs the suite on two containers of the wololo image
// labelled as instances of a project, through the Engine API; each
// publishes its gRPC port on loopback for the suite's health checks.
func TestDockerRuntime(t *testing.T) {
	dockerOrSkip(t)
	project := testProject()
	image := wololoImage(t, project)
	instances := []string{"gateway-0", "gateway-1"}
	name := func(instance string) string { return project + "-" + instance }
	for _, in := range instances {
		docker(t, append([]string{"run", "-d", "--name", name(in), "-p", "127.0.0.1::7101",
			"--label", deploy.LabelProject + "=" + project, "--label", deploy.LabelInstance + "=" + in, "--label", deploy.LabelAddress + "=" + in + ":7101",
			image}, gatewayArgs...)...)
		t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", name(in)).Run() })
	}
	open := opener(func() (*master.DockerRuntime, error) {
		return master.NewDockerRuntime(project, "", deploy.DockerAPIVersion)
	})
	runtimetest.Run(t, runtimetest.Deployment{
		Runtime: open(t), Instances: instances, Reopen: open,
		Crash: func(t *testing.T, p master.Process) { docker(t, "kill", name(p.Instance)) },
		Pause: func(t *testing.T, p master.Process) { docker(t, "pause", name(p.Instance)) },
		Serves: func(ctx context.Context, p master.Process) bool {
			// The published port changes with every start of the container.
			out, err := exec.CommandContext(ctx, "docker", "port", name(p.Instance), "7101/tcp").Output()
			addr, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
			return err == nil && strings.HasPrefix(addr, "127.0.0.1:") && healthy(ctx, addr)
		},
		// A container is restarted in place: its id stays, nothing counts.
		RefPerProcess: false, CountsRestarts: false,
	})
}
