package gateway

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/inputlog"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/transport"
)

// storeGraphJob commits, as a gateway of an older version did, the
// description of a job of the hand-written graph (no queries, no plan:
// the graph ran the four default queries), under internal id, with the
// given records besides.
func storeGraphJob(t *testing.T, store transport.Store, id, name string, more map[string][]byte) {
	t.Helper()
	rec := &wololov1.JobRecord{CreatedUnixMs: time.Now().UnixMilli(), Name: name}
	for _, f := range schema.Files {
		rec.Files = append(rec.Files, &wololov1.FileRecord{Columns: schema.RequiredColumns[f], Size: 100, DataOffset: 10})
	}
	b, err := proto.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	records := map[string][]byte{recordMeta: b}
	for k, v := range more {
		records[k] = v
	}
	if err := store.Commit(&transport.Commit{Job: id, Records: records}); err != nil {
		t.Fatal(err)
	}
}

// TestAGraphJobOfAnOlderVersionTakesTheLostStatePath: a store written by
// a version that ran the hand-written graph holds jobs without queries or
// a plan. The gateway recovers them (their records decode, nothing
// crashes): one that finished keeps its answers; one that did not has no
// plan to run (PlanOf: none, which the processes refuse: stage.ErrNoPlan)
// and, when a process reports its state lost, runs again from its
// retained input as the four default queries, planned as SQL; without a
// retained input it fails as lost, for its client to submit again.
func TestAGraphJobOfAnOlderVersionTakesTheLostStatePath(t *testing.T) {
	store := transport.NewMemStore()
	storeGraphJob(t, store, "graphjob0001", "running", nil)
	storeGraphJob(t, store, "graphjob0002", "finished", headerOnlyResults())
	inputs, err := inputlog.Open(filepath.Join(t.TempDir(), "input"))
	if err != nil {
		t.Fatal(err)
	}
	svc := testGatewayWith(t, store, Config{Retention: time.Hour, Inputs: inputs}, make(chan string, 4))
	g := svc.(jobService).g

	var c collect
	if err := svc.GetResults(&wololov1.GetResultsRequest{JobId: "finished"}, &c); err != nil || !slices.Equal(c.names, schema.ResultFiles(queries.Names)) {
		t.Fatalf("the finished job's answers: %q, %v; want %q", c.names, err, schema.ResultFiles(queries.Names))
	}
	r, err := svc.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "running"})
	if err != nil || r.Job.State != wololov1.JobState_JOB_STATE_UPLOADING || !slices.Equal(r.Job.Queries, defaultNames) {
		t.Fatalf("the running job: %v, %v; want it uploading, of the default queries' names", r, err)
	}
	if plan, ok := g.PlanOf("graphjob0001"); !ok || plan != nil {
		t.Fatalf("PlanOf the graph's job: %d bytes, %v; want none, known", len(plan), ok)
	}

	// What the gateway's own runtime reports of it after its recovery.
	lost := transport.JobFailure{Job: "graphjob0001", Reporter: "gateway-0", Reason: stage.ErrNoPlan.Error(), StateLost: true}
	if err := g.FailJob(lost); err != nil {
		t.Fatal(err)
	}
	id := internalID(t, g, "running")
	if id == "graphjob0001" {
		t.Fatal("the lost job was not run again")
	}
	plan, ok := g.PlanOf(id)
	if !ok || len(plan) == 0 {
		t.Fatalf("the new run has no plan (%v)", ok)
	}
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := decodeJobRecord(img.Jobs[id].Records[recordMeta])
	if err != nil || len(rec.Queries) != len(defaultQueries) || rec.RebuildOf != "graphjob0001" {
		t.Fatalf("the new run's record: %v, %v; want the default queries, rebuilding the old run", rec, err)
	}
	if _, held := img.Jobs["graphjob0001"]; held {
		t.Fatal("the old run is still in the store")
	}

	// Without a retained input, it fails as lost.
	store = transport.NewMemStore()
	storeGraphJob(t, store, "graphjob0003", "unkept", nil)
	svc = testGateway(t, store, time.Hour, make(chan string, 4))
	g = svc.(jobService).g
	if err := g.FailJob(transport.JobFailure{Job: "graphjob0003", Reporter: "gateway-0", Reason: stage.ErrNoPlan.Error(), StateLost: true}); err != nil {
		t.Fatal(err)
	}
	j, err := g.jobs.lookup("", "unkept")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.failure(); err == nil || !j.lost {
		t.Fatalf("the job without a retained input: failure %v, lost %v; want it failed as lost", err, j.lost)
	}
	if !errors.Is(j.failure(), ErrJobFailed) {
		t.Fatalf("its failure %v is not ErrJobFailed", j.failure())
	}
}
