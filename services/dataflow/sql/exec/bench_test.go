package exec_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// q2Aggregate is q2's aggregate (queries/q2.sql): by match, counts and
// maxima of CASEs over winner and rating (the match column is game).
const q2Aggregate = "select game, count(*), count(case when winner then 1 end), " +
	"count(case when not winner then 1 end), count(rating), " +
	"max(case when winner then rating end), max(case when not winner then rating end) " +
	"from p group by game"

// playerBatches compiles q and returns its aggregate node and its scan's
// batches over rows player rows of two per match, some ratings missing.
func playerBatches(b *testing.B, q string, rows int) (*plan.Node, []*exec.Batch) {
	var csv strings.Builder
	csv.WriteString("game,rating,winner\n")
	for i := range rows {
		rating := fmt.Sprint(800 + i*7919%1600)
		if i%13 == 0 {
			rating = ""
		}
		fmt.Fprintf(&csv, "m%d,%s,%t\n", i/2, rating, i%2 == 0)
	}
	return scanned(b, q, csv.String(), plan.Aggregate)
}

// scanned compiles q over the table p of text csv and returns its first
// node of op from the root and the batches of the scan below it.
func scanned(b testing.TB, q, csv string, op plan.Op) (*plan.Node, []*exec.Batch) {
	tab, err := exec.ReadCSV(strings.NewReader(csv), 0)
	if err != nil {
		b.Fatal(err)
	}
	root, err := sql.Compile(q, sql.Catalog{"p": tab.Columns})
	if err != nil {
		b.Fatal(err)
	}
	agg := root
	for agg.Op != op {
		agg = agg.Input[0]
	}
	scan := agg.Input[0]
	idx, err := exec.ScanIndex(scan, tab.Columns)
	if err != nil {
		b.Fatal(err)
	}
	var st exec.ColumnStats
	var out []*exec.Batch
	for _, tb := range tab.Batches {
		nb := &exec.Batch{N: tb.N}
		for i, j := range idx {
			nb.Cols = append(nb.Cols, exec.ReadAs(tb.Cols[j], scan.Output[i], &st))
		}
		out = append(out, nb)
	}
	return agg, out
}

// BenchmarkAggregateQ2 folds player rows into q2's aggregate and makes
// its result.
func BenchmarkAggregateQ2(b *testing.B) {
	agg, batches := playerBatches(b, q2Aggregate, 1<<17)
	b.ResetTimer()
	for range b.N {
		a := exec.NewAggregation(exec.NewKeyTable(), agg.Keys, agg.Aggs)
		for _, in := range batches {
			if err := a.Add(in); err != nil {
				b.Fatal(err)
			}
		}
		a.Result()
	}
}

// BenchmarkArithmetic folds arithmetic of decimals into sums and an
// average by match (a product, a sum, a division, a negation and a
// decimal constant per row), the int64 fast path of value.Dec that the
// bound's check (value.Dec.Fits) runs on after every operation.
func BenchmarkArithmetic(b *testing.B) {
	agg, batches := playerBatches(b, "select game, sum(rating * 7 + 1), avg(rating / 3), sum(-rating * 1.5 - 2) from p group by game", 1<<17)
	b.ResetTimer()
	for range b.N {
		a := exec.NewAggregation(exec.NewKeyTable(), agg.Keys, agg.Aggs)
		for _, in := range batches {
			if err := a.Add(in); err != nil {
				b.Fatal(err)
			}
		}
		a.Result()
	}
}

// BenchmarkFilterQ1 evaluates q1's WHERE (queries/q1.sql: a number and a
// duration compared with constants, text IN a list, AND) over match rows.
func BenchmarkFilterQ1(b *testing.B) {
	var csv strings.Builder
	csv.WriteString("token,average_rating,server,duration\n")
	servers := []string{"koreacentral", "westeurope", "eastus", "ukwest", "southeastasia"}
	for i := range 1 << 17 {
		fmt.Fprintf(&csv, "t%d,%d,%s,%d:%02d:%02d\n", i, 900+i*7919%1500, servers[i%len(servers)], i%3, i%60, i*7%60)
	}
	filter, batches := scanned(b, "select token from p where average_rating > 2000 "+
		"and server in ('koreacentral', 'southeastasia', 'eastus') and duration_seconds(duration) > 7200", csv.String(), plan.Filter)
	f := exec.NewRowFilter(filter.Cond)
	b.ResetTimer()
	for range b.N {
		for _, in := range batches {
			if _, err := f.Apply(in); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCSVReader reads a file of player-like records, keeping three
// of its seven columns, as a job's scans read match_players.
func BenchmarkCSVReader(b *testing.B) {
	var csv strings.Builder
	csv.WriteString("token,match,rating,color,civ,team,winner\n")
	for i := range 200_000 {
		fmt.Fprintf(&csv, "tok%013d,match%011d,%d.0,Blue,Franks,%d,%t\n", i, i/2, 800+i*7919%1600, 1+i%2, i%2 == 0)
	}
	file := csv.String()
	b.SetBytes(int64(len(file)))
	for b.Loop() {
		if _, err := exec.ReadCSVColumns(strings.NewReader(file), 0, []string{"match", "rating", "winner"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadAs reads a batch's text as numbers, durations and
// booleans, as a scan does, a value in 13 empty.
func BenchmarkReadAs(b *testing.B) {
	var csv strings.Builder
	csv.WriteString("n,d,w\n")
	for i := range exec.BatchRows {
		n, d := fmt.Sprint(800+i*7919%1600, ".5"), fmt.Sprintf("0:%02d:%02d", i%60, i*7%60)
		if i%13 == 0 {
			n, d = "", ""
		}
		fmt.Fprintf(&csv, "%s,%s,%t\n", n, d, i%2 == 0)
	}
	tab, err := exec.ReadCSV(strings.NewReader(csv.String()), 0)
	if err != nil {
		b.Fatal(err)
	}
	cols := tab.Batches[0].Cols
	var st exec.ColumnStats
	for b.Loop() {
		exec.ReadAs(cols[0], plan.Column{Type: plan.Number}, &st)
		exec.ReadAs(cols[1], plan.Column{Type: plan.Number, Read: plan.ReadDuration}, &st)
		exec.ReadAs(cols[2], plan.Column{Type: plan.Bool}, &st)
	}
}
