package wire_test

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
)

// BenchmarkRowsOnTheWire writes a batch of 8192 player rows (a match
// token, a civilization, a rating, whether the player won) as a
// marshalled ColumnBatch and reads it back, as a channel between
// instances carries it: by way of the RowBatch message (the in-process
// runner's), and with the wire codec (a deployment's).
func BenchmarkRowsOnTheWire(b *testing.B) {
	const n = 8192
	cols := []plan.Column{{Name: "match", Type: plan.Text}, {Name: "civ", Type: plan.Text}, {Name: "rating", Type: plan.Number}, {Name: "winner", Type: plan.Bool}}
	vbs := make([]*exec.VecBuilder, len(cols))
	for c, col := range cols {
		vbs[c] = exec.NewVecBuilder(col.Type, n)
	}
	for i := range n {
		for c, s := range []string{fmt.Sprintf("%016x", i*2654435761), fmt.Sprint("civ", i%40), fmt.Sprintf("%d.0", 900+i%1500), fmt.Sprint(i%2 == 0)} {
			if err := vbs[c].Text([]byte(s)); err != nil {
				b.Fatal(err)
			}
		}
	}
	in := &exec.Batch{N: n}
	for _, vb := range vbs {
		in.Cols = append(in.Cols, vb.Vec())
	}
	var size int
	b.Run("protobuf", func(b *testing.B) {
		for b.Loop() {
			enc, err := proto.Marshal(wire.ToRows(in))
			if err != nil {
				b.Fatal(err)
			}
			size = len(enc)
			var rb wololov1.RowBatch
			if err := proto.Unmarshal(enc, &rb); err != nil {
				b.Fatal(err)
			}
			if _, err := wire.FromRows(&rb, cols); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(size)/n, "bytes/row")
	})
	// The same bytes, written and read by the wire codec.
	b.Run("codec", func(b *testing.B) {
		var w wire.Writer
		var enc []byte
		for b.Loop() {
			enc = w.Append(enc[:0], in, wire.Span(0, n), nil)
			size = len(enc)
			if _, _, ok := wire.Read(enc, cols); !ok {
				b.Fatal("the codec does not read what it wrote")
			}
		}
		b.ReportMetric(float64(size)/n, "bytes/row")
	})
}
