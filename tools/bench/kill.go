package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/wololo/wololo/services/roles/local"
	"github.com/wololo/wololo/transport/diskuse"
)

// The recovery case: a process SIGKILLed late in a job should cost the job
// no more than TargetKillCost, whatever it was.
const (
	// KillAt is when, as a part of the median local run's wall time, the
	// victim is killed.
	KillAt = 0.7
	// TargetKillCost bounds what one SIGKILL adds to the job.
	TargetKillCost = 3 * time.Second
	// TargetIdleDisk bounds what an idle cluster's stores hold, per store.
	TargetIdleDisk = 16 << 20
	// TargetDiskRatio bounds the stores' peak during a job, as a multiple
	// of the input's size.
	TargetDiskRatio = 1.5
)

// kills runs local mode once per kind of process (the gateway, and the
// last instance of every other task), SIGKILLing it at KillAt of the
// median local run's wall time.
func (b *bencher) kills(ctx context.Context, r *Report) error {
	if r.Local.Wall <= 0 {
		return nil
	}
	at := time.Duration(float64(r.Local.Wall) * KillAt)
	for _, victim := range killVictims(r.Local.Procs) {
		b.logf("local mode with %s SIGKILLed after %s...", victim, secs(at))
		out := filepath.Join(b.o.Work, "local-kill-"+victim)
		var killedAt time.Duration // set by the killing function, which runLocal waits for
		run, err := runLocal(ctx, b.o, b.bin, out, filepath.Join(b.o.Work, "profiles-kill"), false, b.logf,
			func(ctx context.Context, cl *local.Cluster) {
				start := time.Now()
				select {
				case <-ctx.Done():
					return
				case <-time.After(at):
				}
				if err := cl.Kill(victim, syscall.SIGKILL); err != nil {
					b.logf("kill %s: %v", victim, err)
					return
				}
				killedAt = time.Since(start)
			})
		if err != nil {
			return fmt.Errorf("local mode with %s killed: %w", victim, err)
		}
		run.Killed, run.KilledAt = victim, killedAt
		run.Equal = b.check("local with "+victim+" killed", out)
		r.Kills = append(r.Kills, run)
		b.logf("local with %s killed at %s: %s end to end (+%s), outputs equal: %v", victim, secs(run.KilledAt), secs(run.Wall), secs(run.Wall-r.Local.Wall), run.Equal)
	}
	return nil
}

// killVictims picks one instance of every task: the gateway, and the last
// instance of each other (masters are the election harness's).
func killVictims(procs []ProcStat) []string {
	last := map[string]string{}
	var order []string
	for _, p := range procs {
		st := stageOf(p.Instance)
		if st == "master" {
			continue
		}
		if _, ok := last[st]; !ok {
			order = append(order, st)
		}
		last[st] = p.Instance
	}
	out := make([]string, 0, len(order))
	for _, st := range order {
		out = append(out, last[st])
	}
	return out
}

// KillCost is what killing the victim added to the job against the median
// run, and whether that is within TargetKillCost (and the outputs exact).
func (r Report) KillCost(k LocalRun) (time.Duration, bool) {
	d := k.Wall - r.Local.Wall
	return d, k.Equal && d <= TargetKillCost
}

// sampleDisk measures dir every period until ctx ends, then sends the
// largest value seen.
func sampleDisk(ctx context.Context, dir string, period time.Duration) <-chan int64 {
	peak := make(chan int64, 1)
	go func() {
		most := diskuse.Dir(dir)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				peak <- max(most, diskuse.Dir(dir))
				return
			case <-t.C:
				most = max(most, diskuse.Dir(dir))
			}
		}
	}()
	return peak
}
