package gateway

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/inputlog"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/transport"
)

// hPlayers is a players file of its header alone.
var hPlayers = csvFile{schema.RequiredColumns[schema.Players], ""}

// TestStandingJobRebuiltFromItsEpochs: a standing job whose state a
// process lost runs again from its retained epochs, epoch by epoch: the
// committed ones replayed whole and ended (an epoch's file of a header
// alone too), the open one as far as its copies go, for its client to
// resume; a watcher of its answers follows it to the new run, which
// publishes its versions again. A closed job lost again is closed again
// once replayed; a gateway restarted then holds the run closed.
func TestStandingJobRebuiltFromItsEpochs(t *testing.T) {
	store := transport.NewMemStore()
	inputs, err := inputlog.Open(filepath.Join(t.TempDir(), "input"))
	if err != nil {
		t.Fatal(err)
	}
	fake := &fakeEpochs{}
	dropped := make(chan string, 8)
	cfg := Config{Retention: time.Hour, Epochs: fake.runtime(), Inputs: inputs}
	g := newTestGateway(t, store, cfg, dropped)
	svc := g.Service()
	ctx := context.Background()
	if _, err := svc.CreateJob(ctx, standingRequest("s")); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 1, tMatches, tPlayers)
	publish(t, g, store, "s", versionRecords(1, q1to4...))
	if _, err := svc.AppendJob(ctx, appendRequest("s", hPlayers)); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 2, sMatches, hPlayers)
	publish(t, g, store, "s", versionRecords(2, q1to4...))
	// Epoch 3 open: its players in, its matches not yet.
	if _, err := svc.AppendJob(ctx, appendRequest("s", oPlayers)); err != nil {
		t.Fatal(err)
	}
	if _, err := uploadInput(svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_PLAYERS, Epoch: 3}, oPlayers, true); err != nil {
		t.Fatal(err)
	}
	stream := &answersStream{ctx: t.Context(), sent: make(chan *wololov1.WatchAnswersResponse, 64)}
	go func() { _ = svc.WatchAnswers(&wololov1.WatchAnswersRequest{JobId: "s", FromEpoch: 2}, stream) }()
	nextEpoch := func() int64 {
		t.Helper()
		for {
			select {
			case r := <-stream.sent:
				if r.EndOfEpoch {
					return r.Epoch
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no epoch watched within 10 s")
			}
		}
	}
	if k := nextEpoch(); k != 2 {
		t.Fatalf("watched epoch %d first, want 2", k)
	}

	lose := func(wantEnds int) *job {
		t.Helper()
		old := internalID(t, g, "s")
		ends := fake.endCalls()
		if err := g.FailJob(transport.JobFailure{Job: old, Reporter: "shard-1", Reason: "channel state lost", StateLost: true}); err != nil {
			t.Fatal(err)
		}
		nj, err := g.jobs.lookup("", "s")
		if err != nil || nj.id == old {
			t.Fatalf("after the loss the job is run %v (%v); want a new run", nj, err)
		}
		select {
		case <-nj.replayed:
		case <-time.After(10 * time.Second):
			t.Fatal("the rebuilt run's replay did not end within 10 s")
		}
		if n := fake.endCalls() - ends; n != wantEnds {
			t.Fatalf("the replay ended epochs with %d EndEpoch calls; want %d (2 per epoch committed)", n, wantEnds)
		}
		return nj
	}
	lose(4)
	j := getJob(t, svc, "s")
	if j.State == wololov1.JobState_JOB_STATE_FAILED || j.Epochs != 3 || j.EpochsCommitted != 2 || j.EpochsPublished != 0 || len(j.Rebuilds) != 1 {
		t.Fatalf("rebuilt: %+v", j)
	}
	if j.Players.Rows != 4 || !j.Players.Done || j.Matches.Done {
		t.Fatalf("rebuilt: players %+v, matches %+v; want every player row replayed, epoch 3's matches not", j.Players, j.Matches)
	}
	// The client resumes epoch 3; the new run publishes its versions,
	// and the watcher, which had epoch 2, gets epoch 3.
	if _, err := uploadInput(svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 3}, sMatches, true); err != nil {
		t.Fatal(err)
	}
	if j := getJob(t, svc, "s"); j.EpochsCommitted != 3 {
		t.Fatalf("epoch 3 resumed into the new run: %+v", j)
	}
	for k := int64(1); k <= 3; k++ {
		publish(t, g, store, "s", versionRecords(k, q1to4...))
	}
	if k := nextEpoch(); k != 3 {
		t.Fatalf("the watcher got epoch %d after the rebuild; want 3", k)
	}

	// Closed, then lost again: the new run is closed once replayed.
	if _, err := svc.CloseJob(ctx, &wololov1.CloseJobRequest{JobId: "s"}); err != nil {
		t.Fatal(err)
	}
	nj := lose(6)
	if j := getJob(t, svc, "s"); j.Open || j.EpochsCommitted != 3 || len(j.Rebuilds) != 2 {
		t.Fatalf("a closed job rebuilt: %+v; want it closed again", j)
	}
	g2 := newTestGateway(t, store, cfg, make(chan string, 8))
	if j := getJob(t, g2.Service(), "s"); j.Open || j.EpochsCommitted != 3 || internalID(t, g2, "s") != nj.id {
		t.Fatalf("restarted: %+v", j)
	}
}

// TestStandingRebuildResumesAfterARestart: a gateway stopped during a
// standing job's rebuild (the new run's description and its epochs
// durable, its replay through epoch 1) resumes the replay when it
// restarts: the lost run is dropped, its retained epochs are the new
// run's, and the epochs not in yet are replayed and ended.
func TestStandingRebuildResumesAfterARestart(t *testing.T) {
	store := transport.NewMemStore()
	inputs, err := inputlog.Open(filepath.Join(t.TempDir(), "input"))
	if err != nil {
		t.Fatal(err)
	}
	fake := &fakeEpochs{}
	cfg := Config{Retention: time.Hour, Epochs: fake.runtime(), Inputs: inputs}
	g := newTestGateway(t, store, cfg, make(chan string, 8))
	svc := g.Service()
	ctx := context.Background()
	if _, err := svc.CreateJob(ctx, standingRequest("s")); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 1, tMatches, tPlayers)
	if _, err := svc.AppendJob(ctx, appendRequest("s", sPlayers)); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 2, sMatches, sPlayers)
	oldID := internalID(t, g, "s")

	// What replace commits, and the stop before anything else.
	_, records := rebuildRecords(t, store, oldID, "state lost at 12:00:00 UTC, found by shard-1: channel state lost")
	const newID = "rebuiltrun02"
	// The replay had epoch 1 in (its end committed with its last file):
	// the new run is running, epoch 2 still to replay.
	end := &wololov1.EpochEnd{Append: 1, Rows: map[string]int64{}}
	for key, f := range map[string]csvFile{"matches.csv": tMatches, "match_players.csv": tPlayers} {
		rows := int64(strings.Count(f.body, "\n"))
		if records[uploadKey(key)], err = proto.Marshal(&wololov1.UploadRecord{Offset: f.size(), Done: true, Rows: rows}); err != nil {
			t.Fatal(err)
		}
		end.Rows[strings.TrimSuffix(key, ".csv")] = rows
	}
	if records[epochEndKey(1)], err = proto.Marshal(end); err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(&transport.Commit{Job: newID, Records: records}); err != nil {
		t.Fatal(err)
	}

	ends := fake.endCalls()
	g2 := newTestGateway(t, store, cfg, make(chan string, 8))
	if id := internalID(t, g2, "s"); id != newID {
		t.Fatalf("the job is run %s after the restart, want the rebuild %s", id, newID)
	}
	testkit.WaitFor(t, "the resumed replay to commit epoch 2", 10*time.Second, func() bool {
		return getJob(t, g2.Service(), "s").EpochsCommitted == 2
	})
	if n := fake.endCalls() - ends; n != 2 {
		t.Fatalf("the resumed replay: %d EndEpoch calls; want 2 (epoch 2's)", n)
	}
	if j := getJob(t, g2.Service(), "s"); j.Epochs != 2 || j.Players.Rows != 5 || !j.Open {
		t.Fatalf("after the resumed replay: %+v", j)
	}
	if inputs.Has(oldID) || !inputs.Has(newID) {
		t.Fatalf("the retained epochs are not the new run's (old %v, new %v)", inputs.Has(oldID), inputs.Has(newID))
	}
}
