package e2e

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	sqlflags "github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/roles/node"
)

// TestCutJobRunAgainAndQueried: a standing job whose first append
// --epoch-every cut into several epochs loses shard-1's store: the job
// runs again from its retained append, cut where it was, and every
// version published again is byte for byte the one the lost run
// published. A query added then backfills from the append cut as it
// was (its version is its answer over the append), and a second append,
// cut into epochs as well, is kept up by it: every version of every
// query is the batch answer over the rows it is over.
func TestCutJobRunAgainAndQueried(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a cluster")
	}
	d := testDatasets(t)[0]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{DataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	gw, err := client.Open(c.GatewayAddr(), clientTLS(t, c), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	dir := t.TempDir()
	matches, matchesUpTo := splitEpochs(t, d.matches, dir, 2)
	players, playersUpTo := splitEpochs(t, d.players, dir, 2)
	req, err := client.Request(client.SubmitOptions{Matches: matches[0], Players: players[0], Standing: true, EpochEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	req.JobId = "cut"
	if _, err := gw.Jobs.CreateJob(ctx, req); err != nil {
		t.Fatal(err)
	}
	uploadPieces(ctx, t, gw, "cut", 1, wololov1.InputFile_INPUT_FILE_MATCHES, matches[0], 3, true)()
	uploadPieces(ctx, t, gw, "cut", 1, wololov1.InputFile_INPUT_FILE_PLAYERS, players[0], 3, true)()
	j := caughtUp(ctx, t, gw, "cut")
	if len(j.AppendEpochs) != 1 || j.AppendEpochs[0] < 3 {
		t.Fatalf("append 1 ended epochs %v; want it cut into 3 or more", j.AppendEpochs)
	}
	n := j.AppendEpochs[0]
	queries := sqlflags.DefaultQueries()
	lost := checkVersions(ctx, t, gw, "cut", 1, n, matchesUpTo[0], playersUpTo[0], queries)

	old := c.Nodes["gateway-0"].Gateway.ClusterJobs()
	wipe(t, c, "shard-1")
	testkit.WaitFor(t, "the job run again and its versions published again", 2*time.Minute, func() bool {
		j, err := gw.Get(ctx, "cut")
		return err == nil && len(j.Rebuilds) == 1 && j.EpochsPublished >= n
	})
	if j, _ := gw.Get(ctx, "cut"); j.State == wololov1.JobState_JOB_STATE_FAILED || len(j.AppendEpochs) != 1 || j.AppendEpochs[0] != n {
		t.Fatalf("run again: %+v (the lost run %v); want append 1 ending epoch %d again", j, old, n)
	}
	for k := int64(1); k <= n; k++ {
		got, _ := version(ctx, t, gw.Jobs, "cut", k)
		for name, want := range lost[k] {
			if !bytes.Equal(got[name], want) {
				t.Errorf("version %d, %s: not the lost run's\n got: %.300q\nwant: %.300q", k, name, got[name], want)
			}
		}
	}

	// A query added to the run again: its backfill replays append 1 cut
	// as it was, so its version n is its answer over append 1.
	extra := sqljob.Query{Name: "extra", Text: oneoffSQL}
	add, err := gw.Jobs.QueryJob(ctx, &wololov1.QueryJobRequest{JobId: "cut", Add: []*wololov1.Query{{Name: extra.Name, Sql: extra.Text}}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := add.Recv(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("add a query to a job cut into epochs: %v", err)
		}
	}
	if got, _ := version(ctx, t, gw.Jobs, "cut", n); !bytes.Equal(got["extra.csv"], answerOn(t, map[string]string{"matches": matchesUpTo[0], "match_players": playersUpTo[0]}, []sqljob.Query{extra})["extra"]) {
		t.Errorf("the added query's version %d is not its answer over append 1:\n%.300q", n, got["extra.csv"])
	}

	// Append 2, cut too: the added query keeps up epoch by epoch (the
	// epochs cut in it are published once it is committed, when the
	// added query's job has them too).
	a, err := client.AppendRequest(client.SubmitOptions{JobID: "cut", Matches: matches[1], Players: players[1], EpochEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gw.Jobs.AppendJob(ctx, a); err != nil {
		t.Fatal(err)
	}
	uploadPieces(ctx, t, gw, "cut", 2, wololov1.InputFile_INPUT_FILE_MATCHES, matches[1], 3, false)()
	uploadPieces(ctx, t, gw, "cut", 2, wololov1.InputFile_INPUT_FILE_PLAYERS, players[1], 3, false)()
	j = caughtUp(ctx, t, gw, "cut")
	if len(j.AppendEpochs) != 2 || j.AppendEpochs[1] < n+2 {
		t.Fatalf("append 2 ended epochs %v; want it cut", j.AppendEpochs)
	}
	checkVersions(ctx, t, gw, "cut", n, j.AppendEpochs[1], matchesUpTo[1], playersUpTo[1], append(queries, extra))
}
