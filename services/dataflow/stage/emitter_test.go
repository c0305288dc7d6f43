package stage_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

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
