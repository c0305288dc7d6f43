package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/base/datagen"
)

// chaosMatches is the size of the test dataset (about 1.4 MB). The shaping
// proxy cuts its upload into 64 KiB frames, so the gateway commits it in
// about 22 steps rather than in one per file.
const chaosMatches = 5000

// TestMain removes the binary the tests built after them.
func TestMain(m *testing.M) { testkit.Main(m) }

// TestChaosLocal is the crash harness on real processes: two seeds, 24
// SIGKILLs each across every kind of process, the leading master among
// them, some after the upload, with the 3 masters doing every restart (in
// the second seed's, two of them lose their victim's disk, and the gateway
// rebuilds a lost shard alone, or it or the client runs the lost job
// again); the four outputs must be byte-equal to the reference.
func TestChaosLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos: skipped with -short (builds the binary and runs two 24-kill jobs on OS processes)")
	}
	bin := testkit.WololoBinary(t)
	dir := t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: chaosMatches, Seed: 11}, dir); err != nil {
		t.Fatal(err)
	}
	matches, players := filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv")
	top := deploy.Default()
	for _, seed := range []int64{1, 2} {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			w := testkit.Writer(t)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			start := time.Now()
			rep, err := Local(ctx, Options{
				Binary: bin, Matches: matches, Players: players, Out: t.TempDir(),
				Kills: 24, Seed: seed, Masters: 3, DiskLosses: int(seed-1) * 2,
				Stdout: w, Progress: w, Log: hclog.New(&hclog.LoggerOptions{Name: "chaos", Level: hclog.Warn, Output: w}),
			})
			if err != nil {
				if rep != nil {
					t.Logf("logs of every process: %s/<instance>.log", rep.DataDir)
				}
				t.Fatalf("chaos seed %d: %v", seed, err)
			}
			t.Logf("seed %d: %d kills in %s (upload done at +%s), %d restarts", seed, len(rep.Kills), time.Since(start).Round(time.Millisecond), fmtDur(rep.UploadAt), rep.Restarts)
			// Every kill planned during the upload lands; those after it
			// race the job's end (the harness requires one of them when
			// the job outlasts its upload by minPostWindow).
			if rep.Planned != 24 || rep.PlannedInUpload < 18 || len(rep.Kills) < rep.PlannedInUpload {
				t.Errorf("%d kills of %d planned (%d during the upload), want 24 planned, at least 18 of them during the upload, all of those landed", len(rep.Kills), rep.Planned, rep.PlannedInUpload)
			}
			for _, s := range top.Stages {
				if rep.Stages[s.Name] == 0 {
					t.Errorf("no %s was killed", s.Name)
				}
			}
			if rep.Stages[deploy.MasterStage] == 0 {
				t.Errorf("the leading master was never killed")
			}
			if rep.Phases["after-upload"]+rep.Phases["done"] == 0 {
				t.Errorf("no kill after the upload finished: %v", rep.Phases)
			}
			if !rep.Equal {
				t.Errorf("outputs differ: %v", rep.Diffs)
			}
			disks := 0
			for _, kl := range rep.Kills {
				if kl.Disk {
					disks++
				}
			}
			if seed == 2 && disks == 0 {
				t.Errorf("no kill lost its victim's disk")
			}
			t.Logf("seed %d: %d disks lost; the gateway rebuilt the job %d times, the client submitted it again %d times", seed, disks, len(rep.Replays), len(rep.Rebuilds))
		})
	}
}
