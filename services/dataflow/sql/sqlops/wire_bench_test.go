package sqlops_test

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
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
			wire, err := proto.Marshal(sqlops.ToRows(in))
			if err != nil {
				b.Fatal(err)
			}
			size = len(wire)
			var rb wololov1.RowBatch
			if err := proto.Unmarshal(wire, &rb); err != nil {
				b.Fatal(err)
			}
			if _, err := sqlops.FromRows(&rb, cols); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(size)/n, "bytes/row")
	})
	// The same bytes, written and read by the wire codec.
	b.Run("codec", func(b *testing.B) {
		var w sqlops.WireWriter
		var wire []byte
		for b.Loop() {
			wire = w.Append(wire[:0], in, nil, 0, n, nil)
			size = len(wire)
			if _, _, ok := sqlops.ReadWireRows(wire, cols); !ok {
				b.Fatal("the codec does not read what it wrote")
			}
		}
		b.ReportMetric(float64(size)/n, "bytes/row")
	})
}

// BenchmarkGatewayExchanges feeds the gateway of the four default
// queries' plan (two shards) the parsed batches of both tables: what it
// does with them is mostly its exchanges' routing and writing of rows
// onto channels (Exchange.Route, ToRows).
func BenchmarkGatewayExchanges(b *testing.B) {
	_, _, tables := generated(b, 20000, 7)
	p := planOf(b, defaultTexts(), queries.Names, tables, 2)
	headers := map[string][]string{}
	for name, t := range tables {
		headers[name] = t.Columns
	}
	sent := 0
	gw, err := sqlops.NewTask(p, p.Gateway.Name, 0, headers, nil, func(_ *physical.Channel, _ int, rows *sqlops.Rows) error {
		sent += int(rows.RowBatch().GetColumns().GetRows())
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for name, t := range tables {
			for _, tb := range t.Batches {
				if err := gw.Table(name, tb); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkSourceUpload is the gateway's part of an upload of both
// tables for the four default queries' plan (two shards), past the CSV
// parse: each record's fields to its table's Source, a flush when full,
// the batches drained and encoded as each commit encodes them
// (stage.Encode). Per player row.
func BenchmarkSourceUpload(b *testing.B) {
	_, _, tables := generated(b, 100000, 7)
	p := planOf(b, defaultTexts(), queries.Names, tables, 2)
	gw := deploy.Instance{Stage: p.Gateway.Name}
	upload := func(name string) {
		tab := tables[name]
		src, err := sqlops.NewSource(p, name, tab.Columns)
		if err != nil {
			b.Fatal(err)
		}
		out := stage.NewOutputs(gw, "j", src.Outputs())
		feedSource(b, src, tab, out, nil, func(eof bool) {
			emitted, _ := out.Drain(eof)
			if _, err := stage.Encode(emitted); err != nil {
				b.Fatal(err)
			}
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		upload("matches")
		upload("match_players")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tables["match_players"].Rows), "ns/player-row")
}
