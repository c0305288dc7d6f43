package chaos

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/tools/compose"
)

// TestSwarmE2E is `make e2e-swarm`: `make swarm-up` (a one-node swarm on
// loopback if the engine is in none, the image, the certificates as
// secrets, the checked-in deploy/stack.yaml), a small job with `make
// swarm-submit` compared byte for byte with the reference, the same job while tasks of
// every kind are SIGKILLed (the gateway and the leading master included)
// and one worker is paused until the masters replace it with a forced
// service update, the outputs compared byte for byte, two more kills of
// the leading master timed, the docker-proxy's swarm rules checked, and
// `make swarm-down`, which must leave no service, container, volume,
// network, secret or node label of the stack, and the engine's swarm state
// as it was.
//
// It runs only under `make e2e-swarm` (WOLOLO_E2E_SWARM=1), which skips,
// saying so, where no Docker engine answers or the engine is in a swarm
// make did not make.
func TestSwarmE2E(t *testing.T) {
	if os.Getenv("WOLOLO_E2E_SWARM") != "1" {
		t.Skip("swarm e2e: run by `make e2e-swarm`")
	}
	const stack = compose.DefaultStackProject
	root := repoRoot(t)
	before := swarmState(t)
	networks := mustRun(t, "docker", "network", "ls", "--format", "{{.Name}}")
	if out, _ := exec.Command("docker", "service", "ls", "-q", "--filter", "label=com.docker.stack.namespace="+stack).Output(); before == "active" && len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("stack %s is already deployed: `make swarm-down` first", stack)
	}
	down := false
	defer func() {
		if !down {
			if t.Failed() {
				logMasterActions(t, stack, deploy.Default())
			}
			mustMake(t, root, "swarm-down")
		}
	}()
	mustMake(t, root, "swarm-up")

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	tlsDir := filepath.Join(root, DefaultDockerTLSDir)
	top := deploy.Default()
	checkSwarmProxy(ctx, t, stack, top)
	checkConfined(ctx, t, stack, filters.Arg("label", "com.docker.swarm.service.name="+stack+"_docker-proxy"), true)

	dir := t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: 5000, Seed: 29}, dir); err != nil {
		t.Fatal(err)
	}
	matches, players := filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv")
	out := t.TempDir()
	mustMake(t, root, "swarm-submit", "MATCHES="+matches, "PLAYERS="+players, "OUT="+out)
	compareWithReference(t, matches, players, out)

	w := testkit.Writer(t)
	rep, err := Swarm(ctx, Options{
		Matches: matches, Players: players, Out: t.TempDir(),
		Kills: 8, DiskLosses: 1, Seed: 3, Interval: DefaultDockerInterval, Masters: -1, Stdout: w, Progress: w,
	}, stack, "127.0.0.1", tlsDir, compose.DefaultPortBase)
	if err != nil {
		t.Fatalf("chaos against the stack: %v", err)
	}
	for _, s := range top.Stages {
		if rep.Stages[s.Name] == 0 {
			t.Errorf("no %s task was killed", s.Name)
		}
	}
	if rep.Stages[deploy.MasterStage] == 0 {
		t.Error("the leading master was never killed")
	}
	if !rep.Equal || rep.Frozen == "" || rep.FrozenFor == 0 {
		t.Errorf("equal %v, frozen %q replaced after %s", rep.Equal, rep.Frozen, rep.FrozenFor)
	}
	t.Logf("%d kills, paused %s replaced after %s", len(rep.Kills), rep.Frozen, rep.FrozenFor)

	erep, err := ElectionSwarm(ctx, ElectionOptions{
		Matches: matches, Players: players, Out: t.TempDir(),
		Kills: 2, Seed: 5, Stdout: w, Progress: w,
	}, top, stack, "127.0.0.1", tlsDir, compose.DefaultPortBase)
	if err != nil {
		t.Fatalf("election chaos against the stack: %v", err)
	}
	if len(erep.Violations) > 0 || !erep.Equal || len(erep.Failovers) != 2 {
		t.Errorf("election chaos: violations %v, equal %v, kills %+v", erep.Violations, erep.Equal, erep.Kills)
	}
	t.Logf("election: failover p50 %s, max %s", erep.P50, erep.Max)

	down = true
	mustMake(t, root, "swarm-down")
	if after := swarmState(t); after != before {
		t.Errorf("the engine's swarm is %s after swarm-down, was %s", after, before)
	}
	if after := mustRun(t, "docker", "network", "ls", "--format", "{{.Name}}"); after != networks {
		t.Errorf("networks after swarm-down:\n%s\nbefore swarm-up:\n%s", after, networks)
	}
	if before == "active" {
		for _, what := range [][]string{
			{"service", "ls", "-q", "--filter", "label=com.docker.stack.namespace=" + stack},
			{"secret", "ls", "-q", "--filter", "label=com.docker.stack.namespace=" + stack},
		} {
			if out, _ := exec.Command("docker", what...).Output(); len(strings.TrimSpace(string(out))) > 0 {
				t.Errorf("left behind after swarm-down (docker %s): %s", strings.Join(what, " "), out)
			}
		}
		if out := mustRun(t, "docker", "node", "inspect", "--format", "{{json .Spec.Labels}}", "self"); strings.Contains(out, stack+".") {
			t.Errorf("node labels of the stack left behind: %s", out)
		}
	}
	for _, what := range [][]string{
		{"ps", "-aq", "--filter", "label=com.docker.stack.namespace=" + stack},
		{"volume", "ls", "-q", "--filter", "label=com.docker.stack.namespace=" + stack},
		{"network", "ls", "-q", "--filter", "label=com.docker.stack.namespace=" + stack},
	} {
		if out, _ := exec.Command("docker", what...).Output(); len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("left behind after swarm-down (docker %s): %s", strings.Join(what, " "), out)
		}
	}
}

// swarmState is the engine's swarm state: "inactive", "active", ...
func swarmState(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(mustRun(t, "docker", "info", "--format", "{{.Swarm.LocalNodeState}}"))
}

// checkSwarmProxy: the masters run as the unprivileged user, and the
// docker-proxy of the stack lets them list the stack's services and tasks
// but refuses an update that is more than a forced one, a removal, an
// unfiltered task list and the secrets.
func checkSwarmProxy(ctx context.Context, t *testing.T, stack string, top deploy.Topology) {
	t.Helper()
	for _, in := range top.MasterInstances() {
		m := in.Name()
		id := strings.TrimSpace(mustRun(t, "docker", "ps", "-q", "--filter", "label="+deploy.LabelProject+"="+stack, "--filter", "label="+deploy.LabelInstance+"="+m))
		if user := strings.TrimSpace(mustRun(t, "docker", "inspect", "-f", "{{.Config.User}}", id)); user != compose.User {
			t.Errorf("%s runs as %q, want %s", m, user, compose.User)
		}
	}
	dir := strings.TrimSpace(mustRun(t, "docker", "volume", "inspect", "-f", "{{.Mountpoint}}", stack+"_docker-proxy"))
	proxy, err := client.NewClientWithOpts(client.WithHost("unix://"+filepath.Join(dir, "docker.sock")), client.WithVersion(deploy.DockerAPIVersion))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	own := filters.NewArgs(filters.Arg("label", deploy.LabelProject+"="+stack))
	svcs, err := proxy.ServiceList(ctx, swarm.ServiceListOptions{Filters: own})
	services := len(top.Instances()) + top.Masters // one per instance and master; the proxy is global, unlabelled
	if err != nil || len(svcs) != services {
		t.Fatalf("the stack's services through the proxy: %d, want %d, %v", len(svcs), services, err)
	}
	if tasks, err := proxy.TaskList(ctx, swarm.TaskListOptions{Filters: own}); err != nil || len(tasks) < services {
		t.Fatalf("the stack's tasks through the proxy: %d, %v", len(tasks), err)
	}
	s := svcs[0]
	for name, call := range map[string]func() error{
		"an update of the image": func() error {
			spec := s.Spec
			spec.TaskTemplate.ForceUpdate++
			spec.TaskTemplate.ContainerSpec.Image = "busybox:latest"
			_, err := proxy.ServiceUpdate(ctx, s.ID, s.Version, spec, swarm.ServiceUpdateOptions{})
			return err
		},
		"a service removal":          func() error { return proxy.ServiceRemove(ctx, s.ID) },
		"an unfiltered task list":    func() error { _, err := proxy.TaskList(ctx, swarm.TaskListOptions{}); return err },
		"the secrets":                func() error { _, err := proxy.SecretList(ctx, swarm.SecretListOptions{}); return err },
		"an unfiltered service list": func() error { _, err := proxy.ServiceList(ctx, swarm.ServiceListOptions{}); return err },
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), "wololo docker-proxy: refused") {
			t.Errorf("%s through the proxy: %v, want refused", name, err)
		}
	}
}

// logMasterActions logs what the masters restarted and killed, and their
// warnings, for a failed run.
func logMasterActions(t *testing.T, stack string, top deploy.Topology) {
	for _, in := range top.MasterInstances() {
		m := in.Name()
		out, _ := exec.Command("docker", "service", "logs", "--raw", stack+"_"+m).CombinedOutput()
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, `"restarted"`) || strings.Contains(line, `"@level":"warn"`) || strings.Contains(line, `"@level":"error"`) || strings.Contains(line, "acting") {
				t.Logf("%s: %s", m, line)
			}
		}
	}
}
