package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/client"
	"github.com/wololo/wololo/services/local"
)

// TestZombieIsFenced freezes a stage process with SIGSTOP in the middle of
// a job, starts a replacement (a new incarnation on a copy of its data
// directory, on a new port), and then wakes the old one with SIGCONT. The
// old incarnation must not get a single batch applied downstream: every
// receiver refuses it and it stops itself. The results stay exact.
func TestZombieIsFenced(t *testing.T) {
	bin := buildBinary(t)
	d := testDatasets(t)[2]
	dir := t.TempDir()
	var logs bytes.Buffer
	c, err := local.Start(context.Background(), local.Options{
		Binary: bin, DataDir: dir, FreePorts: true, LogLevel: "info", StopGrace: 5 * time.Second,
		ExtraArgs: []string{"--batch-rows", "128", "--outbox-limit", "4"},
		Log:       hclog.New(&hclog.LoggerOptions{Name: "local", Level: hclog.Info, Output: &logs}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := t.TempDir()
	done := make(chan error, 1)
	go func() {
		_, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), Matches: d.matches, Players: d.players, Out: out, JobID: "zombie"})
		done <- err
	}()
	// Wait until the players upload is under way, so the victim has work.
	conn, err := client.Dial(c.GatewayAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	jobs := wololov1.NewJobServiceClient(conn)
	for {
		r, err := jobs.GetJob(ctx, &wololov1.GetJobRequest{JobId: "zombie"})
		if err == nil && r.Job.Players.Offset > r.Job.Players.Size/5 {
			if r.Job.Players.Done {
				t.Fatal("the upload finished before the victim was frozen; slow the job down")
			}
			break
		}
		time.Sleep(5 * time.Millisecond)
	}

	const victim = "players-filter-0"
	pid, err := c.Signal(victim, syscall.SIGSTOP)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("froze %s (pid %d)", victim, pid)
	copyDir := filepath.Join(t.TempDir(), victim)
	if b, err := exec.Command("cp", "-a", filepath.Join(dir, victim), copyDir).CombinedOutput(); err != nil {
		t.Fatalf("copy data dir: %v\n%s", err, b)
	}
	if err := c.Replace(victim, copyDir); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitInstance(ctx, victim); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the replacement announces itself to its receivers
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	t.Logf("woke the zombie (pid %d)", pid)

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("submit: %v\n%s", err, logs.String())
		}
	case <-ctx.Done():
		t.Fatal("job did not finish")
	}
	compareOutputs(t, d, out)

	// The zombie must have stopped itself, refused as a stale incarnation.
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the zombie (pid %d) is still running", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	victimLog, _ := os.ReadFile(c.LogFile(victim))
	if !strings.Contains(string(victimLog), "was replaced") {
		t.Errorf("the zombie's log does not say it was replaced:\n%s", tail(string(victimLog), 30))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
