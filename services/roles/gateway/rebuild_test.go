package gateway

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/inputlog"
	"github.com/wololo/wololo/transport"
)

// TestRebuildSurvivesARestartBeforeTheOldRunIsDropped: a gateway that
// stops after a rebuild's description is durable and before the run it
// replaces is dropped holds both runs of the job when it restarts; the
// rebuild wins (the name names it, the old run is dropped here and queued
// for every other process, its retained input is the new run's), and a
// job without the rebuild is left alone.
func TestRebuildSurvivesARestartBeforeTheOldRunIsDropped(t *testing.T) {
	store := transport.NewMemStore()
	inputDir := filepath.Join(t.TempDir(), "input")
	inputs, err := inputlog.Open(inputDir)
	if err != nil {
		t.Fatal(err)
	}
	svc := testGatewayWith(t, store, Config{Retention: time.Hour, Inputs: inputs}, make(chan string, 4))
	g := svc.(jobService).g
	for _, name := range []string{"lost", "other"} {
		if _, err := svc.CreateJob(context.Background(), createRequest(name)); err != nil {
			t.Fatal(err)
		}
	}
	oldID, otherID := internalID(t, g, "lost"), internalID(t, g, "other")
	w, err := inputs.Writer(oldID, inputName(0), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAt([]byte("the retained bytes"), 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// What replace commits, and the stop before the drop.
	rec, records := rebuildRecords(t, store, oldID, "state lost at 12:00:00 UTC, found by gateway-0: shard-1 lost this job's state")
	const newID = "rebuiltrun01"
	// Its replay is over (else the restarted gateway would resume it).
	for _, key := range []string{"matches.csv", "match_players.csv"} {
		if records[uploadKey(key)], err = proto.Marshal(&wololov1.UploadRecord{Offset: 100, Done: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Commit(&transport.Commit{Job: newID, Records: records}); err != nil {
		t.Fatal(err)
	}

	dropped := make(chan string, 4)
	svc = testGatewayWith(t, store, Config{Retention: time.Hour, Inputs: inputs}, dropped)
	g = svc.(jobService).g
	if id := internalID(t, g, "lost"); id != newID {
		t.Fatalf("the job's name names run %s after the restart, want the rebuild %s", id, newID)
	}
	if id := internalID(t, g, "other"); id != otherID {
		t.Fatalf("the other job is run %s, want %s still", id, otherID)
	}
	r, err := svc.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "lost"})
	if err != nil || !slices.Equal(r.Job.Rebuilds, rec.Rebuilds) {
		t.Fatalf("the rebuilt job says %v, %v; want its rebuild's line", r.GetJob().GetRebuilds(), err)
	}
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, held := img.Jobs[oldID]; held || !slices.Contains(img.Dropped, oldID) {
		t.Fatalf("the replaced run is still in the store (dropped: %v)", img.Dropped)
	}
	select {
	case id := <-dropped:
		if id != oldID {
			t.Fatalf("dropped %s everywhere, want the replaced run %s", id, oldID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the replaced run was not dropped everywhere")
	}
	data, err := os.ReadFile(filepath.Join(inputDir, newID, inputName(0)))
	if err != nil || string(data) != "the retained bytes" || inputs.Has(oldID) {
		t.Fatalf("the new run's retained input: %q, %v (the old run's still there: %v)", data, err, inputs.Has(oldID))
	}
}

// TestRebuildsPerJobAreCapped: a job whose state processes lose again and
// again is run again DefaultMaxRebuilds times, then fails for its client
// as lost too often, not marked as lost state (an attached client would
// submit it again). A forged or looping report cannot make the gateway
// run one job for ever.
func TestRebuildsPerJobAreCapped(t *testing.T) {
	inputs, err := inputlog.Open(filepath.Join(t.TempDir(), "input"))
	if err != nil {
		t.Fatal(err)
	}
	svc := testGatewayWith(t, transport.NewMemStore(), Config{Retention: time.Hour, Inputs: inputs}, make(chan string, 16))
	g := svc.(jobService).g
	ctx := context.Background()
	if _, err := svc.CreateJob(ctx, createRequest("lost")); err != nil {
		t.Fatal(err)
	}
	lose := func() {
		t.Helper()
		if err := g.FailJob(transport.JobFailure{Job: internalID(t, g, "lost"), Reporter: "shard-1", Reason: "channel state lost", StateLost: true}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= DefaultMaxRebuilds; i++ {
		before := internalID(t, g, "lost")
		lose()
		r, err := svc.GetJob(ctx, &wololov1.GetJobRequest{JobId: "lost"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Job.State == wololov1.JobState_JOB_STATE_FAILED || len(r.Job.Rebuilds) != i || internalID(t, g, "lost") == before {
			t.Fatalf("loss %d: the job is %s with %d rebuilds (%q); want it run again", i, r.Job.State, len(r.Job.Rebuilds), r.Job.Message)
		}
	}
	last := internalID(t, g, "lost")
	lose()
	r, err := svc.GetJob(ctx, &wololov1.GetJobRequest{JobId: "lost"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.State != wololov1.JobState_JOB_STATE_FAILED || !strings.HasPrefix(r.Job.Message, "lost too often") || r.Job.StateLost {
		t.Fatalf("after %d rebuilds, one more loss leaves the job %s (state lost %v): %q; want it failed as lost too often", DefaultMaxRebuilds, r.Job.State, r.Job.StateLost, r.Job.Message)
	}
	if id := internalID(t, g, "lost"); id != last || len(r.Job.Rebuilds) != DefaultMaxRebuilds {
		t.Fatalf("the failed job is run %s with %d rebuilds; want run %s with %d", id, len(r.Job.Rebuilds), last, DefaultMaxRebuilds)
	}
}

// rebuildRecords are the records replace commits for the rebuild of run
// oldID (its description with rebuild_of and the rebuild's line, and a
// standing job's epochs), and the description.
func rebuildRecords(t *testing.T, store transport.Store, oldID, line string) (*wololov1.JobRecord, map[string][]byte) {
	t.Helper()
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := decodeJobRecord(img.Jobs[oldID].Records[recordMeta])
	if err != nil {
		t.Fatal(err)
	}
	rec.RebuildOf, rec.Rebuilds = oldID, []string{line}
	b, err := proto.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	records := map[string][]byte{recordMeta: b}
	if rec.Standing {
		maps.Copy(records, standingRebuildRecords(img.Jobs[oldID].Records))
	}
	return rec, records
}
