package e2e

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/roles/node"
)

// syncBuffer is a bytes.Buffer safe for the cluster's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestARestartForgetsDeletedJobsBeforeReplaying: a job deleted while a
// shard is down (issue 37: "a recovering process learns the gateway's
// drops before it replays a job") is dropped by the shard when it starts
// again, before it replays anything of it: the shard asks the gateway
// which of its jobs it still holds (StageService.HeldJobs). The job it
// still holds is recovered as before, and the next job is exact.
func TestARestartForgetsDeletedJobsBeforeReplaying(t *testing.T) {
	d := testDatasets(t)[0]
	var logs syncBuffer
	c := startCluster(t, deploy.Default(), node.ClusterOptions{Log: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, name := range []string{"deleted", "kept"} {
		if _, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: d.matches, Players: d.players, Out: t.TempDir(), JobID: name, Keep: true}); err != nil {
			t.Fatal(err)
		}
	}
	jobs := jobsAs(t, c, "client")
	ids := map[string]string{}
	listed, err := jobs.ListJobs(ctx, &wololov1.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range listed.GetJobs() {
		ids[j.GetName()] = j.GetId()
	}
	if err := c.StopInstance("shard-0"); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.DeleteJob(ctx, &wololov1.DeleteJobRequest{JobId: "deleted"}); err != nil {
		t.Fatal(err)
	}
	if err := c.StartInstance("shard-0"); err != nil {
		t.Fatal(err)
	}
	// Start returns once the node serves its health; its recovery, and
	// so the lines looked for, may come a moment later.
	submit(t, c, d)
	dropped := false
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "dropped a job the gateway no longer holds, before replaying it") && strings.Contains(line, "instance=shard-0") && strings.Contains(line, "job="+ids["deleted"]) {
			dropped = true
		}
		if strings.Contains(line, "instance=shard-0") && strings.Contains(line, "job recovered") && strings.Contains(line, "job="+ids["deleted"]) {
			t.Errorf("shard-0 replayed the deleted job: %s", line)
		}
	}
	if !dropped {
		t.Errorf("shard-0 did not drop the deleted job %s before its replay", ids["deleted"])
	}
}
