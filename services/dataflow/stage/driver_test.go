package stage

import (
	"errors"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

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
	if _, err := d.ApplyEncoded("a", []byte{0xff}, out); err == nil {
		t.Error("a batch that does not decode was applied")
	}
	if d.Dropped() != 2 {
		t.Errorf("Dropped = %d, want 2 (one rejected, one that does not decode)", d.Dropped())
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

// bytesOp reads its batches as bytes (EncodedApplier): a batch of n bytes
// is n rows, an empty one is refused.
type bytesOp struct {
	tokenOp
	got [][]byte
}

func (o *bytesOp) ApplyEncoded(stream string, encoded []byte, _ Emitter) (int, error) {
	if len(encoded) == 0 {
		return 0, batch.ErrBadBatch
	}
	o.got = append(o.got, encoded)
	return len(encoded), nil
}

// TestDriverApplyEncoded: a batch as it travels reaches an operator that
// reads bytes as those bytes, and any other operator decoded; a batch
// that does not decode, or that the operator refuses, is dropped and
// counted, and the rows applied are returned.
func TestDriverApplyEncoded(t *testing.T) {
	var log calls
	out := &recorder{}
	wire, err := proto.Marshal(tokens("x", "y"))
	if err != nil {
		t.Fatal(err)
	}
	plain := NewDriver(&tokenOp{name: "op", log: &log}, map[string]int{"a": 1})
	if n, err := plain.ApplyEncoded("a", wire, out); err != nil || n != 2 {
		t.Errorf("decoded for the operator: %d rows, %v; want 2", n, err)
	}
	if n, err := plain.ApplyEncoded("a", []byte{0xff}, out); err == nil || n != 0 || plain.Dropped() != 1 {
		t.Errorf("undecodable bytes: %d rows, %v, %d dropped; want an error and one dropped", n, err, plain.Dropped())
	}
	if want := (calls{"op apply a [x y]"}); !reflect.DeepEqual(log, want) {
		t.Errorf("operator calls %q, want %q", log, want)
	}
	op := &bytesOp{tokenOp: tokenOp{name: "bytes", log: &log}}
	raw := NewDriver(op, map[string]int{"a": 1})
	if n, err := raw.ApplyEncoded("a", []byte{0xff, 1, 2}, out); err != nil || n != 3 || len(op.got) != 1 {
		t.Errorf("bytes for the operator that reads them: %d rows, %v", n, err)
	}
	if _, err := raw.ApplyEncoded("a", nil, out); !errors.Is(err, batch.ErrBadBatch) || raw.Dropped() != 1 {
		t.Errorf("refused bytes: %v, %d dropped", err, raw.Dropped())
	}
	if err := raw.Finish(out); err != nil {
		t.Fatal(err)
	}
	if n, err := raw.ApplyEncoded("a", []byte{1}, out); n != 0 || err != nil || len(op.got) != 1 {
		t.Error("bytes reached the operator after Finish")
	}
}
