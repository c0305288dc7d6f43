package stage

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/wololo/wololo/services/dataflow/batch"
)

// calls records what operators were asked to do, in order.
type calls []string

func (c *calls) add(format string, args ...any) { *c = append(*c, fmt.Sprintf(format, args...)) }

// endingOp logs its calls: a batch of n bytes is n rows, an empty one is
// refused; it hears its inputs end.
type endingOp struct{ log *calls }

func (o *endingOp) Apply(k int, b []byte, _ Emitter) (int, error) {
	if len(b) == 0 {
		return 0, batch.ErrBadBatch
	}
	o.log.add("apply %d %s", k, b)
	return len(b), nil
}

func (o *endingOp) EndInput(k int, _ Emitter) error {
	o.log.add("end %d", k)
	return nil
}

func (o *endingOp) Finish(Emitter) error {
	o.log.add("finish")
	return nil
}

// TestDriver: an input ends for the operator when its last sender ends
// it, once; the operator is due to finish when every input has; a
// rejected batch is dropped and counted; nothing reaches the operator
// after Finish.
func TestDriver(t *testing.T) {
	var log calls
	d := NewDriver(&endingOp{&log}, []int{2, 1})
	must := func(due bool, err error) bool {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return due
	}
	if n, err := d.Apply(0, []byte("xy"), Discard); err != nil || n != 2 {
		t.Fatalf("Apply: %d, %v", n, err)
	}
	if _, err := d.Apply(0, nil, Discard); !errors.Is(err, batch.ErrBadBatch) {
		t.Errorf("a rejected batch: %v, want the operator's ErrBadBatch", err)
	}
	if d.Dropped() != 1 {
		t.Errorf("Dropped = %d, want 1", d.Dropped())
	}
	if must(d.End(0, 0, Discard)) || d.Ended(0) {
		t.Error("input 0 ended with one of its two senders")
	}
	if must(d.End(0, 0, Discard)) || must(d.End(2, 0, Discard)) || must(d.End(1, 5, Discard)) {
		t.Error("an end noted again, of an input the operator does not have, or of a sender it does not have, made it due")
	}
	if must(d.End(0, 1, Discard)) || !d.Ended(0) || d.AllEnded() {
		t.Error("input 0 did not end alone with its second sender")
	}
	if !must(d.End(1, 0, Discard)) || !d.AllEnded() {
		t.Error("the last input's end did not make the operator due")
	}
	if err := d.Finish(Discard); err != nil || !d.Finished() {
		t.Fatalf("Finish: %v", err)
	}
	if err := d.Finish(Discard); err != nil {
		t.Fatal(err)
	}
	if n, err := d.Apply(0, []byte("late"), Discard); err != nil || n != 0 || must(d.End(1, 0, Discard)) {
		t.Error("the driver took input after Finish")
	}
	want := calls{"apply 0 xy", "end 0", "end 1", "finish"}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("operator calls:\n got %q\nwant %q", log, want)
	}
}

// TestDriverRestore: ends restored are not told to the operator, and count
// towards the input's and the inputs' ends.
func TestDriverRestore(t *testing.T) {
	var log calls
	op := &endingOp{&log}
	d := NewDriver(op, []int{2, 1})
	d.Restore(0, 0)
	d.Restore(1, 0)
	if d.Ended(0) || !d.Ended(1) || d.AllEnded() {
		t.Fatalf("after restoring 0/0 and 1/0: 0 ended %v, 1 ended %v", d.Ended(0), d.Ended(1))
	}
	due, err := d.End(0, 1, Discard)
	if err != nil || !due {
		t.Errorf("the last end after a restore: due %v, %v", due, err)
	}
	if want := (calls{"end 0"}); !reflect.DeepEqual(log, want) {
		t.Errorf("operator calls %q, want %q", log, want)
	}

	// An operator without inputs, or whose inputs have no senders, is
	// due at once.
	if !NewDriver(op, nil).AllEnded() || !NewDriver(op, []int{0}).AllEnded() {
		t.Error("an operator without inputs to wait for is not due")
	}
}
