package master

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
)

// TestMain removes the binary testkit.WololoBinary built after the tests.
func TestMain(m *testing.M) { testkit.Main(m) }

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

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestDockerRuntimeFindsKillsAndStartsContainers runs a real container of
// the wololo image (built FROM scratch here: the engine pulls nothing),
// labelled as a project's instance, and drives it through the runtime.
func TestDockerRuntimeFindsKillsAndStartsContainers(t *testing.T) {
	dockerOrSkip(t)
	dir := t.TempDir()
	bin, err := os.ReadFile(testkit.WololoBinary(t)) // static: CGO_ENABLED=0
	if err != nil {
		t.Fatal(err)
	}
	// Docker's build context is dir: the binary is copied into it.
	if err := os.WriteFile(filepath.Join(dir, "wololo"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY wololo /wololo\nENTRYPOINT [\"/wololo\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	project := fmt.Sprintf("wololotest%d", time.Now().UnixNano()%1e9)
	image := project + ":test"
	run(t, "docker", "build", "-q", "-t", image, dir)
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })
	name := project + "-gateway-0"
	run(t, "docker", "run", "-d", "--name", name,
		"--label", deploy.LabelProject+"="+project, "--label", deploy.LabelInstance+"=gateway-0", "--label", deploy.LabelAddress+"=gateway-0:7100",
		image, "gateway", "--listen", "0.0.0.0:7101", "--public", "0.0.0.0:7100", "--insecure")
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", name).Run() })

	rt, err := NewDockerRuntime(project, "", deploy.DockerAPIVersion)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	state := func() Process {
		ps, err := rt.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 {
			t.Fatalf("project lists %d containers, want 1: %+v", len(ps), ps)
		}
		return ps[0]
	}
	if p := state(); !p.Running || p.Instance != "gateway-0" || p.Address != "gateway-0:7100" {
		t.Fatalf("listed %+v", p)
	}
	if started, err := rt.Start(ctx, "gateway-0"); err != nil || started {
		t.Fatalf("Start of a running container = %v, %v", started, err)
	}
	if err := rt.Kill(ctx, "gateway-0"); err != nil {
		t.Fatal(err)
	}
	if p := state(); p.Running || p.Exit == "" {
		t.Fatalf("after Kill: %+v", p)
	}
	if started, err := rt.Start(ctx, "gateway-0"); err != nil || !started {
		t.Fatalf("Start of a killed container = %v, %v", started, err)
	}
	if p := state(); !p.Running {
		t.Fatalf("after Start: %+v", p)
	}
	// A paused container still counts as running (probes find it silent),
	// and Kill stops it.
	run(t, "docker", "pause", name)
	if p := state(); !p.Running {
		t.Fatalf("paused: %+v", p)
	}
	if err := rt.Kill(ctx, "gateway-0"); err != nil {
		t.Fatal(err)
	}
	if p := state(); p.Running {
		t.Fatalf("paused then killed: %+v", p)
	}
	if _, err := rt.Start(ctx, "nope-0"); err == nil {
		t.Fatal("Start of an unknown instance succeeded")
	}
}
