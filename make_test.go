package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeTools makes a directory of stand-ins for docker and go that record
// their arguments in calls (one line per call) and succeed: docker says
// that the engine is in no swarm. Put first on PATH, they let `make -n`
// follow the recursive makes of a target without touching the engine or
// running a test.
func fakeTools(t *testing.T) (dir, calls string) {
	t.Helper()
	dir = t.TempDir()
	calls = filepath.Join(dir, "calls")
	scripts := map[string]string{
		"docker": `echo "docker $*" >> ` + calls + `
case "$*" in *LocalNodeState*) echo inactive;; esac
exit 0
`,
		"go": `echo "go $*" >> ` + calls + `
exit 0
`,
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, calls
}

// TestMakeTestChangesTheMachineOnlyWhenAsked: `make test` installs
// chromium with apt-get and runs the Swarm test (which may make a swarm on
// the engine) only with WOLOLO_TEST_MACHINE=1, as .ci/run asks and `make
// test-ci` does; without it, it says what it skips. The docker end-to-end
// test runs either way. Checked with `make -n` and stand-ins for docker and
// go, so that nothing runs.
func TestMakeTestChangesTheMachineOnlyWhenAsked(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	for _, c := range []struct {
		name    string
		args    []string
		machine bool
	}{
		{"make test", []string{"test"}, false},
		{"WOLOLO_TEST_MACHINE=1 make test", []string{"test", "WOLOLO_TEST_MACHINE=1"}, true},
		{"make test-ci", []string{"test-ci"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fakes, calls := fakeTools(t)
			cmd := exec.Command("make", append([]string{"-n", "--no-print-directory"}, c.args...)...)
			for _, kv := range os.Environ() {
				name, _, _ := strings.Cut(kv, "=")
				if name == "WOLOLO_TEST_MACHINE" || slices.Contains([]string{"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"}, name) {
					continue
				}
				if name == "PATH" {
					kv = "PATH=" + fakes + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
				}
				cmd.Env = append(cmd.Env, kv)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("make -n %s: %v\n%s", strings.Join(c.args, " "), err, out)
			}
			recorded, _ := os.ReadFile(calls)
			apt := strings.Contains(string(out), "apt-get install")
			swarm := strings.Contains(string(recorded), "TestSwarmE2E")
			if apt != c.machine || swarm != c.machine {
				t.Errorf("%s: installs chromium %v, runs the swarm test %v; want %v\nmake -n:\n%s\ncalls:\n%s", c.name, apt, swarm, c.machine, out, recorded)
			}
			if !strings.Contains(string(recorded), "TestDockerE2E") {
				t.Errorf("%s: the docker end-to-end test is not run:\n%s", c.name, recorded)
			}
			if !c.machine {
				for _, says := range []string{"e2e-swarm: SKIPPED", "WOLOLO_TEST_MACHINE=1"} {
					if !strings.Contains(string(out), says) {
						t.Errorf("%s does not say %q:\n%s", c.name, says, out)
					}
				}
			}
		})
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil || !strings.Contains(string(ci), "WOLOLO_TEST_MACHINE=1") || !strings.Contains(string(ci), "make test") {
		t.Errorf(".ci/run does not run make test with WOLOLO_TEST_MACHINE=1: %v\n%s", err, ci)
	}
}

// TestTestsLeaveNoDatasets: the packages whose tests generate datasets
// shared by the whole test binary remove them when it ends (about 15 MB a
// run otherwise): their tests run with a temporary directory of their own,
// which must be empty after.
func TestTestsLeaveNoDatasets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	tmp, gotmp := t.TempDir(), t.TempDir()
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestSharedDatasets$", "./services/e2e/")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "GOTMPDIR="+gotmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Errorf("left in the temporary directory: %s", strings.Join(names, " "))
	}
}
