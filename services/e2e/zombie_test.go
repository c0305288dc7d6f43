package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/roles/local"
)

// TestZombieIsFenced freezes a stage process with SIGSTOP in the middle of
// a job, starts a replacement (a new incarnation on a copy of its data
// directory, on a new port), and then wakes the old one with SIGCONT. The
// old incarnation must not get a single batch applied downstream: every
// receiver refuses it and it stops itself. The results stay exact.
func TestZombieIsFenced(t *testing.T) {
	bin := testkit.WololoBinary(t)
	// A dataset large enough that its upload lasts while the victim is
	// caught sending: a plan's upload goes by batches of thousands of
	// rows, and the shared ones are in within a few of them.
	d := &dataset{name: "zombie-seed4"}
	gen := filepath.Join(t.TempDir(), d.name)
	if _, err := datagen.WriteDir(datagen.Config{Matches: 150_000, Seed: 4}, gen); err != nil {
		t.Fatal(err)
	}
	d.matches, d.players = filepath.Join(gen, "matches.csv"), filepath.Join(gen, "match_players.csv")
	dir := t.TempDir()
	if keep := os.Getenv("WOLOLO_ZOMBIE_DIR"); keep != "" {
		dir = keep
	}
	var logs bytes.Buffer
	c := startLocal(t, local.Options{
		Binary: bin, DataDir: dir, LogLevel: "info",
		ExtraArgs: []string{"--outbox-limit", "4"},
		Log:       hclog.New(&hclog.LoggerOptions{Name: "local", Level: hclog.Info, Output: &logs}),
	})

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out := t.TempDir()
	// A join whose rows the shards send while the upload goes on (the
	// matches come first: the join holds none of them, and emits as the
	// players arrive), so the victim has streams open when it is frozen
	// (the default queries' shards send theirs at the end).
	qs := []sqljob.Query{{Name: "pairs", Text: "SELECT p.match, p.civ, m.map FROM matches m JOIN match_players p ON m.token = p.match"}}
	done := submitOptsInBackground(ctx, t, c, client.SubmitOptions{Matches: d.matches, Players: d.players, Out: out, JobID: "zombie", Queries: qs})
	// Wait until the players upload is under way, so the victim has work.
	conn, err := client.Dial(c.GatewayAddr(), clientTLS(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	jobs := wololov1.NewJobServiceClient(conn)
	var players *wololov1.FileReport
	if !testkit.AwaitEvery(time.Minute, 5*time.Millisecond, func() bool {
		r, err := jobs.GetJob(ctx, &wololov1.GetJobRequest{JobId: "zombie"})
		if err == nil {
			players = r.Job.Players
		}
		return players != nil && players.Offset > players.Size/5
	}) {
		t.Fatalf("the players upload never passed a fifth of its file: %v", players)
	}
	if players.Done {
		t.Fatal("the upload finished before the victim was frozen; slow the job down")
	}

	const victim = "shard-0"
	// Freeze the victim while it has streams open to its receivers: a woken
	// zombie learns it was replaced from them.
	vconn, err := client.Dial(c.Addr(victim), operatorTLS(t, c, victim))
	if err != nil {
		t.Fatal(err)
	}
	defer vconn.Close()
	if !testkit.AwaitEvery(time.Minute, 2*time.Millisecond, func() bool {
		st, err := wololov1.NewStatusClient(vconn).Get(ctx, &wololov1.GetRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range st.Jobs {
			for _, o := range j.Outputs {
				if o.Connected && o.LastSeq > 0 {
					return true
				}
			}
		}
		return false
	}) {
		t.Fatalf("%s never had a stream open with a batch sent", victim)
	}
	pid, err := c.Signal(victim, syscall.SIGSTOP)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("froze %s (pid %d)", victim, pid)
	// kill(2) returns before the signal has stopped every thread: one
	// running on the other CPU, or on a vCPU the host has descheduled,
	// can still commit a batch and acknowledge it. Should that land after
	// the copy read the store, the senders hold an acknowledgement that the
	// replacement's copy lacks, and its Hello is rightly refused as
	// "channel state lost". Copy only once every thread is stopped.
	waitStopped(t, pid)
	copyTo := filepath.Join(dir, victim+"-copy")
	// Copy by reading through the page cache: cp may take the store's
	// preallocated write-ahead log for a hole and copy zeros.
	if err := copyDir(filepath.Join(dir, victim), copyTo); err != nil {
		t.Fatalf("copy data dir: %v", err)
	}
	if err := c.Replace(victim, copyTo); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitInstance(ctx, victim); err != nil {
		t.Fatal(err)
	}
	// Wake the zombie only once the replacement has announced itself to
	// every receiver: from then on none may accept the old incarnation.
	sconn, err := client.Dial(c.Addr(victim), operatorTLS(t, c, victim))
	if err != nil {
		t.Fatal(err)
	}
	defer sconn.Close()
	var replacement *wololov1.GetResponse
	testkit.WaitFor(t, "the replacement to announce itself", time.Minute, func() bool {
		st, err := wololov1.NewStatusClient(sconn).Get(ctx, &wololov1.GetRequest{})
		if err == nil && st.Announced {
			replacement = st
		}
		return replacement != nil
	})
	t.Logf("replacement incarnation %d has announced itself", replacement.Incarnation)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	t.Logf("woke the zombie (pid %d)", pid)

	// A failure keeps every process's log: the test's data directory goes
	// with the test.
	dumpLogs := func(lines int) {
		for _, in := range c.Instances() {
			b, _ := os.ReadFile(c.LogFile(in))
			t.Logf("== %s\n%s", in, tail(string(b), lines))
		}
	}
	select {
	case err := <-done:
		if err != nil {
			dumpLogs(60)
			t.Fatalf("submit: %v\n%s", err, logs.String())
		}
	case <-ctx.Done():
		dumpLogs(15)
		t.Fatal("job did not finish")
	}
	compareSQL(t, d, qs, out)

	// The zombie must have stopped itself, refused as a stale incarnation.
	if !testkit.Await(20*time.Second, func() bool { return syscall.Kill(pid, 0) != nil }) {
		victimLog, _ := os.ReadFile(c.LogFile(victim))
		t.Fatalf("the zombie (pid %d) is still running; its log ends:\n%s", pid, tail(string(victimLog), 40))
	}
	victimLog, _ := os.ReadFile(c.LogFile(victim))
	if !strings.Contains(string(victimLog), "was replaced") {
		t.Errorf("the zombie's log does not say it was replaced:\n%s", tail(string(victimLog), 30))
	}
}

// waitStopped waits until every thread of process pid is in the stopped
// state (T in /proc/PID/task/TID/stat).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	if !testkit.AwaitEvery(10*time.Second, time.Millisecond, func() bool {
		stopped, err := allThreadsStopped(pid)
		if err != nil {
			t.Fatalf("read the state of pid %d: %v", pid, err)
		}
		return stopped
	}) {
		t.Fatalf("pid %d: not every thread stopped 10 s after SIGSTOP", pid)
	}
}

func allThreadsStopped(pid int) (bool, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return false, err
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			return false, err
		}
		// pid (comm) STATE ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			return false, fmt.Errorf("unexpected stat line %q", b)
		}
		if state := b[i+2]; state != 'T' && state != 't' {
			return false, nil
		}
	}
	return true, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// copyDir copies a directory of regular files (a store's) byte for byte.
func copyDir(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := copyDir(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
				return err
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
