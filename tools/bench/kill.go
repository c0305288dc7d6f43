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
	// TargetKillCost bounds what one SIGKILL adds to the job (1 s: the
	// fault-tolerance target a user compares with a single process that
	// would start the job over).
	TargetKillCost = 1 * time.Second
	// TargetDiskLossSlack bounds what a SIGKILL that also loses the
	// victim's data directory adds to the job beyond the victim's share
	// of the work so far (LocalRun.Share: the time to the kill, split
	// evenly among the instances of the victim's task): a lost disk costs
	// its share, as the gateway rebuilds the lost shard alone.
	TargetDiskLossSlack = 1 * time.Second
	// TargetIdleDisk bounds what an idle cluster's stores hold, per store.
	TargetIdleDisk = 16 << 20
	// TargetDiskRatio bounds the stores' peak during a job, as a multiple
	// of the input's size.
	TargetDiskRatio = 1.5
)

// kills runs local mode for each kind of process (the gateway, and the
// last instance of every other task), SIGKILLing it at KillAt of the
// median local run's wall time; then with the last of those (a shard)
// SIGKILLed there and its data directory deleted before its restart
// (LocalRun.DiskLost), as a node that does not come back. Each case runs
// Options.Runs times, interleaved with the others, and reports its run
// of median cost: one kill's cost varies by a few tenths of a second with
// where in the victim's snapshot cycle it lands, more than a target
// should be judged on. Each round begins with a run without a kill, the
// reference of that round's kills (LocalRun.Reference): the median local
// run was made minutes before, and a machine busier since then was
// counted as the kills' cost.
func (b *bencher) kills(ctx context.Context, r *Report) error {
	if r.Local.Wall <= 0 {
		return nil
	}
	at := time.Duration(float64(r.Local.Wall) * KillAt)
	victims := killVictims(r.Local.Procs)
	cases := append(victims, victims[len(victims)-1])
	peers := map[string]int{} // instances per task
	for _, p := range r.Local.Procs {
		peers[stageOf(p.Instance)]++
	}
	runs := make([][]LocalRun, len(cases))
	for round := range max(1, b.o.Runs) {
		b.logf("local mode without a kill, the reference of round %d...", round+1)
		ref, err := runLocal(ctx, b.o, b.bin, filepath.Join(b.o.Work, "local-kill-reference"), filepath.Join(b.o.Work, "profiles-kill"), false, b.logf)
		if err != nil {
			return fmt.Errorf("local mode, the reference of round %d: %w", round+1, err)
		}
		for i, victim := range cases {
			run, err := b.kill(ctx, victim, i == len(victims), at, round)
			if err != nil {
				return err
			}
			if run.DiskLost {
				run.Share = run.KilledAt / time.Duration(max(1, peers[stageOf(victim)]))
			}
			run.Reference = ref.Wall
			runs[i] = append(runs[i], run)
		}
	}
	for _, rs := range runs {
		r.Kills = append(r.Kills, medianKill(rs))
	}
	return nil
}

// kill is one local run with victim SIGKILLed at at (and its data
// directory deleted, if lose).
func (b *bencher) kill(ctx context.Context, victim string, lose bool, at time.Duration, round int) (LocalRun, error) {
	what, name := "SIGKILLed", victim
	if lose {
		what, name = "SIGKILLed and its data directory deleted", victim+"-disk"
	}
	b.logf("local mode with %s %s after %s (round %d)...", victim, what, secs(at), round+1)
	out := filepath.Join(b.o.Work, "local-kill-"+name)
	var killedAt time.Duration // set by the killing function, which runLocal waits for
	run, err := runLocal(ctx, b.o, b.bin, out, filepath.Join(b.o.Work, "profiles-kill"), false, b.logf,
		func(ctx context.Context, cl *local.Cluster) {
			start := time.Now()
			select {
			case <-ctx.Done():
				return
			case <-time.After(at):
			}
			var err error
			if lose {
				_, err = cl.LoseDisk(victim)
			} else {
				err = cl.Kill(victim, syscall.SIGKILL)
			}
			if err != nil {
				b.logf("kill %s: %v", victim, err)
				return
			}
			killedAt = time.Since(start)
		})
	if err != nil {
		return run, fmt.Errorf("local mode with %s %s: %w", victim, what, err)
	}
	run.Killed, run.KilledAt, run.DiskLost = victim, killedAt, lose
	run.Equal = b.check("local with "+victim+" "+what, out)
	b.logf("local with %s %s at %s: %s end to end, outputs equal: %v", victim, what, secs(run.KilledAt), secs(run.Wall), run.Equal)
	return run, nil
}

// medianKill is the run of median cost (its wall time less its
// reference's) among one case's runs, with every run's wall time
// (KillWalls) and its outputs equal only if every run's were.
func medianKill(runs []LocalRun) LocalRun {
	m, equal := medianOfRuns(runs, func(l LocalRun) (time.Duration, bool) { return l.Wall - l.Reference, l.Equal })
	m.Equal = equal
	if len(runs) > 1 {
		for _, run := range runs {
			m.KillWalls = append(m.KillWalls, run.Wall)
		}
	}
	return m
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

// KillCost is what killing the victim added to the job against its
// round's run without a kill (the median local run, without one), and
// whether that is within TargetKillCost (and the outputs exact).
func (r Report) KillCost(k LocalRun) (time.Duration, bool) {
	ref := r.Local.Wall
	if k.Reference > 0 {
		ref = k.Reference
	}
	d := k.Wall - ref
	if k.DiskLost {
		return d, k.Equal && d <= k.Share+TargetDiskLossSlack
	}
	return d, k.Equal && d <= TargetKillCost
}

// sampleDisk measures dir every period until ctx ends, then sends the
// largest values seen: of the stores (dir without the gateway's retained
// input, DIR/*/input) and of the retained input.
func sampleDisk(ctx context.Context, dir string, period time.Duration) <-chan [2]int64 {
	peak := make(chan [2]int64, 1)
	measure := func(most [2]int64) [2]int64 {
		var retained int64
		inputs, _ := filepath.Glob(filepath.Join(dir, "*", "input"))
		for _, in := range inputs {
			retained += diskuse.Dir(in)
		}
		return [2]int64{max(most[0], diskuse.Dir(dir)-retained), max(most[1], retained)}
	}
	go func() {
		most := measure([2]int64{})
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				peak <- measure(most)
				return
			case <-t.C:
				most = measure(most)
			}
		}
	}()
	return peak
}
