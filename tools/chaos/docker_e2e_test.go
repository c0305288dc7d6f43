package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/tools/compose"
)

// TestDockerE2E is `make e2e-docker`, through the targets a user runs:
// `make up` (the image, the certificates, the checked-in compose file with
// 3 masters and 2 replicas of every keyed stage, and its wait until the
// gateway and the masters answer), every container checked confined
// (checkConfined), the proxy checked to refuse what the masters need not
// do (a forged old-version start with a privileged HostConfig among it),
// a generated dataset run with `make submit` and its four outputs compared
// byte for byte with the reference, then submitted again while containers
// of every kind are SIGKILLed (the gateway and the leading master
// included) and one worker is paused until the masters replace it, the
// grpcurl commands of docs/deployment.md run as written, and `make down`,
// which must leave no container, network or volume of the project. A
// target that fails fails the test.
//
// It runs only under `make e2e-docker` (WOLOLO_E2E_DOCKER=1), which
// installs grpcurl into bin/tools first and skips, saying so, where no
// Docker engine answers.
func TestDockerE2E(t *testing.T) {
	if os.Getenv("WOLOLO_E2E_DOCKER") != "1" {
		t.Skip("docker e2e: run by `make e2e-docker`")
	}
	root := repoRoot(t)
	grpcurl := filepath.Join(root, "bin", "tools", "grpcurl")
	if _, err := os.Stat(grpcurl); err != nil {
		t.Fatalf("%v: `make grpcurl` installs it (make e2e-docker does)", err)
	}
	const project = "wololo"
	file := filepath.Join(root, compose.DefaultFile)
	dc := composeCommand(t, project, file)
	if out, _ := exec.Command("docker", "ps", "-aq", "--filter", "label=wololo.project="+project).Output(); len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("containers of project %s already exist: `make down` first", project)
	}
	makeDown := func() {
		t.Helper()
		if _, err := runMake(t, root, "down"); err != nil {
			t.Errorf("make down: %v", err)
			down(t, dc, deploy.Default()) // the machine left clean all the same
		}
	}
	wentDown := false
	defer func() {
		if !wentDown {
			makeDown()
		}
		for _, what := range [][]string{
			{"ps", "-aq", "--filter", "label=com.docker.compose.project=" + project},
			{"volume", "ls", "-q", "--filter", "label=com.docker.compose.project=" + project},
			{"network", "ls", "-q", "--filter", "label=com.docker.compose.project=" + project},
		} {
			if out, _ := exec.Command("docker", what...).Output(); len(strings.TrimSpace(string(out))) > 0 {
				t.Errorf("left behind after make down (docker %s): %s", strings.Join(what, " "), out)
			}
		}
	}()
	start := time.Now()
	mustMake(t, root, "up")
	top := deploy.Default()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tlsDir := filepath.Join(root, DefaultDockerTLSDir)
	tgt, err := newDockerTarget(project, top, "127.0.0.1", tlsDir)
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	t.Logf("up in %s", time.Since(start).Round(time.Millisecond))
	checkConfined(ctx, t, project, filters.Arg("name", project+"-docker-proxy"), false)
	checkMastersHoldLittleDockerPower(ctx, t, project)

	dir := t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: 5000, Seed: 23}, dir); err != nil {
		t.Fatal(err)
	}
	matches, players := filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv")
	out := t.TempDir()
	mustMake(t, root, "submit", "MATCHES="+matches, "PLAYERS="+players, "OUT="+out)
	compareWithReference(t, matches, players, out)
	submitBandQuery(t, root, matches, players)

	w := testkit.Writer(t)
	rep, err := Docker(ctx, Options{
		Matches: matches, Players: players, Out: t.TempDir(),
		Kills: 12, DiskLosses: 2, Seed: 3, Interval: DefaultDockerInterval, Masters: -1, Stdout: w, Progress: w,
	}, project, "127.0.0.1", tlsDir)
	if err != nil {
		t.Fatalf("chaos against the containers: %v", err)
	}
	for _, s := range top.Stages {
		if rep.Stages[s.Name] == 0 {
			t.Errorf("no %s container was killed", s.Name)
		}
	}
	if rep.Stages[deploy.MasterStage] == 0 {
		t.Error("the leading master was never killed")
	}
	if !rep.Equal || rep.Frozen == "" || rep.FrozenFor == 0 {
		t.Errorf("equal %v, frozen %q replaced after %s", rep.Equal, rep.Frozen, rep.FrozenFor)
	}
	t.Logf("%d kills, paused %s replaced after %s", len(rep.Kills), rep.Frozen, rep.FrozenFor)

	// The election against the containers: leader kills during a second
	// job, then the leader cut off the network.
	erep, err := ElectionDocker(ctx, ElectionOptions{
		Matches: matches, Players: players, Out: t.TempDir(),
		Kills: 4, Seed: 5, Double: 0.25, RightAfter: 0.25, Partition: 5 * time.Second, Stdout: w, Progress: w,
	}, top, project, "127.0.0.1", tlsDir)
	if err != nil {
		t.Fatalf("election chaos against the containers: %v", err)
	}
	if len(erep.Violations) > 0 || !erep.Equal || len(erep.Kills) != 5 || !erep.Kills[4].Cut || !erep.Kills[4].Completed {
		t.Errorf("election chaos: violations %v, equal %v, kills %+v", erep.Violations, erep.Equal, erep.Kills)
	}
	t.Logf("election: failover p50 %s, max %s; cut-off leader replaced after %s", erep.P50, erep.Max, erep.Kills[len(erep.Kills)-1].Failover)

	gw := fmt.Sprintf("localhost:%d", top.PublicPort())
	m1 := fmt.Sprintf("localhost:%d", top.Port(deploy.Instance{Stage: deploy.MasterStage, Index: 1}))
	protos := filepath.Join(root, "proto")
	as := func(name string, extra ...string) []string {
		return append([]string{grpcurl, "-cacert", filepath.Join(tlsDir, "ca.pem"), "-cert", filepath.Join(tlsDir, name+".pem"), "-key", filepath.Join(tlsDir, name+".key")}, extra...)
	}
	getJob := as("operator", "-import-path", protos, "-proto", "wololo/v1/job.proto", "-d", `{"job_id": "nosuch"}`, gw, "wololo.v1.JobService/GetJob")
	// The election chaos may have left the gateway restarting (the masters
	// replace a process that stayed silent while the leader was cut off):
	// the commands below are about what it answers, so it answers first.
	testkit.WaitFor(t, "the gateway to answer after the election chaos", time.Minute, func() bool {
		out, _ := exec.Command(getJob[0], getJob[1:]...).CombinedOutput()
		return !strings.Contains(string(out), "connection refused") && !strings.Contains(string(out), "Unavailable")
	})
	// The grpcurl commands of docs/deployment.md, as written, from the
	// checkout's root (bin/tools/grpcurl, deploy/tls, proto/); then the
	// operator refused JobService, and the processes a master supervises.
	if n := runDocCommands(t, filepath.Join(root, "docs", "deployment.md"), root, nil); n < 4 {
		t.Errorf("docs/deployment.md: %d grpcurl commands ran, want at least 4", n)
	}
	if out, err := exec.Command(getJob[0], getJob[1:]...).CombinedOutput(); err == nil || !strings.Contains(string(out), "PermissionDenied") {
		t.Errorf("%s: %v, want PermissionDenied:\n%s", strings.Join(getJob, " "), err, out)
	}
	var m struct {
		Role   string
		Master struct {
			ID        int `json:"id"`
			Leader    int
			Processes []struct{ Instance, State string }
		}
	}
	// Right after the election chaos's partition heals, the masters may
	// still be electing (no leader known for a moment): asked again
	// until one is, for a while.
	var serr error
	testkit.Await(15*time.Second, func() bool {
		m.Master.Leader = 0
		serr = json.Unmarshal([]byte(mustRun(t, as("operator", "-servername", "master-1", m1, "wololo.v1.Status/Get")...)), &m)
		return serr != nil || m.Master.Leader != 0
	})
	if serr != nil || m.Role != "master" || m.Master.ID != 1 || m.Master.Leader == 0 {
		t.Errorf("master Status/Get: %+v, %v", m, serr)
	}
	if want := len(top.Instances()) + top.Masters - 1; len(m.Master.Processes) != want {
		t.Errorf("master-1 supervises %d processes, want %d", len(m.Master.Processes), want)
	}
	wentDown = true
	makeDown()
	t.Logf("e2e-docker: %s from make up to make down", time.Since(start).Round(time.Second))
}

// composeCommand returns a function that builds a compose command line:
// `docker compose` where the plugin exists, docker-compose otherwise.
func composeCommand(t *testing.T, project, file string) func(args ...string) []string {
	base := []string{"docker-compose"}
	if exec.Command("docker", "compose", "version").Run() == nil {
		base = []string{"docker", "compose"}
	} else if _, err := exec.LookPath("docker-compose"); err != nil {
		t.Fatal("neither `docker compose` nor docker-compose is installed")
	}
	return func(args ...string) []string {
		return append(append(append([]string(nil), base...), "-p", project, "-f", file), args...)
	}
}

// down removes the deployment. The masters restart whatever stops, each
// other included, and would race compose's one-by-one stops: they are
// killed together first, and a master a surviving one restarted meanwhile
// is caught by the next round.
func down(t *testing.T, dc func(args ...string) []string, top deploy.Topology) {
	t.Helper()
	kill := []string{"kill"}
	for _, m := range top.MasterInstances() {
		kill = append(kill, m.Name())
	}
	var last string
	for round := 1; round <= 3; round++ {
		_ = exec.Command(dc(kill...)[0], dc(kill...)[1:]...).Run() // some may be down already
		argv := dc("down", "-v", "--remove-orphans")
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err == nil {
			return
		}
		last = fmt.Sprintf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		t.Logf("down, round %d: %v; again", round, err)
	}
	t.Fatal(last)
}

// mustRun runs a command and returns its standard output; it fails the test
// with the command's output when it fails.
func mustRun(t *testing.T, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", strings.Join(argv, " "), err, out, stderr.String())
	}
	return string(out)
}

// checkMastersHoldLittleDockerPower: the masters run as an unprivileged
// user, and the docker-proxy, their only way to the engine, refuses what
// they do not need (an unfiltered list, images, another container's kill,
// and a start in an old API version whose body this engine, before 25.0,
// would apply as a privileged HostConfig with the host's / bound).
func checkMastersHoldLittleDockerPower(ctx context.Context, t *testing.T, project string) {
	t.Helper()
	for _, m := range []string{"master-1", "master-2", "master-3"} {
		pid := strings.TrimSpace(mustRun(t, "docker", "inspect", "-f", "{{.State.Pid}}", project+"-"+m))
		st, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(line, "Uid:") && !strings.HasPrefix(strings.Join(strings.Fields(line), " "), "Uid: 10001 10001") {
				t.Errorf("%s runs as %q, want uid 10001", m, line)
			}
		}
	}
	dir := strings.TrimSpace(mustRun(t, "docker", "volume", "inspect", "-f", "{{.Mountpoint}}", project+"_docker-proxy"))
	proxy, err := client.NewClientWithOpts(client.WithHost("unix://"+filepath.Join(dir, "docker.sock")), client.WithVersion(deploy.DockerAPIVersion))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	own := filters.NewArgs(filters.Arg("label", deploy.LabelProject+"="+project))
	if cs, err := proxy.ContainerList(ctx, container.ListOptions{All: true, Filters: own}); err != nil || len(cs) == 0 {
		t.Fatalf("the project's containers through the proxy: %d, %v", len(cs), err)
	}
	for name, call := range map[string]func() error{
		"an unfiltered list":   func() error { _, err := proxy.ContainerList(ctx, container.ListOptions{All: true}); return err },
		"the images":           func() error { _, err := proxy.ImageList(ctx, image.ListOptions{}); return err },
		"the proxy's own kill": func() error { return proxy.ContainerKill(ctx, project+"-docker-proxy", "SIGKILL") },
		"a privileged start in API version 1.23": func() error {
			// Stopped first, so that the engine would start it, and
			// started again after (the leading master may be first).
			shard := project + "-shard-0"
			hostConfig := func() string {
				return strings.TrimSpace(mustRun(t, "docker", "inspect", "-f", "{{.HostConfig.Privileged}} {{.HostConfig.Binds}}", shard))
			}
			before := hostConfig()
			mustRun(t, "docker", "kill", shard)
			defer mustRun(t, "docker", "start", shard)
			forged := `{"Binds":["/:/host"],"Privileged":true}`
			resp, err := proxy.HTTPClient().Post("http://docker/v1.23/containers/"+shard+"/start", "application/json", strings.NewReader(forged))
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			msg, _ := io.ReadAll(resp.Body)
			if after := hostConfig(); after != before || !strings.HasPrefix(before, "false ") {
				t.Errorf("%s: privileged and binds %s before the forged start, %s after", shard, before, after)
			}
			return fmt.Errorf("%s %s", resp.Status, msg)
		},
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), "wololo docker-proxy: refused") {
			t.Errorf("%s through the proxy: %v, want refused", name, err)
		}
	}
}

// checkConfined inspects through the Docker API every running container
// of the project (by its label) and the docker-proxy's (the one container
// the proxy filter names), and checks how tools/compose confines them: the
// user (compose.User, the proxy compose.ProxyUser), a read-only root
// filesystem, every capability dropped and none added, not privileged, the
// CPU and memory limits and, with compose, no-new-privileges (a swarm
// service cannot ask for it before API 1.46: tools/compose/stack.go). Then
// what the kernel says of each process (/proc/PID/status): its uid, no
// effective, permitted or bounding capability, and with compose
// no_new_privs set.
func checkConfined(ctx context.Context, t *testing.T, project string, proxy filters.KeyValuePair, swarm bool) {
	t.Helper()
	engine, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	running := func(f filters.KeyValuePair) []container.Summary {
		cs, err := engine.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(f)})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	graph := running(filters.Arg("label", deploy.LabelProject+"="+project))
	proxies := running(proxy)
	top := deploy.Default()
	if len(graph) != len(top.Instances())+top.Masters || len(proxies) != 1 {
		t.Fatalf("%d running containers of project %s and %d of the proxy, want %d and 1", len(graph), project, len(proxies), len(top.Instances())+top.Masters)
	}
	for _, c := range append(graph, proxies...) {
		in, err := engine.ContainerInspect(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		name := c.Labels[deploy.LabelInstance]
		user, limits := compose.User, compose.GraphLimits
		switch {
		case name == "":
			name, user, limits = "docker-proxy", compose.ProxyUser, compose.ProxyLimits
		case strings.HasPrefix(name, deploy.MasterStage+"-"):
			limits = compose.MasterLimits
		}
		hc := in.HostConfig
		if in.Config.User != user {
			t.Errorf("%s runs as %q, want %q", name, in.Config.User, user)
		}
		if !hc.ReadonlyRootfs {
			t.Errorf("%s: the root filesystem is writable", name)
		}
		if len(hc.CapDrop) != 1 || hc.CapDrop[0] != "ALL" || len(hc.CapAdd) != 0 || hc.Privileged {
			t.Errorf("%s: CapDrop %v, CapAdd %v, privileged %v; want ALL dropped, none added", name, hc.CapDrop, hc.CapAdd, hc.Privileged)
		}
		if nnp := slices.Contains(hc.SecurityOpt, "no-new-privileges:true") || slices.Contains(hc.SecurityOpt, "no-new-privileges"); nnp == swarm {
			t.Errorf("%s: security options %v (swarm %v)", name, hc.SecurityOpt, swarm)
		}
		if mem, cpus := memoryBytes(t, limits.Memory), nanoCPUs(t, limits.CPUs); hc.Memory != mem || hc.NanoCPUs != cpus {
			t.Errorf("%s: memory %d, CPUs %d (nano), want %d and %d", name, hc.Memory, hc.NanoCPUs, mem, cpus)
		}
		if in.State == nil || in.State.Pid == 0 {
			t.Errorf("%s: no process", name)
			continue
		}
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", in.State.Pid))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		uid, _, _ := strings.Cut(user, ":")
		want := map[string]string{"Uid": uid, "CapEff": "0000000000000000", "CapPrm": "0000000000000000", "CapBnd": "0000000000000000"}
		if !swarm {
			want["NoNewPrivs"] = "1"
		}
		for line := range strings.Lines(string(st)) {
			key, value, _ := strings.Cut(line, ":")
			fields := strings.Fields(value)
			if w, ok := want[key]; ok && (len(fields) == 0 || fields[0] != w) {
				t.Errorf("%s (pid %d): the kernel says %s %q, want %s", name, in.State.Pid, key, strings.TrimSpace(value), w)
			}
		}
	}
}

// memoryBytes is a compose memory size ("256M", "2G") in bytes.
func memoryBytes(t *testing.T, s string) int64 {
	t.Helper()
	units := map[byte]int64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if err != nil || units[s[len(s)-1]] == 0 {
		t.Fatalf("memory limit %q: want N followed by K, M or G", s)
	}
	return n * units[s[len(s)-1]]
}

// nanoCPUs is a compose CPU limit ("0.25") in billionths of a CPU.
func nanoCPUs(t *testing.T, s string) int64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("CPU limit %q: %v", s, err)
	}
	return int64(math.Round(f * 1e9))
}

// submitBandQuery runs issue 38's query (GROUP BY a four-branch CASE,
// whose channel's key once made a stream name the receivers refused, and
// a deployment hang) on the deployment with `make submit QUERY=...`, and
// compares its file with `wololo demo`'s on the same inputs.
func submitBandQuery(t *testing.T, root, matches, players string) {
	t.Helper()
	query := "bands=" + filepath.Join(root, "services", "e2e", "testdata", "bands.sql")
	got := t.TempDir()
	mustMake(t, root, "submit", "MATCHES="+matches, "PLAYERS="+players, "OUT="+got, "QUERY="+query)
	want := t.TempDir()
	demo := exec.Command(filepath.Join(root, "bin", "wololo"), "demo", "--matches", matches, "--players", players, "--query", query, "--out", want)
	if out, err := demo.CombinedOutput(); err != nil {
		t.Fatalf("wololo demo of the band query: %v\n%s", err, out)
	}
	answer, err := os.ReadFile(filepath.Join(want, "bands.csv"))
	if err != nil {
		t.Fatal(err)
	}
	testkit.SameFiles(t, got, map[string][]byte{"bands.csv": answer})
}
