package e2e

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/cmdline/certs"
	"github.com/wololo/wololo/services/roles/local"
	"github.com/wololo/wololo/services/roles/master"
	"github.com/wololo/wololo/services/wire/pki"
)

// TestMasterLoopRestartsDeadAndFrozenProcesses: with the local runner in
// Manual mode, only the master's supervision loop restarts anything. A
// SIGKILLed worker and a SIGSTOPped one (alive but silent) both come back
// as new processes within a few seconds, and a job then runs exactly.
func TestMasterLoopRestartsDeadAndFrozenProcesses(t *testing.T) {
	bin := testkit.WololoBinary(t)
	c := startLocal(t, local.Options{
		Binary: bin, DataDir: t.TempDir(),
		Manual: true, Control: true,
	})
	rt, err := master.NewLocalRuntime(c.ControlAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	// No masters run here: the loop probes with the operator's credential,
	// which may read Status as a master's may.
	creds, err := pki.Load(c.TLSDir(), certs.OperatorName)
	if err != nil {
		t.Fatal(err)
	}
	loop := master.NewLoop(master.LoopConfig{Runtime: rt, Instances: c.Instances(), Credentials: creds, Log: testkit.Logger(t, hclog.Warn)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go loop.Run(ctx)

	pidOf := func(instance string) int {
		for _, p := range c.Processes() {
			if p.Instance == instance && p.Alive {
				return p.PID
			}
		}
		return 0
	}
	for _, v := range []struct {
		instance string
		sig      syscall.Signal
	}{{"shard-1", syscall.SIGKILL}, {"shard-0", syscall.SIGSTOP}} {
		before := pidOf(v.instance)
		start := time.Now()
		if err := c.Kill(v.instance, v.sig); err != nil {
			t.Fatal(err)
		}
		var p int
		testkit.WaitFor(t, fmt.Sprintf("%s to be restarted after %s", v.instance, v.sig), 15*time.Second, func() bool {
			p = pidOf(v.instance)
			return p != 0 && p != before
		})
		t.Logf("%s (%s) back as pid %d after %s", v.instance, v.sig, p, time.Since(start).Round(10*time.Millisecond))
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	if err := c.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	d := testDatasets(t)[0]
	submit(t, c, d)
	for _, st := range loop.States() {
		if (st.Instance == "shard-1" || st.Instance == "shard-0") && st.Restarts != 1 {
			t.Errorf("%s: %d restarts recorded, want 1", st.Instance, st.Restarts)
		}
	}
}
