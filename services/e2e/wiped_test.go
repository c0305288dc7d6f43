package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/transport"
)

// TestWipedStoreFailsTheJob: shard-0 restarts mid-job on an empty store
// (its data directory wiped or replaced) after the gateway had batches of
// the job acknowledged by it and trimmed them. No resend can repair that;
// instead of waiting forever for batches 1..N-1, the job fails within
// seconds with a reason its client sees, in submit's error and in `wololo
// client status`.
func TestWipedStoreFailsTheJob(t *testing.T) {
	d := testDatasets(t)[2]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{BatchRows: 128, OutboxLimit: 4})
	const victim, job = "shard-0", "wiped"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	submitted := submitInBackground(ctx, t, c, d, t.TempDir(), job)

	// Until the gateway has trimmed batches shard-0 acknowledged.
	gateway := c.Store("gateway-0")
	for acked := uint64(0); acked == 0; {
		select {
		case err := <-submitted:
			t.Fatalf("the job ended (%v) before shard-0 acknowledged anything", err)
		case <-time.After(2 * time.Millisecond):
		}
		img, err := gateway.Load()
		if err != nil {
			t.Fatal(err)
		}
		for _, ji := range img.Jobs {
			for ch, a := range ji.Acked {
				if ch.Receiver == victim {
					acked = max(acked, a)
				}
			}
		}
	}
	c.SetStore(victim, transport.NewMemStore())
	wiped := time.Now()
	if err := c.Restart(victim); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-submitted:
	case <-time.After(30 * time.Second):
		t.Fatal("the job neither failed nor ended within 30 s of the wipe")
	}
	took := time.Since(wiped)
	if err == nil || !strings.Contains(err.Error(), "failed") || !strings.Contains(err.Error(), victim) || !strings.Contains(err.Error(), "lost this job's state") {
		t.Fatalf("submit after the wipe: %v; want the job failed, naming %s and the lost state", err, victim)
	}
	t.Logf("failed %s after the wipe: %v", took.Round(time.Millisecond), err)

	var out, errOut bytes.Buffer
	if err := client.Run(ctx, []string{"status", "--server", c.GatewayAddr(), "--tls-dir", clientDir(t, c, "client"), "--job", job}, &out, &errOut); err != nil {
		t.Fatalf("wololo client status: %v\n%s", err, errOut.String())
	}
	if s := out.String(); !strings.Contains(s, "job wiped: failed") || !strings.Contains(s, "lost this job's state") {
		t.Fatalf("wololo client status says:\n%s", s)
	}
	t.Logf("wololo client status:\n%s", out.String())
}
