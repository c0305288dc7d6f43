package stage

import (
	"errors"
	"reflect"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
)

// badTokens is a token batch whose offsets run past its data: every
// reader rejects it.
func badTokens() *wololov1.RowBatch {
	return &wololov1.RowBatch{Rows: &wololov1.RowBatch_Tokens{Tokens: &wololov1.TokenRows{Token: &wololov1.TextColumn{Data: []byte("ab"), Ends: []uint32{5}}}}}
}

// TestDriver: a stream ends for the operator when its last sender ends it,
// once; the operator is due to finish when every stream has; a rejected
// batch is dropped and counted; nothing reaches the operator after Finish.
func TestDriver(t *testing.T) {
	var log calls
	op := &endingOp{tokenOp{name: "op", outs: []string{"out"}, log: &log}}
	d := NewDriver(op, map[string]int{"a": 2, "b": 1})
	out := &recorder{}
	must := func(due bool, err error) bool {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return due
	}
	if err := d.Apply("a", tokens("x"), out); err != nil {
		t.Fatal(err)
	}
	if err := d.Apply("a", badTokens(), out); !errors.Is(err, batch.ErrBadBatch) {
		t.Errorf("a rejected batch: %v, want the operator's ErrBadBatch", err)
	}
	d.Drop()
	if d.Dropped() != 2 {
		t.Errorf("Dropped = %d, want 2 (one rejected, one Drop)", d.Dropped())
	}
	if must(d.End("a", "s0", out)) || d.Ended("a") {
		t.Error("a ended with one of its two senders")
	}
	if must(d.End("a", "s0", out)) || must(d.End("c", "s0", out)) {
		t.Error("an end noted again, or of a stream the operator does not read, made it due")
	}
	if must(d.End("a", "s1", out)) || !d.Ended("a") || d.AllEnded() {
		t.Error("a did not end alone with its second sender")
	}
	if !must(d.End("b", "s0", out)) || !d.AllEnded() {
		t.Error("the last stream's end did not make the operator due")
	}
	if err := d.Finish(out); err != nil || !d.Finished() {
		t.Fatalf("Finish: %v", err)
	}
	if err := d.Finish(out); err != nil {
		t.Fatal(err)
	}
	if err := d.Apply("a", tokens("late"), out); err != nil || must(d.End("b", "s1", out)) {
		t.Error("the driver took input after Finish")
	}
	want := calls{"op apply a [x]", "op apply a []", "op end a", "op end b", "op finish"}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("operator calls:\n got %q\nwant %q", log, want)
	}
}

// TestDriverRestore: ends restored are not told to the operator, and count
// towards the stream's and the inputs' ends.
func TestDriverRestore(t *testing.T) {
	var log calls
	op := &endingOp{tokenOp{name: "op", log: &log}}
	d := NewDriver(op, map[string]int{"a": 2, "b": 1})
	d.Restore("a", "s0")
	d.Restore("b", "s0")
	if d.Ended("a") || !d.Ended("b") || d.AllEnded() {
		t.Fatalf("after restoring a/s0 and b: a ended %v, b ended %v", d.Ended("a"), d.Ended("b"))
	}
	due, err := d.End("a", "s1", &recorder{})
	if err != nil || !due {
		t.Errorf("the last end after a restore: due %v, %v", due, err)
	}
	if want := (calls{"op end a"}); !reflect.DeepEqual(log, want) {
		t.Errorf("operator calls %q, want %q", log, want)
	}

	// An operator without inputs is due at once.
	if !NewDriver(op, nil).AllEnded() {
		t.Error("an operator without inputs is not due")
	}
}
