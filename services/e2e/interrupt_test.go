package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
)

// lineWaiter is a process's output kept whole, and seen closed the first
// time it contains match.
type lineWaiter struct {
	buf   bytes.Buffer
	match string
	seen  chan struct{}
}

func newLineWaiter(match string) *lineWaiter {
	return &lineWaiter{match: match, seen: make(chan struct{})}
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	had := bytes.Contains(w.buf.Bytes(), []byte(w.match))
	w.buf.Write(p)
	if !had && bytes.Contains(w.buf.Bytes(), []byte(w.match)) {
		close(w.seen)
	}
	return len(p), nil
}

// interruptAt starts cmd, sends it SIGINT once out has seen its match,
// and returns its exit status. A minute is a failure guard.
func interruptAt(t *testing.T, cmd *exec.Cmd, out *lineWaiter) int {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	select {
	case <-out.seen:
	case <-exited:
		t.Fatalf("%s ended before it could be interrupted:\n%s", cmd.Args, out.buf.String())
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("%s never printed %q", cmd.Args, out.match)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("%s still ran a minute after SIGINT", cmd.Args)
	}
	return cmd.ProcessState.ExitCode()
}

// TestDemoInterrupted: Ctrl-C (SIGINT) stops `wololo demo`, here while it
// generates its dataset, with exit 130, and leaves no dataset; the demo
// used to ignore it and run its job to the end, exiting 0.
func TestDemoInterrupted(t *testing.T) {
	bin := testkit.WololoBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	out := newLineWaiter("generating a")
	cmd := exec.Command(bin, "demo", "--gen-matches", "3000000", "--data", data, "--out", t.TempDir())
	cmd.Stdout, cmd.Stderr = out, out
	if code := interruptAt(t, cmd, out); code != 130 || !strings.Contains(out.buf.String(), "interrupted") {
		t.Fatalf("the demo after SIGINT: exit %d, want 130, saying interrupted:\n%s", code, out.buf.String())
	}
	if _, err := os.Stat(filepath.Join(data, "matches.csv")); err == nil {
		t.Error("the interrupted demo left a matches.csv")
	}
}

// TestLocalRunInterruptedCleansUp: `wololo local run` without --data,
// interrupted (SIGINT) once its cluster is up, exits 130 and removes the
// temporary data directory it made (hundreds of MB after a real upload),
// and prints no resume hint for the gateway it has just stopped.
func TestLocalRunInterruptedCleansUp(t *testing.T) {
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[2]
	tmp := t.TempDir()
	out := newLineWaiter("processes up in")
	cmd := exec.Command(bin, "local", "run", "--free-ports", "--log-level", "warn", "--matches", d.matches, "--players", d.players, "--out", t.TempDir())
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Stdout, cmd.Stderr = out, out
	if code := interruptAt(t, cmd, out); code != 130 {
		t.Fatalf("local run after SIGINT: exit %d, want 130:\n%s", code, out.buf.String())
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		if strings.HasPrefix(e.Name(), "wololo-local-") {
			t.Errorf("the interrupted local run left its temporary data directory %s", e.Name())
		}
	}
	if s := out.buf.String(); strings.Contains(s, "resume it with") || strings.Contains(s, "logs are in") {
		t.Errorf("the interrupted local run points at a stopped gateway or a removed directory:\n%s", s)
	}
}
