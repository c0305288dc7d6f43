package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
)

// freeBasePort finds a run of free loopback ports for a topology.
func freeBasePort(t *testing.T, n int) int {
	t.Helper()
	for base := 21000; base < 60000; base += 97 {
		ok := true
		for p := base; p < base+n && ok; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// TestProcessesRunAJobAndStopOnSIGTERM runs the graph as real OS processes
// (`wololo gateway`, `wololo worker`) with the certificates `wololo certs`
// made, submits a job with the CLI, compares
// the four files, then stops every process with SIGTERM and expects each to
// exit 0 promptly.
func TestProcessesRunAJobAndStopOnSIGTERM(t *testing.T) {
	d := testDatasets(t)[0]
	bin := testkit.WololoBinary(t)
	top := deploy.Default()
	top.BasePort = freeBasePort(t, 1+len(top.Instances()))
	topoFile := filepath.Join(t.TempDir(), "topology.json")
	b, _ := json.Marshal(top)
	if err := os.WriteFile(topoFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tlsDir := filepath.Join(t.TempDir(), "tls")
	if out, err := exec.Command(bin, "certs", "--dir", tlsDir, "--topology", topoFile).CombinedOutput(); err != nil {
		t.Fatalf("wololo certs: %v\n%s", err, out)
	}
	var procs []*exec.Cmd
	for _, in := range top.Instances() {
		args := []string{"worker", "--instance", in.Name()}
		if in.Stage == top.Gateway().Name {
			args = []string{"gateway"}
		}
		args = append(args, "--topology", topoFile, "--log-level", "warn", "--listen", fmt.Sprintf("127.0.0.1:%d", top.Port(in)), "--admin", "none", "--tls-dir", tlsDir)
		if in.Stage == top.Gateway().Name {
			args = append(args, "--public", fmt.Sprintf("127.0.0.1:%d", top.PublicPort()))
		}
		cmd := exec.Command(bin, args...)
		cmd.Stderr = testkit.Writer(t)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.Process.Kill()
		}
	})
	gateway := fmt.Sprintf("127.0.0.1:%d", top.PublicPort())
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "client", "submit", "--tls-dir", tlsDir, "--server", gateway, "--matches", d.matches, "--players", d.players, "--out", out)
	res, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client submit: %v\n%s", err, res)
	}
	if !strings.Contains(string(res), "rows read") {
		t.Errorf("client printed no report:\n%s", res)
	}
	compareOutputs(t, d, out)

	for _, p := range procs {
		p.Process.Signal(syscall.SIGTERM)
	}
	for i, p := range procs {
		done := make(chan error, 1)
		go func() { done <- p.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s exited with %v after SIGTERM", top.Instances()[i].Name(), err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s did not stop within 10 s of SIGTERM", top.Instances()[i].Name())
		}
	}
}

// TestClientCLIExitCodes checks the CLI's refusals end in a non-zero exit
// and a message that says what is wrong.
func TestClientCLIExitCodes(t *testing.T) {
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[0]
	bad := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(bad, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	dup := write("dup.csv", "token,ladder,mirror,average_rating,map,server,duration,map\n")
	long := write("long.csv", "token,"+strings.Repeat("x", 2<<20)+"\n")
	garbage := write("garbage.csv", "\x00\xff\xfe\x01binary\x02\n\x03")
	submit := func(matches, players string) []string {
		return []string{"client", "submit", "--insecure", "--server", "127.0.0.1:1", "--matches", matches, "--players", players, "--out", t.TempDir()}
	}
	cases := []struct {
		name string
		args []string
		want string
		code int // the exit status (README: CLI conventions)
	}{
		{"a repeated column a query reads", submit(dup, d.players), `column map: table matches has two columns named map`, 1},
		{"a header over the limit", submit(long, d.players), "the matches file: " + long + ": the header row is longer than", 1},
		{"binary garbage", submit(garbage, d.players), `matches.csv: no column "average_rating" (read by query q1 at`, 1},
		{"the files swapped", submit(d.players, d.matches), `matches.csv: no column "average_rating" (read by query q1 at`, 1},
		{"missing file", []string{"client", "submit", "--matches", "/nonexistent/m.csv", "--players", d.players, "--out", t.TempDir()}, "/nonexistent/m.csv", 1},
		{"missing flag", []string{"client", "submit", "--players", d.players, "--out", t.TempDir()}, "--matches is required", 2},
		{"no credentials", []string{"client", "submit", "--tls-dir", t.TempDir(), "--matches", d.matches, "--players", d.players, "--out", t.TempDir()}, "no CA certificate in", 1},
		{"unreachable", []string{"client", "submit", "--insecure", "--server", "127.0.0.1:1", "--connect-timeout", "1s", "--matches", d.matches, "--players", d.players, "--out", t.TempDir()}, "cannot reach the gateway at 127.0.0.1:1 within 1s", 5},
		{"status, gateway down", []string{"client", "status", "--insecure", "--server", "127.0.0.1:1", "--connect-timeout", "1s", "--job", "j"}, "cannot reach the gateway at 127.0.0.1:1 within 1s", 5},
		{"watch, gateway down", []string{"client", "watch", "--insecure", "--server", "127.0.0.1:1", "--connect-timeout", "1s", "--job", "j"}, "cannot reach the gateway at 127.0.0.1:1 within 1s", 5},
		{"results, gateway down", []string{"client", "results", "--insecure", "--server", "127.0.0.1:1", "--connect-timeout", "1s", "--job", "j", "--out", t.TempDir()}, "cannot reach the gateway at 127.0.0.1:1 within 1s", 5},
		{"submit, --out not writable", []string{"client", "submit", "--insecure", "--server", "127.0.0.1:1", "--matches", d.matches, "--players", d.players, "--out", "/dev/null/out"}, "output directory", 1},
		{"results, --out not writable", []string{"client", "results", "--insecure", "--server", "127.0.0.1:1", "--job", "j", "--out", "/dev/null/out"}, "output directory", 1},
		{"submit, --max-malformed not a share", append(submit(d.matches, d.players), "--max-malformed", "1.5"), "--max-malformed 1.5: a share from 0 (no malformed record) to 1 (no limit)", 2},
		{"demo, --max-malformed not a share", []string{"demo", "--max-malformed", "-0.1"}, "--max-malformed -0.1: a share from 0", 2},
		{"gateway, --max-malformed not a share", []string{"gateway", "--instance", "gateway-0", "--max-malformed", "7"}, "--max-malformed 7: a share from 0", 2},
		{"a stray argument", []string{"client", "status", "--job", "j", "extra"}, `unexpected argument "extra"`, 2},
		{"demo, a stray argument", []string{"demo", "extra"}, `unexpected argument "extra"`, 2},
		{"unknown command", []string{"frobnicate"}, "unknown command", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Bounded: a command that hangs fails the test instead of
			// wedging it.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, c.args...).CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("still running after 30 s; output:\n%s", out)
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != c.code {
				t.Fatalf("%v, want exit status %d; output:\n%s", err, c.code, out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Fatalf("output does not mention %q:\n%s", c.want, out)
			}
		})
	}
}
