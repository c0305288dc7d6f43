package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/services/reference"
	"github.com/wololo/wololo/services/schema"
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
	for i, w := range [][]byte{want.Q1, want.Q2, want.Q3, want.Q4} {
		name := schema.ResultFiles[i]
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, w) {
			t.Errorf("%s differs from the reference\n got: %.300q\nwant: %.300q", name, got, w)
		}
		if bytes.Count(w, []byte("\n")) < 2 {
			t.Errorf("reference %s has no rows: the dataset does not exercise it", name)
		}
	}
}

// docCommand is one `$ ` command of a console block in the docs, with
// the output the docs show under it.
type docCommand struct {
	line   int    // where the command starts in the file
	cmd    string // continuation lines joined
	output string
}

// consoleCommands extracts the commands of the ```console blocks of a
// Markdown file: each line starting with "$ " (with its "\"
// continuation lines), and the lines up to the next command as its
// expected output.
func consoleCommands(t *testing.T, file string) []docCommand {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		cmds       []docCommand
		in, cont   bool
		lineNumber int
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lineNumber++
		line := sc.Text()
		switch {
		case !in && strings.HasPrefix(line, "```console"):
			in = true
		case in && strings.HasPrefix(line, "```"):
			in, cont = false, false
		case !in:
		case cont:
			c := &cmds[len(cmds)-1]
			c.cmd += " " + strings.TrimSpace(strings.TrimSuffix(line, "\\"))
			cont = strings.HasSuffix(line, "\\")
		case strings.HasPrefix(line, "$ "):
			cmds = append(cmds, docCommand{line: lineNumber, cmd: strings.TrimSpace(strings.TrimSuffix(line[2:], "\\"))})
			cont = strings.HasSuffix(line, "\\")
		case len(cmds) > 0:
			cmds[len(cmds)-1].output += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// runDocCommands runs the grpcurl commands of a file's console blocks as
// written, in dir, each after the variable assignments before it (TLS=...),
// and checks each against the output the docs show: an "ERROR:" with its
// code, a list of services line by line, or a JSON object whose "role" and
// "instance" are the ones shown. It returns how many grpcurl commands ran.
func runDocCommands(t *testing.T, file, dir string, env []string) int {
	t.Helper()
	var assignments []string
	ran := 0
	code := regexp.MustCompile(`Code: (\w+)`)
	field := regexp.MustCompile(`"(role|instance)": "([^"]*)"`)
	for _, c := range consoleCommands(t, file) {
		if regexp.MustCompile(`^[A-Z_]+=`).MatchString(c.cmd) {
			assignments = append(assignments, c.cmd)
			continue
		}
		if !strings.Contains(c.cmd, "grpcurl") {
			continue
		}
		ran++
		script := strings.Join(append(append([]string(nil), assignments...), c.cmd), "\n")
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		where := filepath.Base(file) + ":" + strconv.Itoa(c.line) + ": " + c.cmd
		t.Logf("%s: %v, %d bytes of output", where, err, len(out))
		want := strings.TrimSpace(c.output)
		switch {
		case strings.HasPrefix(want, "ERROR:"):
			m := code.FindStringSubmatch(want)
			if err == nil || m == nil || !strings.Contains(string(out), m[0]) {
				t.Errorf("%s: %v, want %q:\n%s", where, err, m, out)
			}
		case err != nil:
			t.Errorf("%s: %v\n%s", where, err, out)
		case strings.HasPrefix(want, "{"):
			var obj map[string]any
			if err := json.Unmarshal(out, &obj); err != nil {
				t.Errorf("%s: not JSON: %v\n%s", where, err, out)
				continue
			}
			for _, m := range field.FindAllStringSubmatch(want, 2) {
				if obj[m[1]] != m[2] {
					t.Errorf("%s: %s %v, the docs show %q", where, m[1], obj[m[1]], m[2])
				}
			}
		default:
			if got := strings.TrimSpace(string(out)); got != want {
				t.Errorf("%s:\n%s\nthe docs show:\n%s", where, got, want)
			}
		}
	}
	return ran
}
