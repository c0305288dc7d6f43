package sqlops_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// TestOrderedLimitOverManyBatches: the first rows of a filtered table in
// order, over a table of many batches spread on two shards, are the ones
// a plain loop over the table finds. It holds the in-process runner to
// what it hands from task to task: handing an exchange's batches over
// without the RowBatch made of them when they are sent once made it read
// other rows' values (the rows were read after the sending task had gone
// on), which this query showed and the runner's other tests did not.
func TestOrderedLimitOverManyBatches(t *testing.T) {
	_, _, tables := generated(t, 25000, 3)
	shape, err := physical.ShapeOf(deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, server := range []string{"ukwest", "eastus"} {
		q := sqljob.Query{Name: "few", Text: fmt.Sprintf("SELECT token, map FROM matches WHERE server = '%s' ORDER BY token LIMIT 7", server)}
		got, err := sqlops.Answer([]sqljob.Query{q}, tables, shape)
		if err != nil {
			t.Fatal(err)
		}
		m := tables["matches"]
		col := func(name string) int { return slices.Index(m.Columns, name) }
		token, mp, srv := col("token"), col("map"), col("server")
		var rows []string
		for _, b := range m.Batches {
			for i := range b.N {
				if string(b.Cols[srv].Text(i)) == server {
					rows = append(rows, string(b.Cols[token].Text(i))+","+string(b.Cols[mp].Text(i))+"\n")
				}
			}
		}
		slices.Sort(rows)
		want := "token,map\n"
		for _, r := range rows[:min(7, len(rows))] {
			want += r
		}
		if len(m.Batches) < 2 || len(rows) < 7 {
			t.Fatalf("%d batches, %d rows of %s: too few to test", len(m.Batches), len(rows), server)
		}
		if string(got["few"]) != want {
			t.Errorf("server %s: got\n%s\nwant\n%s", server, got["few"], want)
		}
	}
}
