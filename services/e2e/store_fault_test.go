package e2e

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/rpc"
	"github.com/wololo/wololo/transport/transporttest"
)

// TestFullDiskStopsTheProcess: shard-0's disk fills up mid-job. Its next
// failed commit ends its Serve with an error naming the disk's, its health
// stops saying SERVING, and nothing panics anywhere. Restarted while the
// disk is still full it fails again; restarted once there is room, it
// goes on from its store and the job's answers are exact.
func TestFullDiskStopsTheProcess(t *testing.T) {
	d := testDatasets(t)[2]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 4})
	const victim = "shard-0"
	disk := &transporttest.FailingStore{Store: c.Store(victim), After: 5, Err: syscall.ENOSPC}
	c.SetStore(victim, disk)
	if err := c.Restart(victim); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := t.TempDir()
	submitted := submitInBackground(ctx, t, c, d, out, "full-disk")

	conn, err := rpc.NewClient(c.Addrs[victim], operatorTLS(t, c, victim))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	serving := func() bool {
		cctx, ccancel := context.WithTimeout(ctx, time.Second)
		defer ccancel()
		r, err := healthpb.NewHealthClient(conn).Check(cctx, &healthpb.HealthCheckRequest{})
		return err == nil && r.Status == healthpb.HealthCheckResponse_SERVING
	}
	stopsOnTheFullDisk := func(when string) {
		t.Helper()
		select {
		case <-c.Exited(victim):
		case err := <-submitted:
			t.Fatalf("%s: the job ended (%v) and %s never failed", when, err, victim)
		case <-time.After(time.Minute):
			t.Fatalf("%s: %s goes on with a full disk", when, victim)
		}
		err := c.Err(victim)
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "store") {
			t.Fatalf("%s: %s's Serve returned %v, want the store's error", when, victim, err)
		}
		if serving() {
			t.Fatalf("%s: %s stopped, and its health still says SERVING", when, victim)
		}
		t.Logf("%s: %s stopped: %v", when, victim, err)
	}
	stopsOnTheFullDisk("mid-job")

	// Restarted on the same full disk: it recovers (reads work) and stops
	// at its first write.
	if err := c.Restart(victim); err != nil {
		t.Fatal(err)
	}
	stopsOnTheFullDisk("restarted, disk still full")

	disk.Free()
	if err := c.Restart(victim); err != nil {
		t.Fatal(err)
	}
	if err := <-submitted; err != nil {
		t.Fatalf("after the disk emptied: submit: %v", err)
	}
	compareOutputs(t, d, out)
}
