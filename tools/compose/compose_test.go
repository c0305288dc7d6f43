package compose

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
)

// TestCheckedInFileIsTheGeneratorsOutput keeps deploy/compose.yaml equal
// to what `wololo compose` writes for the default topology.
func TestCheckedInFileIsTheGeneratorsOutput(t *testing.T) {
	want, err := Generate(deploy.Default(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../" + DefaultFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not the generator's output for the default topology; run: bin/wololo compose --out %s", DefaultFile, DefaultFile)
	}
}

func TestEveryInstanceIsAServiceWithoutRestartPolicy(t *testing.T) {
	top := deploy.Default().Uniform(3)
	top.Masters = 5
	b, err := Generate(top, Options{Project: "p1", Image: "img:1"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, in := range append(top.Instances(), top.MasterInstances()...) {
		if !strings.Contains(s, "\n  "+in.Name()+":\n") {
			t.Errorf("no service %s", in.Name())
		}
		if !strings.Contains(s, "\n  "+in.Name()+"-data: {}") {
			t.Errorf("no volume for %s", in.Name())
		}
	}
	n := len(top.Instances()) + top.Masters
	for what, want := range map[string]int{
		`restart: "no"`:                                   n,
		"wololo.project: \"p1\"":                          n,
		"/var/run/docker.sock:/var/run/docker.sock":       1, // the docker-proxy's only
		`"docker-proxy:/run/wololo-docker"`:               6, // the proxy's and the masters'
		`user: "10001:10001"`:                             n, // every graph process and master runs unprivileged
		`user: "0:10001"`:                                 1, // the docker-proxy: the engine socket's owner, no capability
		`"--runtime", "docker", "--docker-project", "p1"`: 5,
		"WOLOLO_TOPOLOGY: *topology":                      n, // not the default topology: it travels along
		`ports: ["7100:7100", "127.0.0.1:8101:8101"]`:     1, // the public port, not the internal 7101; the admin port on loopback
		`"7101`:                           0,
		`"--tls-dir", "/run/secrets"`:     2 * n, // the process and its health check
		`secrets: ["ca.pem", "crl.pem", `: n,
	} {
		if got := strings.Count(s, what); got != want {
			t.Errorf("%q appears %d times, want %d", what, got, want)
		}
	}
	for _, in := range append(top.Instances(), top.MasterInstances()...) {
		// Each process's admin listener is reachable from the published
		// port and the project network: not its default, loopback.
		if admin := fmt.Sprintf(`"--admin", "0.0.0.0:%d"`, top.AdminPort(in)); strings.Count(s, admin) != 1 {
			t.Errorf("%s: want %s once", in.Name(), admin)
		}
		// Each service holds the CA and its own key, and no one else's.
		own := "    secrets: " + flow([]string{"ca.pem", "crl.pem", in.Name() + ".pem", in.Name() + ".key"}) + "\n"
		if !strings.Contains(s, own) || strings.Count(s, `"`+in.Name()+`.key"`) != 1 {
			t.Errorf("%s: want its own secrets %q once", in.Name(), own)
		}
		if !strings.Contains(s, "  "+in.Name()+`.key: {file: "./tls/`+in.Name()+`.key"}`) {
			t.Errorf("no secret file for %s's key", in.Name())
		}
	}
	var graph []string
	for _, in := range top.Instances() {
		graph = append(graph, in.Name())
	}
	// Masters start after the whole graph (none finds a created container
	// not started yet); nothing else waits for anything.
	if want, got := "depends_on: "+flow(append(graph, "docker-proxy"))+"\n", strings.Count(s, "depends_on: "+flow(append(graph, "docker-proxy"))+"\n"); got != 5 || strings.Count(s, "depends_on") != 5 {
		t.Errorf("%q appears %d times (depends_on %d times), want 5", want, got, strings.Count(s, "depends_on"))
	}
	if strings.Contains(s, "restart: always") || strings.Contains(s, "on-failure") || strings.Count(s, "restart: unless-stopped") != 1 {
		t.Error("a restart policy: the masters must be the only supervisor")
	}
}

func TestGenerateRefuses(t *testing.T) {
	top := deploy.Default()
	top.Masters = 0
	if _, err := Generate(top, Options{}); err == nil || !strings.Contains(err.Error(), "no masters") {
		t.Errorf("no masters: %v", err)
	}
	if _, err := Generate(deploy.Default(), Options{Project: "a b"}); err == nil {
		t.Error("a project name with a space was accepted")
	}
	if _, err := applyReplicas(deploy.Default(), "shard=0"); err == nil {
		t.Error("zero replicas accepted")
	}
	if _, err := applyReplicas(deploy.Default(), "nosuch=2"); err == nil {
		t.Error("an unknown task accepted")
	}
	top, err := applyReplicas(deploy.Default(), "*=3")
	if err != nil || top.Replicas("gateway") != 1 || top.Replicas("shard") != 3 {
		t.Errorf("applyReplicas: %v %+v", err, top.Stages)
	}
	top, err = applyReplicas(deploy.Default(), "*=3, shard=4")
	if err != nil || top.Replicas("gateway") != 1 || top.Replicas("shard") != 4 {
		t.Errorf("applyReplicas: %v %+v", err, top.Stages)
	}
}

// TestLogJSON: --log-json gives every service's command --log-json once
// (the masters have it anyway), in the compose file and in the swarm
// stack; without it only the masters log JSON.
func TestLogJSON(t *testing.T) {
	top := deploy.Default()
	all := len(top.Instances()) + top.Masters + 1 // and the docker-proxy
	for _, c := range []struct {
		name string
		on   bool
		want int // commands with --log-json
	}{
		{"default", false, top.Masters},
		{"--log-json", true, all},
	} {
		for _, swarm := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/swarm=%v", c.name, swarm), func(t *testing.T) {
				b, err := Generate(top, Options{LogJSON: c.on})
				if swarm {
					b, err = GenerateStack(top, StackOptions{Options: Options{LogJSON: c.on}})
				}
				if err != nil {
					t.Fatal(err)
				}
				commands, with := 0, 0
				for line := range strings.Lines(string(b)) {
					if !strings.HasPrefix(line, "    command: ") {
						continue
					}
					commands++
					switch strings.Count(line, `"--log-json"`) {
					case 0:
					case 1:
						with++
					default:
						t.Errorf("--log-json twice: %s", line)
					}
				}
				if with != c.want || commands != all {
					t.Errorf("%d of %d commands have --log-json, want %d of %d", with, commands, c.want, all)
				}
			})
		}
	}
}

// TestCheckedInStackIsTheGeneratorsOutput keeps deploy/stack.yaml equal to
// what `wololo compose --swarm` writes for the default topology.
func TestCheckedInStackIsTheGeneratorsOutput(t *testing.T) {
	want, err := GenerateStack(deploy.Default(), StackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../" + DefaultStackFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not the generator's output for the default topology; run: bin/wololo compose --swarm --out %s", DefaultStackFile, DefaultStackFile)
	}
}

func TestStackPinsSupervisesAndIsolates(t *testing.T) {
	top := deploy.Default().Uniform(2)
	top.Masters = 5
	b, err := GenerateStack(top, StackOptions{Options: Options{Project: "s1", Image: "img:1"}, PortBase: 9000})
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	graph := len(top.Instances())
	n := graph + top.Masters
	for _, in := range append(top.Instances(), top.MasterInstances()...) {
		name := in.Name()
		if !strings.Contains(s, "\n  "+name+":\n") || !strings.Contains(s, "\n  "+name+"-data: {}") {
			t.Errorf("no service or no volume for %s", name)
		}
		// The gateway pinned to its node by its own label, a master also
		// to a manager; any other instance placed anywhere (what it loses
		// with its volume is replayed).
		pin := `"node.labels.s1.` + name + ` == true"`
		want := "placement: {constraints: [" + pin + "]}"
		switch in.Stage {
		case deploy.MasterStage:
			want = `placement: {constraints: ["node.role == manager", ` + pin + "]}"
		case top.Gateway().Name:
		default:
			if strings.Contains(s, "node.labels.s1."+name+" ") {
				t.Errorf("%s: pinned to a node; want it placed anywhere", name)
			}
			want = ""
		}
		if want != "" && strings.Count(s, want) != 1 {
			t.Errorf("%s: want %q once", name, want)
		}
		// Its admin listener reachable on the overlay (for a scraper).
		if admin := fmt.Sprintf(`"--admin", "0.0.0.0:%d"`, top.AdminPort(in)); strings.Count(s, admin) != 1 {
			t.Errorf("%s: want %s once", name, admin)
		}
		// Its own secrets, the key 0400.
		if !strings.Contains(s, "      - {source: "+name+".key, target: "+name+".key") || strings.Count(s, name+".key") != 4 {
			t.Errorf("%s: its key is not its own secret", name)
		}
	}
	for what, want := range map[string]int{
		"restart_policy: {condition: none}":                          n, // the masters supervise
		"restart_policy: {condition: any":                            1, // the docker-proxy only
		"order: stop-first":                                          n,
		"endpoint_mode: dnsrr":                                       n,
		"replicas: 1\n":                                              n,
		"mode: global":                                               1,
		"wololo.project: \"s1\"":                                     2 * n, // container and service labels
		`"--runtime", "swarm", "--docker-project", "s1"`:             top.Masters,
		`"docker-proxy", "--swarm"`:                                  1,
		"/var/run/docker.sock:/var/run/docker.sock":                  1,
		`"docker-proxy:/run/wololo-docker"`:                          top.Masters + 1,
		"uid: \"10001\", gid: \"10001\", mode: 0400}":                n, // every key its process's user's
		"resources: {limits: {cpus: ":                                n + 1,
		"driver_opts: {encrypted: \"true\"}":                         1,
		"networks: [net]":                                            n + 1,
		"{target: 7100, published: 9000, protocol: tcp, mode: host}": 1,
		"{target: 7101":                                              0, // the gateway's internal port is not published
		`image: "img:1"`:                                             n + 1,
		"WOLOLO_TOPOLOGY: *topology":                                 n,
		"container_name":                                             0, // swarm ignores it
		"healthcheck":                                                0, // swarm would kill unhealthy tasks itself
		"restart: ":                                                  0,
		`"--tls-dir", "/run/secrets"`:                                n,
		"ca.pem: {file: \"./tls/ca.pem\"}":                           1,
	} {
		if got := strings.Count(s, what); got != want {
			t.Errorf("%q appears %d times, want %d", what, got, want)
		}
	}
	for _, in := range top.MasterInstances() {
		p := top.Port(in)
		if want := fmt.Sprintf("{target: %d, published: %d, protocol: tcp, mode: host}", p, p+9000-top.PublicPort()); !strings.Contains(s, want) {
			t.Errorf("%s: want %q", in.Name(), want)
		}
	}
}

func TestGenerateStackRefuses(t *testing.T) {
	top := deploy.Default()
	top.Masters = 0
	if _, err := GenerateStack(top, StackOptions{}); err == nil || !strings.Contains(err.Error(), "no masters") {
		t.Errorf("no masters: %v", err)
	}
	for _, o := range []StackOptions{{Options: Options{Project: "a b"}}, {Options: Options{Project: "$x"}}, {Options: Options{Image: "a b"}}, {PortBase: 65534}} {
		if _, err := GenerateStack(deploy.Default(), o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// services splits a generated file's services section into each service's
// lines, by name.
func services(t *testing.T, file string) map[string]string {
	t.Helper()
	_, rest, ok := strings.Cut(file, "\nservices:\n")
	if !ok {
		t.Fatal("no services section")
	}
	out := map[string]string{}
	name := ""
	for line := range strings.Lines(rest) {
		switch {
		case !strings.HasPrefix(line, " ") && strings.TrimSpace(line) != "":
			return out // the next section
		case strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   "):
			name = strings.TrimSuffix(strings.TrimSpace(line), ":")
		case name != "":
			out[name] += line
		}
	}
	return out
}

// TestEveryContainerIsConfined: every service of the compose file and of
// the stack, the docker-proxy included, runs as its user with a read-only
// root filesystem, every capability dropped, and its CPU and memory
// limits; the compose file's also with no-new-privileges (the stack
// cannot say it: see stack.go). The graph's processes and the masters run
// as the unprivileged User, the proxy as uid 0 (the engine socket's owner)
// in User's group.
func TestEveryContainerIsConfined(t *testing.T) {
	top := deploy.Default().Uniform(2)
	top.Masters = 3
	composeFile, err := Generate(top, Options{Project: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	stackFile, err := GenerateStack(top, StackOptions{Options: Options{Project: "s1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, swarm := range []bool{false, true} {
		file := string(composeFile)
		if swarm {
			file = string(stackFile)
		}
		svcs := services(t, file)
		if want := len(top.Instances()) + top.Masters + 1; len(svcs) != want {
			t.Fatalf("swarm %v: %d services, want %d", swarm, len(svcs), want)
		}
		for name, lines := range svcs {
			user, limits := User, GraphLimits
			switch {
			case name == "docker-proxy":
				user, limits = ProxyUser, ProxyLimits
			case strings.HasPrefix(name, deploy.MasterStage+"-"):
				limits = MasterLimits
			}
			want := []string{
				"    user: \"" + user + "\"\n",
				"    read_only: true\n",
				"    cap_drop: [ALL]\n",
			}
			limit := fmt.Sprintf("    cpus: \"%s\"\n    mem_limit: %s\n", limits.CPUs, limits.Memory)
			if swarm {
				limit = fmt.Sprintf("      resources: {limits: {cpus: \"%s\", memory: %s}}\n", limits.CPUs, limits.Memory)
			} else {
				want = append(want, "    security_opt: [\"no-new-privileges:true\"]\n")
			}
			want = append(want, limit)
			for _, w := range want {
				if strings.Count(lines, w) != 1 {
					t.Errorf("swarm %v: service %s: want %q once in\n%s", swarm, name, w, lines)
				}
			}
			// Nothing gives back what was taken.
			for _, never := range []string{"cap_add", "privileged", "security_opt: [\"no-new-privileges:false", "tmpfs", "read_only: false", "userns_mode", "pid:"} {
				if strings.Contains(lines, never) {
					t.Errorf("swarm %v: service %s has %q", swarm, name, never)
				}
			}
			if swarm && strings.Contains(lines, "security_opt") {
				t.Errorf("service %s: security_opt in the stack, which docker stack deploy ignores", name)
			}
		}
		// Only the proxy is not User, and only it holds the engine.
		if strings.Count(file, "user: ") != len(svcs) || strings.Count(file, `user: "`+User+`"`) != len(svcs)-1 {
			t.Errorf("swarm %v: users: %d, of them %s %d", swarm, strings.Count(file, "user: "), User, strings.Count(file, `user: "`+User+`"`))
		}
	}
	// The proxy's socket: made in User's group, never chowned (it has not
	// the capability).
	if !strings.Contains(string(composeFile), `"--socket-gid", "10001"`) || strings.Contains(string(composeFile), "--socket-uid") {
		t.Error("the proxy's command must name --socket-gid 10001 and no --socket-uid")
	}
}

// TestEveryServiceRotatesItsLogs: every service of the compose file and
// of the stack, the docker-proxy included, has the json-file driver with
// a bounded size and count of files, so that no container's log grows
// without end on its host.
func TestEveryServiceRotatesItsLogs(t *testing.T) {
	top := deploy.Default().Uniform(3)
	top.Masters = 5
	services := len(top.Instances()) + top.Masters + 1 // and the docker-proxy
	want := fmt.Sprintf("\n    logging: {driver: json-file, options: {max-size: %q, max-file: %q}}\n", LogMaxSize, LogMaxFiles)
	compose, err := Generate(top, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stack, err := GenerateStack(top, StackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for what, b := range map[string][]byte{"compose file": compose, "stack": stack} {
		if got := strings.Count(string(b), want); got != services {
			t.Errorf("the %s rotates the logs of %d services; want all %d", what, got, services)
		}
	}
}
