package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
)

// operatorDir writes the cluster's CA certificate and the operator
// credential into a fresh directory, for `wololo top` (--tls-dir).
func operatorDir(t *testing.T, c *node.Cluster) string {
	t.Helper()
	dir := clientDir(t, c, "unused")
	if _, err := c.CA.Ensure(dir, pki.Spec{ID: pki.Identity{Kind: pki.Operator, Name: "operator"}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ran is what a run of the binary printed, how it ended and how long it
// took.
type ran struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// output is everything the run printed, stdout then stderr.
func (r ran) output() string { return r.stdout + r.stderr }

// runBinary runs bin with args to its end, at most two minutes.
func runBinary(t *testing.T, bin string, args ...string) ran {
	t.Helper()
	return runFor(t, 2*time.Minute, bin, args...)
}

// runFor runs bin with args to its end, failing the test if it runs
// longer than limit or cannot be started.
func runFor(t *testing.T, limit time.Duration, bin string, args ...string) ran {
	t.Helper()
	return runWith(t, limit, nil, bin, args...)
}

// runWith is runFor with stdin as the run's standard input (nil: none).
func runWith(t *testing.T, limit time.Duration, stdin []byte, bin string, args ...string) ran {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%q: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%q still running after %s; stdout:\n%s\nstderr:\n%s", args, limit, stdout.String(), stderr.String())
	}
	return ran{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode(), took}
}

// jsonLines parses every line of out as one JSON object.
func jsonLines(t *testing.T, what, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" && out == "" {
			break
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("%s: a line that is not one JSON object (%v): %q\nall:\n%s", what, err, line, out)
		}
		objs = append(objs, obj)
	}
	return objs
}

// TestClientListsCancelsAndWatchesItsJobs runs the real binary against a
// cluster, as two clients, alice and bob: alice's job submitted with
// --json, its four files byte for byte the reference's; a second job left
// uploading by a SIGINT; `client list` and `list --json` show both, with
// their states, and bob's list none of them; bob cannot cancel alice's
// job; alice cancels hers, after which her list, GetJob and the gateway's
// own view (`top --json`) no longer have it; `watch --json` prints one
// JSON object per line up to done; a job name reused with other files
// makes `submit --json` print the object with error and hint and exit 4;
// and `top` interrupted exits 130.
func TestClientListsCancelsAndWatchesItsJobs(t *testing.T) {
	bin := testkit.WololoBinary(t)
	sets := testDatasets(t)
	small, other, medium := sets[0], sets[1], sets[2]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 2})
	alice, bob := clientDir(t, c, "alice"), clientDir(t, c, "bob")
	// as is a client command run as the client of that credential
	// directory (clientDir names its files after the client).
	as := func(dir string, args ...string) []string {
		name := map[string]string{alice: "alice", bob: "bob"}[dir]
		return append(append([]string{"client"}, args...), "--server", c.GatewayAddr(), "--tls-dir", dir, "--name", name)
	}
	aliceTLS, err := c.ClientTLS("alice")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rpc.NewClient(c.GatewayAddr(), aliceTLS)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	aliceJobs := wololov1.NewJobServiceClient(conn)

	// A job run to its end with --json: the report, and the four files.
	out := t.TempDir()
	r := runBinary(t, bin, as(alice, "submit", "--json", "--quiet", "--keep", "--job", "finished", "--matches", small.matches, "--players", small.players, "--out", out)...)
	if r.code != 0 {
		t.Fatalf("submit --json: exit %d\n%s", r.code, r.stderr)
	}
	compareOutputs(t, small, out)
	if rep := jsonLines(t, "submit --json", r.stdout); len(rep) != 1 || rep[0]["state"] != "done" || rep[0]["error"] != nil {
		t.Fatalf("submit --json: %v", rep)
	}

	// A job left uploading: its client interrupted mid-upload.
	interrupted := exec.Command(bin, as(alice, "submit", "--quiet", "--job", "left", "--matches", medium.matches, "--players", medium.players, "--out", t.TempDir())...)
	var stderr bytes.Buffer
	interrupted.Stderr = &stderr
	if err := interrupted.Start(); err != nil {
		t.Fatal(err)
	}
	uploadedPast(t, aliceJobs, "left", 0)
	if err := interrupted.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = interrupted.Wait()
	if code := interrupted.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("interrupted submit: exit %d\n%s", code, stderr.String())
	}

	// alice's list: both jobs, oldest first.
	r = runBinary(t, bin, as(alice, "list")...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME ") ||
		!strings.HasPrefix(lines[1], "finished ") || !strings.Contains(lines[1], " done ") || !strings.Contains(lines[1], "100.0%") ||
		!strings.HasPrefix(lines[2], "left ") || !strings.Contains(lines[2], " uploading ") {
		t.Fatalf("alice's list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, bin, as(alice, "list", "--json")...)
	jobs := jsonLines(t, "list --json", r.stdout)
	if r.code != 0 || len(jobs) != 2 || jobs[0]["job_id"] != "finished" || jobs[0]["state"] != "done" || jobs[0]["progress"] != 1.0 ||
		jobs[1]["job_id"] != "left" || jobs[1]["state"] != "uploading" || jobs[1]["id"] == "" || jobs[1]["created"] == nil {
		t.Fatalf("alice's list --json: exit %d %v\n%s", r.code, jobs, r.stderr)
	}
	if p := jobs[1]["progress"].(float64); p <= 0 || p >= 1 {
		t.Errorf("the job left uploading is %v of the way", p)
	}

	// bob sees none of alice's jobs, and cannot cancel one.
	if r = runBinary(t, bin, as(bob, "list", "--json")...); r.code != 0 || r.stdout != "" {
		t.Errorf("bob's list --json: exit %d, %q\n%s", r.code, r.stdout, r.stderr)
	}
	if r = runBinary(t, bin, as(bob, "list")...); r.code != 0 || r.stdout != "no jobs\n" {
		t.Errorf("bob's list: exit %d, %q\n%s", r.code, r.stdout, r.stderr)
	}
	if r = runBinary(t, bin, as(bob, "cancel", "left")...); r.code != 4 || !strings.Contains(r.stderr, `no job "left"`) {
		t.Errorf("bob cancels alice's job: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// alice cancels the job she left: gone from her list and the gateway.
	r = runBinary(t, bin, as(alice, "cancel", "left")...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "cancelled job left (it was uploading, ") {
		t.Fatalf("cancel: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, bin, as(alice, "list", "--json")...)
	if jobs := jsonLines(t, "list --json", r.stdout); len(jobs) != 1 || jobs[0]["job_id"] != "finished" {
		t.Errorf("alice's list after the cancel: %v", jobs)
	}
	if _, err := aliceJobs.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "left"}); status.Code(err) != codes.NotFound {
		t.Errorf("GetJob of the cancelled job: %v, want NotFound", err)
	}
	// The operator's view is a snapshot the gateway keeps for up to
	// clusterview.DefaultCacheFor, so the job may still show in the first.
	held := ""
	if !testkit.Await(5*time.Second, func() bool {
		r = runBinary(t, bin, "top", "--json", "--server", c.GatewayAddr(), "--tls-dir", operatorDir(t, c))
		var snap wololov1.ClusterGetResponse
		if err := protojson.Unmarshal([]byte(r.stdout), &snap); err != nil {
			t.Fatalf("top --json: exit %d, %v\n%s", r.code, err, r.stderr)
		}
		held = ""
		for _, j := range snap.GetJobs() {
			if j.GetName() == "left" {
				held = j.String()
			}
		}
		return held == ""
	}) {
		t.Fatalf("the gateway still holds the cancelled job: %v", held)
	}

	// watch --json follows a running job: one object per line, to done.
	// The submit keeps its job: a small job can finish, and its submit
	// release it, before watch asks for it.
	watchedOut := t.TempDir()
	submitted := make(chan ran, 1)
	go func() {
		cmd := exec.Command(bin, as(alice, "submit", "--quiet", "--keep", "--job", "watched", "--matches", small.matches, "--players", small.players, "--out", watchedOut)...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		_ = cmd.Run()
		submitted <- ran{stdout: o.String(), stderr: e.String(), code: cmd.ProcessState.ExitCode()}
	}()
	testkit.WaitForNil(t, "the watched job to be created", time.Minute, func() error {
		_, err := aliceJobs.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "watched"})
		return err
	})
	r = runBinary(t, bin, as(alice, "watch", "--json", "--job", "watched")...)
	states := jsonLines(t, "watch --json", r.stdout)
	if r.code != 0 || len(states) == 0 {
		t.Fatalf("watch --json: exit %d, %d lines\n%s", r.code, len(states), r.stderr)
	}
	for i, s := range states {
		if s["job_id"] != "watched" || s["inputs"] == nil {
			t.Errorf("watch --json line %d: %v", i, s)
		}
	}
	if last := states[len(states)-1]; last["state"] != "done" || last["result_rows"] == nil {
		t.Errorf("watch --json ends with %v, want the done job", last)
	}
	if s := <-submitted; s.code != 0 {
		t.Fatalf("the watched job's submit: exit %d\n%s", s.code, s.stderr)
	}
	compareOutputs(t, small, watchedOut)

	// A name reused with other files: refused, and --json says so.
	r = runBinary(t, bin, as(alice, "submit", "--json", "--quiet", "--job", "finished", "--matches", other.matches, "--players", other.players, "--out", t.TempDir())...)
	rep := jsonLines(t, "refused submit --json", r.stdout)
	if r.code != 4 || len(rep) != 1 || rep[0]["job_id"] != "finished" || !strings.Contains(rep[0]["error"].(string), "was created with another") ||
		!strings.Contains(rep[0]["hint"].(string), "wololo client list") {
		t.Errorf("refused submit --json: exit %d, %v\n%s", r.code, rep, r.stderr)
	}

	// top runs until Ctrl-C, which exits 130.
	top := exec.Command(bin, "top", "--server", c.GatewayAddr(), "--tls-dir", operatorDir(t, c), "--interval", "200ms")
	drawn := make(chan struct{})
	top.Stdout = &signalWriter{match: "wololo top ", seen: drawn}
	var topErr bytes.Buffer
	top.Stderr = &topErr
	if err := top.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-drawn:
	case <-time.After(time.Minute):
		_ = top.Process.Kill()
		t.Fatalf("top drew nothing in a minute:\n%s", topErr.String())
	}
	if err := top.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = top.Wait()
	if code := top.ProcessState.ExitCode(); code != 130 || !strings.Contains(topErr.String(), "interrupted") {
		t.Errorf("top after SIGINT: exit %d, want 130\n%s", code, topErr.String())
	}
}

// signalWriter closes seen the first time a write contains match.
type signalWriter struct {
	match string
	seen  chan struct{}
	done  bool
}

func (w *signalWriter) Write(p []byte) (int, error) {
	if !w.done && bytes.Contains(p, []byte(w.match)) {
		w.done = true
		close(w.seen)
	}
	return len(p), nil
}
