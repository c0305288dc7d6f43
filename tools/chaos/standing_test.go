package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/base/datagen"
)

// standingMatches is the size of TestChaosLocalStanding's dataset (about
// 0.55 MB): its 3 epochs upload in some 3 s through the shaping proxy.
const standingMatches = 2000

// TestChaosLocalStanding is `wololo chaos local --standing` on real
// processes: a standing job of 3 epochs (submit --standing, two appends,
// close) while 10 SIGKILLs land across every kind of process, the
// leading master among them, during each epoch's upload, once its input
// is whole (while its version is made, or before the next append) and
// after the close, two of them losing their victim's disk (a worker's:
// the gateway runs the job again from its copies; a gateway's: the
// harness submits and appends it again); the final results and every
// version, as published and fetched again at the end, must be
// byte-equal to the answers over their epochs' rows.
func TestChaosLocalStanding(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos: skipped with -short (builds the binary and runs a 10-kill standing job on OS processes)")
	}
	bin := testkit.WololoBinary(t)
	dir := t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: standingMatches, Seed: 11}, dir); err != nil {
		t.Fatal(err)
	}
	w := testkit.Writer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const epochs = 3
	rep, err := Local(ctx, Options{
		Binary: bin, Matches: dir + "/matches.csv", Players: dir + "/match_players.csv", Out: t.TempDir(),
		Kills: 10, Seed: 3, Masters: 3, Standing: true, Epochs: epochs, DiskLosses: 2,
		Stdout: w, Progress: w, Log: hclog.New(&hclog.LoggerOptions{Name: "chaos", Level: hclog.Warn, Output: w}),
	})
	if err != nil {
		if rep != nil {
			t.Logf("logs of every process: %s/<instance>.log", rep.DataDir)
		}
		t.Fatalf("chaos --standing: %v", err)
	}
	for _, s := range deploy.Default().Stages {
		if rep.Stages[s.Name] == 0 {
			t.Errorf("no %s was killed", s.Name)
		}
	}
	if rep.Stages[deploy.MasterStage] == 0 {
		t.Errorf("the leading master was never killed")
	}
	during, after, disks := map[int64]bool{}, 0, 0
	for _, kl := range rep.Kills {
		if kl.Phase == "upload" {
			during[kl.Epoch] = true
		}
		if m := kl.moment(); m == versionMade || m == betweenEpochs {
			after++
		}
		if kl.Disk {
			disks++
		}
	}
	if disks == 0 {
		t.Errorf("no kill lost its victim's disk: %+v", rep.Kills)
	}
	t.Logf("%d disks lost; the gateway rebuilt the job %d times, the harness submitted it again %d times", disks, len(rep.Replays), len(rep.Rebuilds))
	for e := int64(1); e <= epochs; e++ {
		if !during[e] {
			t.Errorf("no kill landed while epoch %d was open or its version published: %+v", e, rep.Kills)
		}
	}
	if after == 0 {
		t.Errorf("no kill landed once an epoch's input was whole, while its version was made or before the next append: %+v", rep.Kills)
	}
	if len(rep.Versions) != epochs {
		t.Fatalf("%d versions checked, want %d", len(rep.Versions), epochs)
	}
	for _, v := range rep.Versions {
		if !v.Equal() {
			t.Errorf("version %d: %v", v.Epoch, v.Diffs)
		}
	}
}
