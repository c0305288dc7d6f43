package compose

import (
	"bytes"
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
		`user: "10001:10001"`:                             5, // the masters run unprivileged
		`"--runtime", "docker", "--docker-project", "p1"`: 5,
		"WOLOLO_TOPOLOGY: *topology":                      n, // not the default topology: it travels along
		`ports: ["7100:7100", "127.0.0.1:8101:8101"]`:     1, // the public port, not the internal 7101; the admin port on loopback
		`"7101`:                       0,
		`"--tls-dir", "/run/secrets"`: 2 * n, // the process and its health check
		`secrets: ["ca.pem", `:        n,
	} {
		if got := strings.Count(s, what); got != want {
			t.Errorf("%q appears %d times, want %d", what, got, want)
		}
	}
	for _, in := range append(top.Instances(), top.MasterInstances()...) {
		// Each service holds the CA and its own key, and no one else's.
		own := "    secrets: " + flow([]string{"ca.pem", in.Name() + ".pem", in.Name() + ".key"}) + "\n"
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
	if _, err := applyReplicas(deploy.Default(), "q3-joiner=0"); err == nil {
		t.Error("zero replicas accepted")
	}
	if _, err := applyReplicas(deploy.Default(), "nosuch=2"); err == nil {
		t.Error("an unknown stage accepted")
	}
	top, err := applyReplicas(deploy.Default(), "*=3, q3-joiner=4")
	if l := top.Logical(); err != nil || l.Replicas("q2-grouper") != 3 || l.Replicas("q3-joiner") != 4 || top.Replicas("gateway") != 1 || top.Replicas("shard") != 3 {
		t.Errorf("applyReplicas: %v %+v", err, top.Stages)
	}
}
