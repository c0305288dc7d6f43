package local

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestManualModeWaitsToBeToldToStart: with Manual set (the masters decide
// restarts), a killed process stays down until StartInstance.
func TestManualModeWaitsToBeToldToStart(t *testing.T) {
	logs := &logBuffer{t: t}
	c, err := Start(context.Background(), Options{
		Binary: wololoBinary(t), DataDir: t.TempDir(), FreePorts: true, LogLevel: "warn", Manual: true,
		Log: hclog.New(&hclog.LoggerOptions{Name: "local", Level: hclog.Info, Output: logs}), StopGrace: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	const victim = "q3-joiner-1"
	before := procOf(c, victim)
	if was, err := c.StartInstance(victim); err != nil || was {
		t.Fatalf("StartInstance on a running instance = %v, %v; want false, nil", was, err)
	}
	if err := c.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the victim to be seen dead", 5*time.Second, func() bool { return !procOf(c, victim).Alive })
	time.Sleep(500 * time.Millisecond) // longer than the automatic backoff
	if p := procOf(c, victim); p.Alive {
		t.Fatalf("manual mode restarted %s by itself (pid %d)", victim, p.PID)
	}
	if was, err := c.StartInstance(victim); err != nil || !was {
		t.Fatalf("StartInstance on a dead instance = %v, %v; want true, nil", was, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.WaitInstance(ctx, victim); err != nil {
		t.Fatal(err)
	}
	if after := procOf(c, victim); !after.Alive || after.PID == before.PID {
		t.Fatalf("after StartInstance: %+v (before: pid %d)", after, before.PID)
	}
	submitAndCompare(t, c)
}
