package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/transport"
)

// cutJob makes standing job "s" on g, two appends that --epoch-every
// (cutter's script) cut: append 1's matches after 20 rows and after 30,
// its end after its players; append 2's matches after 5 of their rows,
// its players after 1, its end after them. It returns the epochs' ends.
func cutJob(t *testing.T, g *Gateway, store transport.Store, cutter *scriptedCutter) []*wololov1.EpochEnd {
	t.Helper()
	svc := g.Service()
	matches := csvFile{schema.RequiredColumns[schema.Matches], matchRows(0, 30)}
	req := &wololov1.CreateJobRequest{JobId: "s", Matches: matches.header(), Players: tPlayers.header(), Standing: true, EpochEveryMs: 1000}
	if _, err := svc.CreateJob(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	cutter.set(false, false, true, true)
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 1},
		[]string{"", matchRows(0, 10), matchRows(10, 20), matchRows(20, 30)}, matches.size())
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_PLAYERS, Epoch: 1}, []string{tPlayers.body}, tPlayers.size())
	more := csvFile{schema.RequiredColumns[schema.Matches], matchRows(40, 50)}
	if _, err := svc.AppendJob(context.Background(), &wololov1.AppendJobRequest{JobId: "s", Matches: more.header(), Players: sPlayers.header()}); err != nil {
		t.Fatal(err)
	}
	cutter.set(true, false)
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 2}, []string{matchRows(40, 45), matchRows(45, 50)}, more.size())
	first, _, _ := strings.Cut(sPlayers.body, "\n")
	cutter.set(true, false)
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_PLAYERS, Epoch: 2}, []string{first + "\n", strings.TrimPrefix(sPlayers.body, first+"\n")}, sPlayers.size())
	ends := epochEnds(t, g, store, "s")
	wantEnds(t, "the job cut", ends, ended(1, true, 20, 0), ended(1, true, 30, 0), ended(1, false, 30, 3),
		ended(2, true, 35, 3), ended(2, true, 40, 4), ended(2, false, 40, 5))
	return ends
}

// TestCutJobRunAgainAtItsCuts: a standing job whose appends
// --epoch-every cut into several epochs, run again after a lost state,
// replays each append up to each cut and cuts it there, whatever the
// clock says (the cutter would cut at every step): the new run's epochs
// end as the lost run's did, over the same rows of each table, so its
// versions are the lost run's. Lost again, the run after it still does.
func TestCutJobRunAgainAtItsCuts(t *testing.T) {
	store, cfg := transport.NewMemStore(), retainingConfig(t)
	fake := &fakeEpochs{}
	cutter := &scriptedCutter{}
	cfg.Epochs, cfg.EpochCutter = fake.runtime(), cutter.make
	g := newTestGateway(t, store, cfg, make(chan string, 8))
	want := cutJob(t, g, store, cutter)
	for run := 1; run <= 2; run++ {
		old := internalID(t, g, "s")
		calls := fake.endCalls()
		cutter.set(always(100)...)
		if err := g.FailJob(transport.JobFailure{Job: old, Reporter: "shard-1", Reason: "channel state lost", StateLost: true}); err != nil {
			t.Fatal(err)
		}
		nj, err := g.jobs.lookup("", "s")
		if err != nil || nj.id == old {
			t.Fatalf("run %d: the job is run %s (%v) after the loss; want a new run", run, old, err)
		}
		select {
		case <-nj.replayed:
		case <-time.After(10 * time.Second):
			t.Fatal("the replay did not end within 10 s")
		}
		if j := getJob(t, g.Service(), "s"); j.State == wololov1.JobState_JOB_STATE_FAILED {
			t.Fatalf("run %d: failed: %s", run, j.Message)
		}
		wantEnds(t, "the job run again", epochEnds(t, g, store, "s"), want...)
		if n := fake.endCalls() - calls; n != 2*len(want) {
			t.Errorf("run %d: %d EndEpoch calls; want 2 for each of the %d epochs", run, n, len(want))
		}
	}
	// The rebuilt run takes a client's cuts again once its replay is
	// over: append 3, cut after 2 rows by the clock.
	svc := g.Service()
	more := csvFile{schema.RequiredColumns[schema.Matches], matchRows(60, 64)}
	if _, err := svc.AppendJob(context.Background(), &wololov1.AppendJobRequest{JobId: "s", Matches: more.header(), Players: hPlayers.header()}); err != nil {
		t.Fatal(err)
	}
	cutter.set(true)
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 3}, []string{matchRows(60, 62), matchRows(62, 64)}, more.size())
	if ends := epochEnds(t, g, store, "s"); len(ends) != len(want)+1 || !ends[len(want)].Cut {
		t.Fatalf("after the replay, a client's append: ends %v; want one more, cut", ends)
	}
}

// always is a script of n cuts due.
func always(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

// TestQueryAddedToACutJob: a query added to a standing job whose appends
// --epoch-every cut into epochs backfills epoch by epoch as the job's
// were cut (its job's epochs end where the job's ended, over the same
// rows), so its versions are numbered as the job's; an append cut into
// epochs after the add is taken, and the added job cuts it as the job
// did.
func TestQueryAddedToACutJob(t *testing.T) {
	store, cfg := transport.NewMemStore(), retainingConfig(t)
	cutter := &scriptedCutter{}
	cfg.EpochCutter = cutter.make
	g := newTestGateway(t, store, cfg, make(chan string, 8))
	svc := g.Service()
	want := cutJob(t, g, store, cutter)
	publishAll(t, g, store, "s", int64(len(want)))
	cutter.set(always(100)...) // the added job's replay asks no clock
	done := make(chan error, 1)
	go func() {
		at, err := addQuery(svc, "s", &wololov1.Query{Name: "extra", Sql: "SELECT civ, count(*) AS n FROM match_players GROUP BY civ"})
		if err == nil && at != int64(len(want)) {
			err = errorf(ErrInvalid, "added at epoch %d, want %d", at, len(want))
		}
		done <- err
	}()
	var c *job
	testkit.WaitFor(t, "the added query's job", 10*time.Second, func() bool { c = addedOf(g); return c != nil })
	testkit.WaitFor(t, "its appends replayed", 10*time.Second, func() bool { return committedEpochs(c) == 2 })
	wantEnds(t, "the added query's job", epochEnds(t, g, store, c.name), want...)
	for k := range int64(len(want)) {
		publish(t, g, store, c.name, versionRecords(k+1, "extra.csv"))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Append 3, cut after its first two matches: the added job cuts it
	// there too.
	more := csvFile{schema.RequiredColumns[schema.Matches], matchRows(60, 64)}
	a := &wololov1.AppendJobRequest{JobId: "s", Matches: more.header(), Players: hPlayers.header(), EpochEveryMs: 500}
	if _, err := svc.AppendJob(context.Background(), a); err != nil {
		t.Fatalf("an append cut into epochs, to a job with an added query: %v", err)
	}
	cutter.set(true)
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 3}, []string{matchRows(60, 62), matchRows(62, 64)}, more.size())
	uploadSteps(t, svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_PLAYERS, Epoch: 3}, []string{""}, int64(len(hPlayers.head())))
	want = append(want, ended(3, true, 42, 5), ended(3, false, 44, 5))
	wantEnds(t, "the job's append 3", epochEnds(t, g, store, "s"), want...)
	testkit.WaitFor(t, "append 3 replayed into the added job", 10*time.Second, func() bool { return committedEpochs(c) == 3 })
	wantEnds(t, "the added query's job, append 3", epochEnds(t, g, store, c.name), want...)
}
