package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/roles/local"
)

// startLocal starts a `wololo local` cluster of real processes for a test,
// on free loopback ports, and stops it when the test ends. What o leaves
// unset is the tests' default: the test binary's wololo, a fresh data
// directory, warnings only in the processes' logs and none in the
// runner's, 5 s for the processes to stop.
func startLocal(t *testing.T, o local.Options) *local.Cluster {
	t.Helper()
	if o.Binary == "" {
		o.Binary = testkit.WololoBinary(t)
	}
	if o.DataDir == "" {
		o.DataDir = t.TempDir()
	}
	if o.LogLevel == "" {
		o.LogLevel = "warn"
	}
	if o.StopGrace == 0 {
		o.StopGrace = 5 * time.Second
	}
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	o.FreePorts = true
	c, err := local.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}
