package e2e

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/respell"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/roles/node"
)

// arrivalQueries are issue 41's queries whose output once depended on
// the order rows arrived in: a DISTINCT, sorts with a LIMIT, a group key
// and MIN/MAX of a number column whose equal values are written
// differently (1500, 1500.0), a join on numbers.
var arrivalQueries = []sqljob.Query{
	{Name: "distinct_rating", Text: "SELECT DISTINCT average_rating FROM matches WHERE average_rating > 1000"},
	{Name: "top_ratings", Text: "SELECT average_rating FROM matches WHERE average_rating > 1000 ORDER BY average_rating LIMIT 7"},
	{Name: "top_maps", Text: "SELECT average_rating, map FROM matches WHERE average_rating > 0 ORDER BY average_rating DESC LIMIT 9"},
	{Name: "ranked", Text: "SELECT ROW_NUMBER() OVER (ORDER BY rating DESC) AS n, rating FROM match_players WHERE rating > 0 ORDER BY rating DESC LIMIT 11"},
	{Name: "by_rating", Text: "SELECT rating, COUNT(*) FROM match_players WHERE rating > 2000 GROUP BY rating"},
	{Name: "map_extremes", Text: "SELECT map, MIN(average_rating), MAX(average_rating) FROM matches WHERE average_rating > 0 GROUP BY map"},
	{Name: "rating_join", Text: "SELECT p.rating, m.average_rating FROM match_players AS p JOIN matches AS m ON p.rating = m.average_rating WHERE p.rating > 2200"},
}

// TestDurableOutputNeverDependsOnArrival is issue 41's check of output
// bytes across modes (docs/sql.md "Output"): the four default queries,
// the example queries and the issue's, over a dataset whose numbers are
// written two ways (1500, 1500.0: respelled) and whose records are
// shuffled, run as one job on a durable cluster of three shards, write
// the bytes the oracle writes over the records in their first order, in
// one process. sqlops's TestOutputNeverDependsOnArrivalOrder holds the
// in-process runner (1 and 3 shards, two orders, sqlgen's random
// queries too) to the same.
func TestDurableOutputNeverDependsOnArrival(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a cluster")
	}
	d := testDatasets(t)[0]
	qs := append(sqlQueries(), arrivalQueries...)
	examples, err := filepath.Glob(filepath.Join("..", "..", "queries", "examples", "*.sql"))
	if err != nil || len(examples) < 10 {
		t.Fatalf("example queries: %v, %v", examples, err)
	}
	for _, f := range examples {
		qs = append(qs, sqljob.Query{Name: "example_" + filepath.Base(f[:len(f)-len(".sql")]), Text: mustReadFile(f)})
	}
	tables, cat := readTables(t, map[string]string{"matches": d.matches, "match_players": d.players}), sql.Catalog{}
	for name, tab := range tables {
		cat[name] = tab.Columns
	}
	roots := make([]*plan.Node, len(qs))
	for i, q := range qs {
		if roots[i], err = sql.Compile(q.Text, cat); err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
	}
	// The records respelled, in their order (what the oracle reads) and
	// shuffled (what the job uploads).
	r := rand.New(rand.NewPCG(41, 43))
	numbers := respell.Columns(roots...)
	ordered := map[string]*exec.Table{}
	dir := t.TempDir()
	shuffled := map[string]string{}
	respelled := false
	for name, tab := range tables {
		rows, twice := respell.Rows(tab, numbers[name], r)
		respelled = respelled || twice
		ordered[name] = respell.Table(tab.Columns, rows, 1+r.IntN(64))
		respell.Shuffle(rows, r)
		shuffled[name] = filepath.Join(dir, name+".csv")
		if err := os.WriteFile(shuffled[name], respell.CSV(tab.Columns, rows), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !respelled {
		t.Fatal("no number was written two ways: the test checks little")
	}
	c := startCluster(t, deploy.Default().Uniform(3), node.ClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := filepath.Join(dir, "out")
	for part := range slices.Chunk(qs, sqljob.DefaultLimits.MaxQueries) { // jobs of as many queries as one may have
		if _, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c),
			Matches: shuffled["matches"], Players: shuffled["match_players"], Out: out, Queries: part}); err != nil {
			t.Fatalf("submit: %v", err)
		}
	}
	withRows := 0
	for i, q := range qs {
		want, err := oracle.Execute(roots[i], ordered)
		if err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
		if want.Rows.N > 0 {
			withRows++
		}
		got, err := os.ReadFile(filepath.Join(out, q.Name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.CSV()) {
			t.Errorf("%s: %s\nthe durable job's answer over the records shuffled differs from the oracle's over them in order\n got %.400q\nwant %.400q", q.Name, q.Text, got, want.CSV())
		}
	}
	if withRows < len(qs)*3/4 {
		t.Errorf("only %d of %d answers have rows: the test checks little", withRows, len(qs))
	}
}
