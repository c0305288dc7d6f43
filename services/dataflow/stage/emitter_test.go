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

// columns is a ColumnBatch of n rows of no columns.
func columns(n int) *wololov1.RowBatch {
	return &wololov1.RowBatch{Rows: &wololov1.RowBatch_Columns{Columns: &wololov1.ColumnBatch{Rows: uint32(n)}}}
}

// TestEncodeGivesTheCommitterBytesAndCounts: what the emitter took
// reaches the Committer as the rows' encoding, sized to fit, with their
// count; an EOF carries neither.
func TestEncodeGivesTheCommitterBytesAndCounts(t *testing.T) {
	ch := transport.ChannelID{Job: "j", Stream: "c0-x", Sender: "a-0", Receiver: "b-0"}
	rows := columns(3)
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
// its EOF on every receiver in the next drain, after the batches emitted
// on it, and a record saying so; the job's final drain does not end it
// again, nor does a restarted instance told the record (MarkEnded); a
// discarded step opens it again. A batch goes to the one receiver named.
func TestEndingAStreamEarly(t *testing.T) {
	self := deploy.Instance{Stage: "shard", Index: 0}
	edges := []stage.Edge{{Stream: "a#0", Stage: "shard", Replicas: 2}, {Stream: "b#0", Stage: "gateway", Replicas: 1}}
	out := stage.NewOutputs(self, "j", edges)
	built := columns(1)
	out.Batch("a#0", 1, built)
	out.Encoded("a#0", 0, []byte("x"), 1)
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
	want := []string{"shard-1:rows", "shard-0:rows", "shard-0:eof", "shard-1:eof"}
	if !slices.Equal(kinds, want) {
		t.Errorf("drained %v, want the batches, then an EOF to each shard", kinds)
	}
	if emitted[0].Rows != built {
		t.Errorf("the built batch is not the one drained first")
	}
	if records[stage.EndedOutputRecord("a#0")] == nil {
		t.Errorf("no record of the ended stream: %v", records)
	}
	final, _ := out.Drain(true)
	if len(final) != 1 || final[0].Channel.Stream != "b#0" || !final[0].EOF {
		t.Errorf("the final drain gives %v, want only b#0's EOF", final)
	}

	restarted := stage.NewOutputs(self, "j", edges)
	restarted.MarkEnded(records)
	if final, _ := restarted.Drain(true); len(final) != 1 || final[0].Channel.Stream != "b#0" {
		t.Errorf("a restarted instance's final drain gives %v, want only b#0's EOF", final)
	}

	discarded := stage.NewOutputs(self, "j", edges)
	discarded.End("a#0")
	discarded.Discard()
	if final, _ := discarded.Drain(true); len(final) != 3 {
		t.Errorf("after a discarded End the final drain gives %d EOFs, want 3", len(final))
	}
}

// TestEncodedBatchesPassAsTheyAre: a batch emitted already encoded
// (Encoded) reaches the Committer as those very bytes with its count,
// after the batches emitted on its slot before it; its rows count among
// the rows out.
func TestEncodedBatchesPassAsTheyAre(t *testing.T) {
	self := deploy.Instance{Stage: "gateway", Index: 0}
	out := stage.NewOutputs(self, "j", []stage.Edge{{Stream: "a#0", Stage: "shard", Replicas: 1}})
	wire, err := proto.Marshal(columns(2))
	if err != nil {
		t.Fatal(err)
	}
	out.Batch("a#0", 0, columns(1))
	out.Encoded("a#0", 0, wire, 2)
	emitted, _ := out.Drain(true)
	if len(emitted) != 3 || emitted[0].Rows == nil || string(emitted[1].Encoded) != string(wire) || emitted[1].Rows != nil || !emitted[2].EOF {
		t.Fatalf("emitted %+v: want the built batch, the encoded one, the EOF", emitted)
	}
	if out.RowsOut() != 3 {
		t.Errorf("rows out %d, want 3", out.RowsOut())
	}
	outputs, err := stage.Encode(emitted)
	if err != nil {
		t.Fatal(err)
	}
	if got := outputs[1]; &got.Rows[0] != &wire[0] || got.Count != 2 || got.EOF {
		t.Errorf("committed %+v: want the encoded bytes themselves, 2 rows", got)
	}
}
