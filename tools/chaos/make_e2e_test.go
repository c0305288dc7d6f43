package chaos

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/tools/docblocks"
)

// The Docker and Swarm end-to-end tests go through the Makefile targets a
// user runs (make up, make submit, make down; make swarm-up, swarm-submit,
// swarm-down), so that a broken target fails them: these are the helpers.

// repoRoot is the checkout's root, where the Makefile is.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// runMake runs `make -C root target VAR=value...` as a user would, with
// none of the make that runs the test in its environment (MAKEFLAGS
// would hand the sub-make the outer one's variables), and returns its
// combined output and error.
func runMake(t *testing.T, root, target string, vars ...string) (string, error) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-C", root, target}, vars...)...)
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	t.Logf("make %s %s: %s, %v\n%s", target, strings.Join(vars, " "), time.Since(start).Round(time.Millisecond), err, strings.TrimSpace(string(out)))
	return string(out), err
}

// mustMake is runMake that fails the test when the target fails.
func mustMake(t *testing.T, root, target string, vars ...string) string {
	t.Helper()
	out, err := runMake(t, root, target, vars...)
	if err != nil {
		t.Fatalf("make %s %s: %v", target, strings.Join(vars, " "), err)
	}
	return out
}

// compareWithReference checks that out holds the four result files
// byte-equal to the reference evaluator's answers on the two inputs.
func compareWithReference(t *testing.T, matches, players, out string) {
	t.Helper()
	want, err := reference.EvaluateFiles(matches, players)
	if err != nil {
		t.Fatal(err)
	}
	testkit.SameFiles(t, out, want.Files())
	for name, w := range want.Files() {
		if bytes.Count(w, []byte("\n")) < 2 {
			t.Errorf("reference %s has no rows: the dataset does not exercise it", name)
		}
	}
}

// runDocCommands runs the grpcurl commands of a file's ```console blocks
// as written, in dir, each after the variable assignments before it
// (TLS=...), and checks each against the output the docs show
// (docblocks.Check). It returns how many grpcurl commands ran.
func runDocCommands(t *testing.T, file, dir string, env []string) int {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var assignments []string
	ran := 0
	for _, c := range docblocks.Console(string(text)) {
		if docblocks.IsAssignment(c.Command) {
			assignments = append(assignments, c.Command)
			continue
		}
		if !strings.Contains(c.Command, "grpcurl") {
			continue
		}
		ran++
		cmd := exec.Command("bash", "-c", strings.Join(append(append([]string(nil), assignments...), c.Command), "\n"))
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		where := filepath.Base(file) + ":" + strconv.Itoa(c.Line) + ": " + c.Command
		t.Logf("%s: %v, %d bytes of output", where, err, len(out))
		if err := docblocks.Check(c.Output, out, err); err != nil {
			t.Errorf("%s: %v", where, err)
		}
	}
	return ran
}
