package gateway

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/inputlog"
	"github.com/wololo/wololo/transport"
)

// retainingConfig is the config of a test gateway that retains its
// standing jobs' epochs, with a fake epoch runtime.
func retainingConfig(t *testing.T) Config {
	t.Helper()
	inputs, err := inputlog.Open(filepath.Join(t.TempDir(), "input"))
	if err != nil {
		t.Fatal(err)
	}
	return Config{Retention: time.Hour, Epochs: (&fakeEpochs{}).runtime(), Inputs: inputs}
}

// addQuery adds queries to job id through QueryJob: the epoch they were
// added at. It gives up after a minute, so that an add that should have
// been refused and waits for versions instead fails its test.
func addQuery(svc wololov1.JobServiceServer, id string, queries ...*wololov1.Query) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := &queryStream{ctx: ctx}
	err := svc.QueryJob(&wololov1.QueryJobRequest{JobId: id, Add: queries}, s)
	return s.epochs, err
}

// addedOf is the added query's job g holds, nil while there is none.
func addedOf(g *Gateway) *job {
	g.jobs.mu.Lock()
	defer g.jobs.mu.Unlock()
	for _, j := range g.jobs.byID {
		if strings.HasPrefix(j.name, addedPrefix) {
			return j
		}
	}
	return nil
}

// latestNames are the queries of job name's latest version as
// ClusterJob.latest shows them.
func latestNames(g *Gateway, name string) []string {
	j, err := g.jobs.lookup("", name)
	if err != nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	for _, q := range j.standing.versions.latest {
		out = append(out, q.Name)
	}
	return out
}

// committedEpochs is how many epochs of standing job j are in whole.
func committedEpochs(j *job) int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.standing.committed
}

// TestAddedQueryLifecycle: a query added to an open standing job after
// its epoch 2 runs as an internal standing job (added_to) whose epochs 1
// and 2 are replayed at once from the job's retained copies; the add
// returns once its version 2 is published, and the job's results of
// epoch 2 have it (not epoch 1's), as its latest version's list does. Epoch 3, appended to the job, is
// opened on the added job and replayed once committed, and the job's
// epoch 3 is published only once the added query has its version too.
// A name the job has, a query of an unknown column and SQL the engine
// refuses are refused before anything runs; adding the same query again
// (a client's retry) is the same add. A restarted gateway links them
// again and goes on keeping the added query up; so does the job's new
// run after a lost state. Closing the job closes the added
// job; deleting it deletes the added job everywhere.
func TestAddedQueryLifecycle(t *testing.T) {
	store, cfg := transport.NewMemStore(), retainingConfig(t)
	dropped := make(chan string, 8)
	g := newTestGateway(t, store, cfg, dropped)
	svc := g.Service()
	ctx := context.Background()
	extra := &wololov1.Query{Name: "extra", Sql: "SELECT civ, count(*) AS n FROM match_players GROUP BY civ"}

	if _, err := svc.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: "s", Matches: tMatches.header(), Players: tPlayers.header(), Standing: true}); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 1, tMatches, tPlayers)
	publish(t, g, store, "s", versionRecords(1, q1to4...))
	if _, err := svc.AppendJob(ctx, &wololov1.AppendJobRequest{JobId: "s", Matches: sMatches.header(), Players: rPlayers.header()}); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 2, sMatches, rPlayers)
	publish(t, g, store, "s", versionRecords(2, q1to4...))

	_, err := addQuery(svc, "s", &wololov1.Query{Name: "q1", Sql: extra.Sql})
	wantCode(t, "a name the job has", err, codes.FailedPrecondition, `has a query "q1"`)
	_, err = addQuery(svc, "s", &wololov1.Query{Name: "bad", Sql: "SELECT count(* AS n FROM matches"})
	wantCode(t, "SQL the engine refuses", err, codes.InvalidArgument, "1:")
	_, err = addQuery(svc, "s", &wololov1.Query{Name: "bad", Sql: "SELECT max(nope) AS n FROM match_players"})
	wantCode(t, "an unknown column", err, codes.InvalidArgument, `"nope"`)
	if c := addedOf(g); c != nil {
		t.Fatalf("a refused add made job %s", c.id)
	}

	type added struct {
		at  int64
		err error
	}
	done := make(chan added, 2)
	go func() { at, err := addQuery(svc, "s", extra); done <- added{at, err} }()
	var c *job
	testkit.WaitFor(t, "the added query's job", 10*time.Second, func() bool { c = addedOf(g); return c != nil })
	testkit.WaitFor(t, "its epochs 1 and 2 replayed", 10*time.Second, func() bool { return committedEpochs(c) == 2 })
	if c.addedTo != internalID(t, g, "s") || c.addedAt != 2 || c.files[1].report.Rows != int64(strings.Count(tPlayers.body, "\n")) || c.epochFiles(2)[1].report.Rows != 2 {
		t.Fatalf("the added job: follows %q at epoch %d, players of epoch 1 %+v, of epoch 2 %+v", c.addedTo, c.addedAt, c.files[1].report, c.epochFiles(2)[1].report)
	}
	_, err = svc.AppendJob(ctx, &wololov1.AppendJobRequest{JobId: c.name, Matches: sMatches.header(), Players: rPlayers.header()})
	wantCode(t, "an append to the added job", err, codes.FailedPrecondition, "added to another")
	_, err = svc.CloseJob(ctx, &wololov1.CloseJobRequest{JobId: c.name})
	wantCode(t, "a close of the added job", err, codes.FailedPrecondition, "added to another")
	go func() { at, err := addQuery(svc, "s", extra); done <- added{at, err} }() // a retry
	publish(t, g, store, c.name, versionRecords(1, "extra.csv"))
	publish(t, g, store, c.name, versionRecords(2, "extra.csv"))
	for range 2 {
		if a := <-done; a.err != nil || a.at != 2 {
			t.Fatalf("the add: at epoch %d, %v; want 2", a.at, a.err)
		}
	}
	if got, _, err := results(svc, "s", 2); err != nil || got["extra.csv"] != "n\nextra.csv@2\n" || got["q1.csv"] != "n\nq1.csv@2\n" {
		t.Fatalf("results of epoch 2: %q, %v", got, err)
	}
	if names := latestNames(g, "s"); !slices.Equal(names, append(slices.Clone(q1to4), "extra.csv")) {
		t.Fatalf("the latest version's queries (ClusterJob.latest): %v; want the added one too", names)
	}
	if got, _, err := results(svc, "s", 1); err != nil || got["extra.csv"] != "" {
		t.Fatalf("results of epoch 1, before the add: %q, %v", got, err)
	}

	if _, err := svc.AppendJob(ctx, &wololov1.AppendJobRequest{JobId: "s", Matches: hMatches.header(), Players: oPlayers.header()}); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 3, hMatches, oPlayers)
	publish(t, g, store, "s", versionRecords(3, q1to4...))
	testkit.WaitFor(t, "epoch 3 replayed into the added job", 10*time.Second, func() bool { return committedEpochs(c) == 3 })
	if _, _, err := results(svc, "s", 3); err == nil {
		t.Fatal("epoch 3 is published without the added query's version")
	}
	publish(t, g, store, c.name, versionRecords(3, "extra.csv"))
	if got, _, err := results(svc, "s", 3); err != nil || got["extra.csv"] != "n\nextra.csv@3\n" {
		t.Fatalf("results of epoch 3: %q, %v", got, err)
	}

	// A gateway restarted on the store links the added job again: the
	// job's versions have the added query's, and its next epoch is
	// replayed into the added job, whose version it waits for.
	g2 := newTestGateway(t, store, cfg, dropped)
	svc = g2.Service()
	if got, _, err := results(svc, "s", 3); err != nil || got["extra.csv"] != "n\nextra.csv@3\n" {
		t.Fatalf("restarted, results of epoch 3: %q, %v", got, err)
	}
	c = addedOf(g2)
	if _, err := svc.AppendJob(ctx, appendRequest("s", oPlayers)); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 4, sMatches, oPlayers)
	publish(t, g2, store, "s", versionRecords(4, q1to4...))
	testkit.WaitFor(t, "epoch 4 replayed into the added job", 10*time.Second, func() bool { return committedEpochs(c) == 4 })
	if _, _, err := results(svc, "s", 4); err == nil {
		t.Fatal("restarted, epoch 4 is published without the added query's version")
	}
	publish(t, g2, store, c.name, versionRecords(4, "extra.csv"))
	if got, _, err := results(svc, "s", 4); err != nil || got["extra.csv"] != "n\nextra.csv@4\n" {
		t.Fatalf("restarted, results of epoch 4: %q, %v", got, err)
	}

	// The job run again after a lost state keeps its added query: the
	// new run's versions, published again, have it.
	if err := g2.FailJob(transport.JobFailure{Job: internalID(t, g2, "s"), Reporter: "shard-1", Reason: "channel state lost", StateLost: true}); err != nil {
		t.Fatal(err)
	}
	nj, err := g2.jobs.lookup("", "s")
	if err != nil {
		t.Fatal(err)
	}
	<-nj.replayed
	for k := int64(1); k <= 4; k++ {
		publish(t, g2, store, "s", versionRecords(k, q1to4...))
	}
	testkit.WaitFor(t, "the new run's epoch 4 with the added query", 10*time.Second, func() bool {
		got, _, err := results(svc, "s", 4)
		return err == nil && got["extra.csv"] == "n\nextra.csv@4\n"
	})

	if _, err := svc.CloseJob(ctx, &wololov1.CloseJobRequest{JobId: "s"}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the added job closed", 10*time.Second, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.standing.closed
	})
	if _, err := svc.DeleteJob(ctx, &wololov1.DeleteJobRequest{JobId: "s"}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the added job dropped everywhere", 10*time.Second, func() bool {
		for {
			select {
			case id := <-dropped:
				if id == c.id {
					return true
				}
			default:
				return false
			}
		}
	})
}

// TestFollowedSeesTheRunThatReplacedIt: where a standing job stands, as
// an added query's job follows it (keepUp), says when a run replaced it,
// read under the same lock as the rest. A follower that read the run
// just before a rebuild replaced it, and its state just after, would
// otherwise wait for a change of a run that changes no more (the
// added query of a job rebuilt after a lost state never followed the
// new run: TestAddedQueryLifecycle's rare time-out).
func TestFollowedSeesTheRunThatReplacedIt(t *testing.T) {
	store, cfg := transport.NewMemStore(), retainingConfig(t)
	g := newTestGateway(t, store, cfg, make(chan string, 8))
	svc := g.Service()
	if _, err := svc.CreateJob(context.Background(), &wololov1.CreateJobRequest{JobId: "s", Matches: tMatches.header(), Players: tPlayers.header(), Standing: true}); err != nil {
		t.Fatal(err)
	}
	old, err := g.jobs.lookup("", "s")
	if err != nil {
		t.Fatal(err)
	}
	if st := old.followed(); st.replaced {
		t.Fatal("a run no other replaced says it was replaced")
	}
	nj, err := g.jobs.replace(old, "state lost in a test")
	if err != nil {
		t.Fatal(err)
	}
	if st := old.followed(); !st.replaced {
		t.Fatalf("the run %s replaced says it was not", nj.id)
	}
	if st := nj.followed(); st.replaced {
		t.Fatal("the new run says it was replaced")
	}
}
