package main

import (
	"encoding/json"
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/cmdline/version"
)

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestMain removes the binary the tests built after them.
func TestMain(m *testing.M) { testkit.Main(m) }

// gitHead is the checkout's commit, or "" without git.
func gitHead() string {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(head))
}

// wololoBinary is the binary built as `make build` builds it, or skips the
// test with -short.
func wololoBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	return testkit.WololoBinary(t)
}

// TestVersion: `wololo version --json` of a build of this checkout names
// its commit (the toolchain's stamp, or the linker's where the toolchain
// stamps none) and the module.
func TestVersion(t *testing.T) {
	bin := wololoBinary(t)
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var in version.Info
	if err := json.Unmarshal(out, &in); err != nil {
		t.Fatalf("version --json printed %q: %v", out, err)
	}
	if in.Module != "github.com/wololo/wololo" || in.Version == "" || !strings.HasPrefix(in.Go, "go") || in.Platform == "" {
		t.Errorf("version --json: %+v", in)
	}
	if head := gitHead(); head != "" && in.Commit != head {
		t.Errorf("version --json: commit %q, want the checkout's %s", in.Commit, head)
	}
}

// TestExitCodes runs the built binary: a wrong command line exits 2 with a
// message naming the problem, -h exits 0, for every command.
func TestExitCodes(t *testing.T) {
	bin := wololoBinary(t)
	closed := closedAddr(t)
	cases := []struct {
		args []string
		code int
		says string
	}{
		{nil, 2, "usage: wololo <command>"},
		{[]string{"help"}, 0, "130  interrupted"},
		{[]string{"version"}, 0, "  commit  "},
		{[]string{"--version"}, 0, "  go      go"},
		{[]string{"--version", "--json"}, 0, `"commit":`},
		{[]string{"version", "stray"}, 2, `unexpected argument "stray"`},
		{[]string{"client", "status", "--job", "j", "--insecure", "--server", closed, "--connect-timeout", "300ms"}, 5, "cannot reach the gateway at " + closed},
		{[]string{"compose", "--log-json"}, 0, ""},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"help"}, 0, ""},
		{[]string{"client"}, 2, "a command is required"},
		{[]string{"client", "frobnicate"}, 2, "unknown client command"},
		{[]string{"client", "status"}, 2, "--job is required"},
		{[]string{"client", "results", "--job", "j"}, 2, "--out is required"},
		{[]string{"client", "submit", "--matches", "m"}, 2, "--players is required"},
		{[]string{"worker"}, 2, "--instance is required"},
		{[]string{"health"}, 2, "--addr is required"},
		{[]string{"reference", "--matches", "m"}, 2, "--players is required"},
		{[]string{"explain"}, 0, "physical plan on gateway[1] and shard[2]:"},
		{[]string{"explain", "--query", "e=/dev/null"}, 2, "query e (/dev/null): 1:1: syntax"},
		{[]string{"explain", "--query", "q"}, 2, "want NAME=FILE"},
		{[]string{"explain", "-h"}, 0, "usage: wololo explain"},
		{[]string{"demo", "stray"}, 2, `unexpected argument "stray"`},
		{[]string{"demo", "--matches", "m"}, 2, "give both --matches and --players"},
		{[]string{"datagen", "--matches", "0"}, 2, "--matches must be a positive number"},
		{[]string{"gateway", "--nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"master", "--id", "x"}, 2, "invalid value"},
		{[]string{"compose", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"local", "run", "--matches", "m"}, 2, "--players is required"},
		{[]string{"chaos", "local", "--kills", "many"}, 2, "invalid value"},
		{[]string{"bench", "--bogus"}, 2, "not defined"},
		{[]string{"demo", "-h"}, 0, ""},
		{[]string{"client", "submit", "-h"}, 0, ""},
		{[]string{"datagen", "-h"}, 0, ""},
	}
	for _, c := range cases {
		t.Run(strings.Join(append([]string{"wololo"}, c.args...), " "), func(t *testing.T) {
			out, err := exec.Command(bin, c.args...).CombinedOutput()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || !strings.Contains(string(out), c.says) {
				t.Fatalf("exit %d, want %d; output should say %q:\n%s", code, c.code, c.says, out)
			}
		})
	}
}
