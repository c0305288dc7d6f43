package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
	sqlflags "github.com/wololo/wololo/services/cmdline/explain"
)

// TestStandingJobRebuiltAfterALostStore: a standing job of two epochs
// whose shard-1 restarts on an empty store runs again from the epochs the
// gateway retained (gateway/rebuildstanding.go), under a new run, without
// its client: its versions are made again, `results --epoch 2` is the
// answer over epochs 1..2 again, a third append's version is the answer
// over the three epochs, and `status` lists the rebuild.
func TestStandingJobRebuiltAfterALostStore(t *testing.T) {
	const epochs = 3
	c, gateway, matches, matchesUpTo, players, playersUpTo := retainingCluster(t, testDatasets(t)[0], epochs)
	queries := sqlflags.DefaultQueries()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, run := cliOn(ctx, t, gateway)
	check := func(what, out string, k int) {
		t.Helper()
		want := answerOn(t, map[string]string{"matches": matchesUpTo[k-1], "match_players": playersUpTo[k-1]}, queries)
		for _, q := range queries {
			got, err := os.ReadFile(filepath.Join(out, q.Name+".csv"))
			if err != nil || !bytes.Equal(got, want[q.Name]) {
				t.Errorf("%s: %s.csv is not the answer over epochs 1..%d (%v)", what, q.Name, k, err)
			}
		}
	}

	run("submit", "--standing", "--quiet", "--job", "s", "--matches", matches[0], "--players", players[0], "--out", t.TempDir())
	run("append", "--quiet", "--job", "s", "--matches", matches[1], "--players", players[1], "--out", t.TempDir())
	lost := onlyJobID(t, c)

	wipe(t, c, "shard-1")
	testkit.WaitFor(t, "the job run again under a new id", time.Minute, func() bool {
		jobs := c.Nodes["gateway-0"].Gateway.ClusterJobs()
		return len(jobs) == 1 && jobs[0].JobId != lost
	})
	// Its versions are made again: epoch 2's, once published, is the
	// answer over epochs 1..2.
	testkit.WaitFor(t, "epoch 2 published again", time.Minute, func() bool {
		return strings.Contains(run("status", "--job", "s"), "2 published")
	})
	out := t.TempDir()
	run("results", "--job", "s", "--epoch", "2", "--out", out)
	check("results --epoch 2 after the rebuild", out, 2)
	out = t.TempDir()
	run("append", "--quiet", "--job", "s", "--matches", matches[2], "--players", players[2], "--out", out)
	check("append 3 after the rebuild", out, 3)
	if s := run("status", "--job", "s"); !strings.Contains(s, "shard-1") || !strings.Contains(s, "replayed its input") {
		t.Errorf("status does not list the rebuild:\n%s", s)
	}
}
