package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodes runs the built binary: a wrong command line exits 2 with a
// message naming the problem, -h exits 0, for every command.
func TestExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "wololo")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cases := []struct {
		args []string
		code int
		says string
	}{
		{nil, 2, "usage: wololo <command>"},
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
