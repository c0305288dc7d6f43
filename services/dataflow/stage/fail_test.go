package stage_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/transport"
)

// overBudget is the error of an operator past a budget of its job.
type overBudget struct{}

func (overBudget) Error() string        { return "over its budget (--flag)" }
func (overBudget) Is(target error) bool { return target == stage.ErrFailsJob }

// failingOp is an operator that emits a row for every batch it is given
// and fails the job (stage.ErrFailsJob) on its second, after emitting;
// applied counts the batches given to every one made.
type failingOp struct{ mine, applied *int }

func (o *failingOp) Apply(_ int, _ []byte, out stage.Emitter) (int, error) {
	*o.mine++
	*o.applied++
	out.Encoded(sumOut, 0, rowsOf("Aztecs 1"), 1)
	if *o.mine == 2 {
		return 0, fmt.Errorf("operator: %w", overBudget{})
	}
	return 1, nil
}

func (o *failingOp) Finish(out stage.Emitter) error {
	out.Encoded(sumOut, 0, rowsOf("Finished 1"), 1)
	return nil
}

// TestAnOperatorThatFailsTheJobFailsItOnce: an operator's error that fails
// the job (stage.ErrFailsJob) is not a dropped batch: the commit of the
// step that met it emits nothing, drops the job's state log and records
// the failure, OnFail hears it once, and the job's later batches and ends
// are acknowledged without the operator (nothing emitted, no finish).
// After a restart the job is not replayed,
// Failed reports it again, and its channels are still taken.
func TestAnOperatorThatFailsTheJobFailsItOnce(t *testing.T) {
	store := transport.NewMemStore()
	applied := 0
	spec := testPlans["sum"]
	spec.New = func() stage.Operator { return &failingOp{mine: new(int), applied: &applied} }
	testPlans["failing"] = spec
	t.Cleanup(func() { delete(testPlans, "failing") })
	ch := fromShard("j", 0)
	rows := rowsOf("Aztecs 2")
	failed := make(chan string, 4)
	onFail := func(c *stage.Config) {
		c.OnFail = func(_ context.Context, job, reason string) { failed <- job + ": " + reason }
	}

	rt, outbox, stop := startRuntime(t, shard0, store, onFail)
	if err := rt.IntroduceJob("j", []byte("failing")); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 3; seq++ {
		if err := deliver(t, rt, ch, &wololov1.Batch{Seq: seq, Rows: rows}); err != nil {
			t.Fatalf("batch %d: %v", seq, err)
		}
	}
	if err := deliver(t, rt, ch, &wololov1.Batch{Seq: 4, Eof: true}); err != nil {
		t.Fatalf("the end: %v", err)
	}
	select {
	case got := <-failed:
		if !strings.HasPrefix(got, "j: ") || !strings.Contains(got, "over its budget") {
			t.Fatalf("OnFail heard %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnFail never heard of the failure")
	}
	pending, err := outbox.Pending(context.Background(), toGateway("j"), 0)
	if err != nil || len(pending) != 1 || pending[0].EOF {
		t.Fatalf("outbox %+v, %v: want the first batch's row alone (no later one, no finish, no end)", pending, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	img, err := transport.LoadAll(store)
	if err != nil {
		t.Fatal(err)
	}
	ji := img.Jobs["j"]
	if ji == nil || !strings.Contains(string(ji.Records["stage/failed"]), "over its budget") || len(ji.State) != 0 {
		t.Fatalf("the store holds %+v: want the failure recorded and no state log", ji)
	}
	if applied != 2 {
		t.Fatalf("%d batches applied before the restart, want 2 (none after the failure)", applied)
	}

	rt, _, _ = startRuntime(t, shard0, store, onFail)
	if applied != 2 {
		t.Fatalf("the restart replayed the failed job (%d batches applied in all)", applied)
	}
	if got := rt.Failed(); !strings.Contains(got["j"], "over its budget") {
		t.Fatalf("Failed after the restart = %v", got)
	}
	if wm, err := rt.Open(ch); err != nil || wm != 4 {
		t.Fatalf("the failed job's channel after the restart: watermark %d, %v; want 4", wm, err)
	}
	select {
	case got := <-failed:
		t.Fatalf("OnFail heard %q again from Recover: the process reports Failed itself", got)
	default:
	}
	if err := rt.DropJob("j"); err != nil {
		t.Fatal(err)
	}
	if got := rt.Failed(); len(got) != 0 {
		t.Fatalf("after the drop, Failed = %v", got)
	}
}
