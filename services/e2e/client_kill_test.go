package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/rpc"
)

// TestClientKilledMidUploadResumes SIGKILLs a real client process in the
// middle of its upload, starts it again with the same job id, and expects
// the job to finish with exact results: the gateway kept the committed
// offset, the new client re-reads its file from there.
func TestClientKilledMidUploadResumes(t *testing.T) {
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[2]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 2})
	conn, err := rpc.NewClient(c.GatewayAddr(), clientTLS(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	jobs := wololov1.NewJobServiceClient(conn)
	out := t.TempDir()
	args := []string{"client", "submit", "--tls-dir", clientDir(t, c, "client"), "--server", c.GatewayAddr(), "--job", "killed-client", "--matches", d.matches, "--players", d.players, "--out", out, "--quiet"}

	first := exec.Command(bin, args...)
	first.Stderr = os.Stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	killedAt := uploadedPast(t, jobs, "killed-client", 0)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	t.Logf("client killed with match_players.csv committed up to byte %d", killedAt)

	second := exec.Command(bin, args...)
	if b, err := second.CombinedOutput(); err != nil {
		t.Fatalf("second client: %v\n%s", err, b)
	}
	compareOutputs(t, d, out)
}

// uploadedPast waits until the job's match_players.csv (the larger file,
// whose upload lasts) is committed past offset after (and not whole yet)
// and returns the committed offset.
func uploadedPast(t *testing.T, jobs wololov1.JobServiceClient, job string, after int64) int64 {
	t.Helper()
	var offset int64
	// Asked every 2 ms: the upload is to be caught before it ends.
	if !testkit.AwaitEvery(time.Minute, 2*time.Millisecond, func() bool {
		r, err := jobs.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: job})
		if err != nil {
			return false // not created yet
		}
		m := r.Job.Players
		if m.Done {
			t.Fatal("the players upload finished before the client could be stopped; slow the cluster down")
		}
		offset = m.Offset
		return m.Rows > 0 && m.Offset > after
	}) {
		t.Fatalf("the upload of %s never got past byte %d", job, after)
	}
	return offset
}

// TestClientInterruptedSaysHowToResume: a client interrupted (SIGINT) in the
// middle of its upload exits 130 and prints the command that resumes the
// job it leaves at the gateway, one that works when pasted: the binary as
// invoked, with --server and --tls-dir (not the defaults here).
func TestClientInterruptedSaysHowToResume(t *testing.T) {
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[2]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 2})
	conn, err := rpc.NewClient(c.GatewayAddr(), clientTLS(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	jobs := wololov1.NewJobServiceClient(conn)
	args := []string{"client", "submit", "--tls-dir", clientDir(t, c, "client"), "--server", c.GatewayAddr(), "--job", "killed-client", "--matches", d.matches, "--players", d.players, "--out", t.TempDir(), "--quiet"}
	tlsDir := args[3]
	interrupted := exec.Command(bin, args...)
	var stderr bytes.Buffer
	interrupted.Stderr = &stderr
	if err := interrupted.Start(); err != nil {
		t.Fatal(err)
	}
	uploadedPast(t, jobs, "killed-client", 0)
	if err := interrupted.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = interrupted.Wait()
	if code := interrupted.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "interrupted") ||
		!strings.Contains(stderr.String(), "resume it with `"+bin+" client submit --job killed-client") {
		t.Fatalf("interrupted client: exit %d (%v), stderr:\n%s", code, err, stderr.String())
	}
	// The hint works when pasted: the binary as invoked, and the gateway
	// and credential that are not the defaults.
	for _, want := range []string{"--server " + c.GatewayAddr(), "--tls-dir " + tlsDir} {
		if !strings.Contains(stderr.String(), want+" ") && !strings.Contains(stderr.String(), want+"`") {
			t.Errorf("the resume hint lacks %q:\n%s", want, stderr.String())
		}
	}
}
