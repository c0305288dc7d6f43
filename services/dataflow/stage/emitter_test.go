package stage_test

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/transport"
)

// TestEncodeGivesTheCommitterBytesAndCounts: what the emitter cut reaches
// the Committer as the rows' encoding, sized to fit, with their count; an
// EOF carries neither.
func TestEncodeGivesTheCommitterBytesAndCounts(t *testing.T) {
	ch := transport.ChannelID{Job: "j", Stream: "q1-tokens", Sender: "a-0", Receiver: "b-0"}
	var tb batch.TokenBuilder
	for _, tok := range []string{"x1", "y22", "z333"} {
		tb.Add([]byte(tok))
	}
	rows := tb.Build()
	want, err := proto.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	out, err := stage.Encode([]stage.Emitted{{Channel: ch, Rows: rows}, {Channel: ch, EOF: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 {
		t.Fatalf("%d outputs, want 2", len(out))
	}
	if got := out[0]; got.Channel != ch || got.EOF || got.Count != 3 || string(got.Rows) != string(want) || cap(got.Rows) != len(got.Rows) {
		t.Errorf("rows: %+v, want %d bytes (capacity as long), 3 rows", got, len(want))
	}
	var back wololov1.RowBatch
	if err := proto.Unmarshal(out[0].Rows, &back); err != nil || batch.Rows(&back) != 3 {
		t.Errorf("the encoding decodes to %d rows (%v)", batch.Rows(&back), err)
	}
	if got := out[1]; got.Channel != ch || !got.EOF || got.Rows != nil || got.Count != 0 {
		t.Errorf("EOF: %+v", got)
	}
	if out, err := stage.Encode(nil); out != nil || err != nil {
		t.Errorf("nothing emitted: %v, %v", out, err)
	}
}

// TestEndingAStreamEarly: a stream ended before the job (Outputs.End) gets
// its EOF on every receiver in the next drain, after the rows emitted on
// it, and a record saying so; the job's final drain does not end it
// again, nor does a restarted instance told the record (MarkEnded); a
// discarded step opens it again. A built batch (Batch) goes to the one
// receiver named, after the rows already on that slot.
func TestEndingAStreamEarly(t *testing.T) {
	self := deploy.Instance{Stage: "shard", Index: 0}
	edges := []stage.Edge{{Stream: "a#0", Stage: "shard", Replicas: 2}, {Stream: "b#0", Stage: "gateway", Replicas: 1}}
	out := stage.EdgeOutputs(self, "j", edges, 100)
	var tb batch.TokenBuilder
	tb.Add([]byte("x"))
	out.Token("a#0", []byte("t1"))
	built := tb.Build()
	out.Batch("a#0", stage.Route([]byte("t1"), 2), built)
	out.End("a#0")
	out.End("a#0") // twice: nothing more
	emitted, records := out.Drain(false)
	var kinds []string
	for _, e := range emitted {
		k := e.Channel.Receiver + ":rows"
		if e.EOF {
			k = e.Channel.Receiver + ":eof"
		}
		kinds = append(kinds, k)
	}
	to := deploy.Instance{Stage: "shard", Index: stage.Route([]byte("t1"), 2)}.Name()
	want := []string{to + ":rows", to + ":rows", "shard-0:eof", "shard-1:eof"}
	if !slices.Equal(kinds, want) {
		t.Errorf("drained %v, want the rows, the built batch, then an EOF to each shard", kinds)
	}
	if emitted[1].Rows != built {
		t.Errorf("the built batch is not the one drained second")
	}
	if records[stage.EndedOutputRecord("a#0")] == nil {
		t.Errorf("no record of the ended stream: %v", records)
	}
	final, _ := out.Drain(true)
	if len(final) != 1 || final[0].Channel.Stream != "b#0" || !final[0].EOF {
		t.Errorf("the final drain gives %v, want only b#0's EOF", final)
	}

	restarted := stage.EdgeOutputs(self, "j", edges, 100)
	restarted.MarkEnded(records)
	if final, _ := restarted.Drain(true); len(final) != 1 || final[0].Channel.Stream != "b#0" {
		t.Errorf("a restarted instance's final drain gives %v, want only b#0's EOF", final)
	}

	discarded := stage.EdgeOutputs(self, "j", edges, 100)
	discarded.End("a#0")
	discarded.Discard()
	if final, _ := discarded.Drain(true); len(final) != 3 {
		t.Errorf("after a discarded End the final drain gives %d EOFs, want 3", len(final))
	}
}

// TestEncodedBatchesPassAsTheyAre: a batch emitted already encoded
// (EncodedEmitter) reaches the Committer as those very bytes with its
// count, after the rows emitted on its slot before it; its rows count
// among the rows out; and it reads back as Go values (RowBatch) for a
// runner that hands batches on so.
func TestEncodedBatchesPassAsTheyAre(t *testing.T) {
	self := deploy.Instance{Stage: "gateway", Index: 0}
	out := stage.EdgeOutputs(self, "j", []stage.Edge{{Stream: "a#0", Stage: "shard", Replicas: 1}}, 100)
	var tb batch.TokenBuilder
	tb.Add([]byte("x"))
	tb.Add([]byte("y"))
	wire, err := proto.Marshal(tb.Build())
	if err != nil {
		t.Fatal(err)
	}
	var ee stage.EncodedEmitter = out
	out.Token("a#0", []byte("t1"))
	ee.Encoded("a#0", 0, wire, 2)
	emitted, _ := out.Drain(true)
	if len(emitted) != 3 || emitted[0].Rows == nil || string(emitted[1].Encoded) != string(wire) || emitted[1].Rows != nil || !emitted[2].EOF {
		t.Fatalf("emitted %+v: want the token's batch, the encoded one, the EOF", emitted)
	}
	if out.RowsOut() != 3 {
		t.Errorf("rows out %d, want 3", out.RowsOut())
	}
	rb, err := emitted[1].RowBatch()
	if err != nil || batch.Rows(rb) != 2 {
		t.Errorf("read back: %d rows, %v", batch.Rows(rb), err)
	}
	outputs, err := stage.Encode(emitted)
	if err != nil {
		t.Fatal(err)
	}
	if got := outputs[1]; &got.Rows[0] != &wire[0] || got.Count != 2 || got.EOF {
		t.Errorf("committed %+v: want the encoded bytes themselves, 2 rows", got)
	}
}
