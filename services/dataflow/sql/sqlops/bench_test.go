package sqlops_test

import (
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
)

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
