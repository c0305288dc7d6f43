package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/tools/docblocks"
)

// The README's shell blocks are run as written (TestReadmeCommands), so
// that the README cannot drift from what the commands do. A command that
// cannot run inside `go test` is listed here with the test or script that
// runs it, and that file must say so (runs is a string it contains); any
// other command of a ```sh block is run.
var readmeElsewhere = []struct {
	command string // as the README writes it, comment dropped
	file    string // the test or script that runs it, from the checkout's root
	runs    string // what that file contains where it runs it
	why     string
}{
	{"make test", ".ci/run", "make test", "it runs every test, this one among them (CI runs it through .ci/run)"},
	{"make up", "tools/chaos/docker_e2e_test.go", `mustMake(t, root, "up")`, "a Docker engine and the default ports: TestDockerE2E under make e2e-docker"},
	{"make submit MATCHES=data/demo/matches.csv PLAYERS=data/demo/match_players.csv OUT=out/docker", "tools/chaos/docker_e2e_test.go", `mustMake(t, root, "submit", "MATCHES="`, "the compose deployment of make up: TestDockerE2E"},
	{"make down", "tools/chaos/docker_e2e_test.go", `runMake(t, root, "down")`, "the compose deployment of make up: TestDockerE2E"},
}

// readmeBlocks are the commands of the README's ```sh blocks.
func readmeBlocks(t *testing.T) [][]docblocks.Command {
	t.Helper()
	return docblocks.Shell(readFile(t, "README.md"))
}

// readFile is a file's text.
func readFile(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestReadmeCommandsAccounted: every command of the README is either run
// by TestReadmeCommands (every command of a ```sh block that
// readmeElsewhere does not list) or listed in readmeElsewhere, whose every
// entry is still in the README and run where it says; and the README has
// no other block a shell command could hide in (```bash, ```console, a
// block without a language): its fenced blocks are ```sh or one of
// readmeNotShell.
func TestReadmeCommandsAccounted(t *testing.T) {
	var all []string
	for _, b := range readmeBlocks(t) {
		for _, c := range b {
			all = append(all, c.Text)
		}
	}
	if len(all) < 5 {
		t.Fatalf("README.md: %d commands in ```sh blocks; the extraction is broken", len(all))
	}
	for _, e := range readmeElsewhere {
		if !slices.Contains(all, e.command) {
			t.Errorf("readmeElsewhere lists %q, which the README no longer has: remove it", e.command)
		}
		src, err := os.ReadFile(e.file)
		if err != nil || !strings.Contains(string(src), e.runs) {
			t.Errorf("%q is said to be run by %s (%q), which does not run it: %v", e.command, e.file, e.runs, err)
		}
	}
	langs, lines := docblocks.Fences(readFile(t, "README.md"))
	for i, lang := range langs {
		if lang != "sh" && !slices.Contains(readmeNotShell, lang) {
			t.Errorf("README.md:%d: a ```%s block: shell commands go in ```sh blocks (which TestReadmeCommands runs), other text in one of %v", lines[i], lang, readmeNotShell)
		}
	}
}

// readmeNotShell are the languages of the README's fenced blocks that hold
// no commands.
var readmeNotShell = []string{"json", "yaml", "text", "csv", "proto", "go"}

// elsewhere is the file that runs a README command outside go test, and
// why there, or "".
func elsewhere(command string) (file, why string) {
	for _, e := range readmeElsewhere {
		if e.command == command {
			return e.file, e.why
		}
	}
	return "", ""
}

// runStyle is how TestReadmeCommands runs a command: "background" (it
// ends with &), "interrupt" (`bin/wololo top`, which redraws until
// interrupted), "builtin" (a shell builtin, with no timeout around it) or
// "run" (under a timeout); a make target is run too, the scratch
// directory having the checkout's Makefile and sources.
func runStyle(command string) string {
	fields := strings.Fields(command)
	switch {
	case strings.HasSuffix(command, "&"):
		return "background"
	case len(fields) > 1 && fields[0] == "bin/wololo" && fields[1] == "top" && !slices.Contains(fields, "--json"):
		return "interrupt"
	case len(fields) > 0 && slices.Contains([]string{"kill", "cd", "export", "wait", "echo", "sleep"}, fields[0]):
		return "builtin"
	}
	return "run"
}

// TestReadmeCommands runs the README's ```sh blocks, in order, as written,
// in a scratch directory that looks like a fresh checkout after `make
// build`: the checkout's sources and Makefile linked in, the built binary
// at bin/wololo, and the demo dataset already generated small (2,000
// matches) at data/demo (and at path/, which stands for "your own files").
// Each command has a timeout; a background one (`bin/wololo local &`) is
// waited for as its comment says ("cluster up" when ready), as a reader
// waits before the next line, and stopped by the block itself (`kill
// %1`), and the block fails if anything still holds the topology's ports
// a while after; `bin/wololo top`, which
// on a non-terminal redraws until interrupted, gets SIGINT after a few
// seconds and must exit 130 (or 0). The commands of readmeElsewhere are
// left to the test that runs them. A block that runs `wololo local` is
// skipped, saying so, when the default ports are taken.
func TestReadmeCommands(t *testing.T) {
	bin := wololoBinary(t)
	for _, tool := range []string{"bash", "make", "timeout"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	scratch := scratchCheckout(t, root, bin)
	for _, block := range readmeBlocks(t) {
		if len(block) == 0 {
			continue
		}
		name := fmt.Sprintf("README.md:%d", block[0].Line)
		t.Run(name, func(t *testing.T) {
			var script []string
			local := false
			for _, c := range block {
				if f, why := elsewhere(c.Text); f != "" {
					t.Logf("README.md:%d: %q is run by %s: %s", c.Line, c.Text, f, why)
					continue
				}
				local = local || strings.HasPrefix(c.Text, "bin/wololo local")
				script = append(script, shellStep(c))
			}
			if len(script) == 0 {
				return
			}
			if local {
				if port, err := takenPort(); err != nil {
					t.Skipf("the README's local cluster uses the default ports 7100..: port %d is taken (%v); stop what holds it to run this block", port, err)
				}
			}
			runScript(t, scratch, name, script)
			if local {
				testkit.WaitForNil(t, "the ports of the cluster the block stopped to be free", 20*time.Second, func() error {
					port, err := takenPort()
					if err != nil {
						return fmt.Errorf("port %d: %w", port, err)
					}
					return nil
				})
			}
		})
	}
}

// readyLine finds, in a background command's comment, what it prints
// once ready: `"cluster up" when ready`.
var readyLine = regexp.MustCompile(`"([^"]+)" when ready`)

// shellStep is a README command as a step of a bash script: under a
// timeout, its exit status checked and named with its line.
func shellStep(c docblocks.Command) string {
	where := strconv.Quote(fmt.Sprintf("README.md:%d: %s", c.Line, c.Text))
	check := func(ok string) string {
		return fmt.Sprintf("rc=$?; if %s; then echo %s\": exit $rc\" >&2; exit 1; fi", ok, where)
	}
	switch runStyle(c.Text) {
	case "background":
		// A command that says in its comment what it prints "when ready"
		// is waited for as a reader of the README waits: until its
		// output says so.
		m := readyLine.FindStringSubmatch(c.Comment)
		if m == nil {
			return fmt.Sprintf("echo %s\ntimeout -k 10s 10m %s", where, c.Text)
		}
		log := fmt.Sprintf(".readme-%d.log", c.Line)
		return fmt.Sprintf("echo %s\ntimeout -k 10s 10m %s >%s 2>&1 &\n", where, strings.TrimSpace(strings.TrimSuffix(c.Text, "&")), log) +
			fmt.Sprintf("trap 'cat %s; for p in $(jobs -p); do kill $p 2>/dev/null; done; wait' EXIT\n", log) +
			fmt.Sprintf("for i in $(seq 1 600); do grep -q %s %s && break; [ -z \"$(jobs -pr)\" ] && break; sleep 0.1; done\n", strconv.Quote(m[1]), log) +
			fmt.Sprintf("grep -q %s %s || { echo %s\": never said %s\" >&2; exit 1; }", strconv.Quote(m[1]), log, where, m[1])
	case "interrupt":
		return fmt.Sprintf("echo %s\ntimeout --preserve-status -s INT 4s %s\n%s", where, c.Text, check(`[ $rc -ne 130 ] && [ $rc -ne 0 ]`))
	case "builtin":
		return fmt.Sprintf("echo %s\n%s\n%s", where, c.Text, check(`[ $rc -ne 0 ]`))
	default:
		return fmt.Sprintf("echo %s\ntimeout -k 10s 5m %s\n%s", where, c.Text, check(`[ $rc -ne 0 ]`))
	}
}

// runScript runs the steps in one bash (so that `&` and `kill %1` mean
// what they say), then waits up to a minute for what the block left in the
// background; on failure, or on the way out, what is left is stopped.
func runScript(t *testing.T, dir, name string, steps []string) {
	t.Helper()
	script := "set -u\ntrap 'for p in $(jobs -p); do kill $p 2>/dev/null; done; wait' EXIT\n" +
		strings.Join(steps, "\n") + "\n" +
		"for i in $(seq 1 240); do [ -z \"$(jobs -pr)\" ] && break; sleep 0.25; done\n" +
		"if [ -n \"$(jobs -pr)\" ]; then echo 'still running a minute after the block ended:' >&2; jobs >&2; exit 1; fi\n"
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = readmeEnv(dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s: %s\n%s", name, time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("%s: %v (output above)", name, err)
	}
}

// readmeEnv is the environment of a fresh shell: none of the variables
// that would point the client elsewhere (WOLOLO_*), nor the make that may
// run this test, and bin/wololo's directory not on PATH.
func readmeEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "WOLOLO_") || slices.Contains([]string{"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PWD"}, name) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PWD="+dir)
}

// scratchCheckout makes a directory that stands for a fresh checkout
// after `make build`: every top-level entry of the checkout but its
// outputs (bin, data, out) and dot files linked in, the binary copied to
// bin/wololo, the demo dataset generated small at data/demo, and path/
// (the README's "your own files") linked to it.
func scratchCheckout(t *testing.T, root, bin string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || slices.Contains([]string{"bin", "data", "out"}, e.Name()) {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "wololo"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	gen := exec.Command(filepath.Join(dir, "bin", "wololo"), "datagen", "--matches", "2000", "--out", "data/demo")
	gen.Dir = dir
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("datagen: %v\n%s", err, out)
	}
	if err := os.Symlink(filepath.Join("data", "demo"), filepath.Join(dir, "path")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// takenPort is the first port of the default topology on 127.0.0.1 (the
// public one, every instance's and master's internal and admin ports)
// that cannot be listened on, with the error, or 0 and nil.
func takenPort() (int, error) {
	top := deploy.Default()
	ports := []int{top.PublicPort()}
	for _, in := range append(top.Instances(), top.MasterInstances()...) {
		ports = append(ports, top.Port(in), top.AdminPort(in))
	}
	for _, p := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return p, err
		}
		l.Close()
	}
	return 0, nil
}

// TestDocLinks: every relative link of README.md and docs/*.md names a
// file that exists, and its #anchor (or a link that is only an anchor) a
// heading of that file, by GitHub's rules for heading ids.
func TestDocLinks(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v, %d files", err, len(docs))
	}
	checked := 0
	for _, file := range append([]string{"README.md"}, docs...) {
		for _, l := range docblocks.Links(readFile(t, file)) {
			if !docblocks.IsRelative(l.Target) {
				continue
			}
			checked++
			where := fmt.Sprintf("%s:%d: %s", file, l.Line, l.Target)
			path, anchor, _ := strings.Cut(l.Target, "#")
			resolved := file
			if path != "" {
				resolved = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(resolved, ".md") {
				t.Errorf("%s: an anchor into a file that is not Markdown", where)
			} else if ids := docblocks.HeadingIDs(readFile(t, resolved)); !slices.Contains(ids, anchor) {
				t.Errorf("%s: %s has no heading #%s (its headings: %s)", where, resolved, anchor, strings.Join(ids, " "))
			}
		}
	}
	if checked < 10 {
		t.Errorf("%d relative links checked; the extraction is broken", checked)
	}
}

// TestDocsGrpcurlLocal runs, as written, the grpcurl commands the docs
// give against `wololo local` (docs/operations.md's sessions and its and
// docs/security.md's ```sh lines): in a scratch checkout with
// bin/tools/grpcurl (make grpcurl; make test installs it), a local
// cluster on the default ports and the job "nightly" kept at the gateway,
// as they assume. Skipped, saying so, without grpcurl or with the ports
// taken.
func TestDocsGrpcurlLocal(t *testing.T) {
	bin := wololoBinary(t)
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "tools", "grpcurl")); err != nil {
		t.Skipf("no bin/tools/grpcurl (make grpcurl installs it): %v", err)
	}
	if port, err := takenPort(); err != nil {
		t.Skipf("the docs' local cluster uses the default ports 7100..: port %d is taken (%v)", port, err)
	}
	scratch := scratchCheckout(t, root, bin)
	if err := os.Symlink(filepath.Join(root, "bin", "tools"), filepath.Join(scratch, "bin", "tools")); err != nil {
		t.Fatal(err)
	}
	wololo := func(args ...string) *exec.Cmd {
		cmd := exec.Command("bin/wololo", args...)
		cmd.Dir, cmd.Env = scratch, readmeEnv(scratch)
		return cmd
	}
	local := wololo("local")
	var logs strings.Builder
	local.Stdout, local.Stderr = &logs, &logs
	local.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := local.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = local.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- local.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-local.Process.Pid, syscall.SIGKILL)
			<-done
			t.Errorf("wololo local did not stop within 30s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("wololo local:\n%s", logs.String())
		}
	}()
	testkit.WaitForNil(t, "the client's credentials in data/local/tls", 60*time.Second, func() error {
		_, err := os.Stat(filepath.Join(scratch, "data", "local", "tls", "client.key"))
		return err
	})
	if out, err := wololo("health", "--addr", "127.0.0.1:7100", "--as", "client", "--tls-dir", "data/local/tls", "--timeout", "30s").CombinedOutput(); err != nil {
		t.Fatalf("wololo health: %v\n%s", err, out)
	}
	if out, err := wololo("client", "submit", "--job", "nightly", "--keep", "--matches", "data/demo/matches.csv", "--players", "data/demo/match_players.csv", "--out", "out/nightly").CombinedOutput(); err != nil {
		t.Fatalf("submit: %v\n%s", err, out)
	}
	run := func(where, script string) ([]byte, error) {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir, cmd.Env = scratch, readmeEnv(scratch)
		out, err := cmd.CombinedOutput()
		t.Logf("%s: %v, %d bytes of output", where, err, len(out))
		return out, err
	}
	ran := 0
	var assignments []string
	for _, s := range docblocks.Console(readFile(t, "docs/operations.md")) {
		if docblocks.IsAssignment(s.Command) {
			assignments = append(assignments, s.Command)
			continue
		}
		if !strings.Contains(s.Command, "grpcurl") {
			continue
		}
		ran++
		where := fmt.Sprintf("docs/operations.md:%d: %s", s.Line, s.Command)
		out, err := run(where, strings.Join(append(slices.Clone(assignments), s.Command), "\n"))
		if err := docblocks.Check(s.Output, out, err); err != nil {
			t.Errorf("%s: %v", where, err)
		}
	}
	for _, file := range []string{"docs/operations.md", "docs/security.md"} {
		for _, block := range docblocks.Shell(readFile(t, file)) {
			for _, c := range block {
				if !strings.Contains(c.Text, "grpcurl") {
					continue
				}
				ran++
				where := fmt.Sprintf("%s:%d: %s", file, c.Line, c.Text)
				if out, err := run(where, c.Text); err != nil {
					t.Errorf("%s: %v\n%s", where, err, out)
				}
			}
		}
	}
	if ran < 7 {
		t.Errorf("%d grpcurl commands of the docs ran, want 7: the extraction is broken", ran)
	}
}
