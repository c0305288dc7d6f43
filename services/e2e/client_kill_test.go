package e2e

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/node"
	"github.com/wololo/wololo/transport"
)

// TestClientKilledMidUploadResumes SIGKILLs a real client process in the
// middle of its upload, starts it again with the same job id, and expects
// the job to finish with exact results: the gateway kept the committed
// offset, the new client re-reads its file from there.
func TestClientKilledMidUploadResumes(t *testing.T) {
	bin := buildBinary(t)
	d := testDatasets(t)[2]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{BatchRows: 64, OutboxLimit: 2})
	conn, err := transport.NewClient(c.GatewayAddr(), clientTLS(t, c))
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
	var killedAt int64
	deadline := time.Now().Add(time.Minute)
	for killedAt == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the upload never started")
		}
		time.Sleep(2 * time.Millisecond)
		r, err := jobs.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "killed-client"})
		if err != nil {
			continue // not created yet
		}
		m := r.Job.Matches
		if m.Done {
			t.Fatal("the matches upload finished before the client could be killed; slow the cluster down")
		}
		if m.Offset > 0 && m.Rows > 0 {
			killedAt = m.Offset
		}
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	t.Logf("client killed with matches.csv committed up to byte %d", killedAt)

	second := exec.Command(bin, args...)
	if b, err := second.CombinedOutput(); err != nil {
		t.Fatalf("second client: %v\n%s", err, b)
	}
	compareOutputs(t, d, out)
}
