package demo

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/respell"
)

// TestSQLOutputNeverDependsOnArrivalOrder: the demo writes the same files
// from the same rows whatever their order and however many shards run
// them, and the executor's, where the files' numbers are equal values
// written two and three ways (1500, 1500.0; issue 41): the four default
// queries and three whose answers show such numbers (a DISTINCT, a sort
// with a LIMIT, a ROW_NUMBER).
func TestSQLOutputNeverDependsOnArrivalOrder(t *testing.T) {
	src, _ := sqlDataset(t)
	texts := map[string]string{
		"distinct": "SELECT DISTINCT average_rating FROM matches WHERE average_rating > 1000",
		"top":      "SELECT token, average_rating FROM matches WHERE average_rating > 0 ORDER BY average_rating DESC LIMIT 9",
		"ranked":   "SELECT ROW_NUMBER() OVER (ORDER BY rating DESC) AS n, rating FROM match_players WHERE rating > 0 ORDER BY rating DESC LIMIT 11",
	}
	for _, name := range queries.Names {
		texts[name], _ = queries.Text(name)
	}
	files := map[string]string{"matches": "matches.csv", "match_players": "match_players.csv"}
	tables, cat := readTables(t, src)
	var roots []*plan.Node
	for name, q := range texts {
		root, err := sql.Compile(q, cat)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		roots = append(roots, root)
	}
	numbers := respell.Columns(roots...)
	if !numbers["matches"]["average_rating"] || !numbers["match_players"]["rating"] {
		t.Fatalf("the ratings are not respelled: %v", numbers)
	}
	// Two directories of the same rows: in one order, and shuffled.
	r := rand.New(rand.NewPCG(7, 41))
	ordered, shuffled := t.TempDir(), t.TempDir()
	for name, file := range files {
		rows, twice := respell.Rows(tables[name], numbers[name], r)
		if !twice && len(numbers[name]) > 0 {
			t.Fatalf("%s: no number written two ways", name)
		}
		for _, dir := range []string{ordered, shuffled} {
			if err := os.WriteFile(filepath.Join(dir, file), respell.CSV(tables[name].Columns, rows), 0o644); err != nil {
				t.Fatal(err)
			}
			respell.Shuffle(rows, r)
		}
	}
	want := map[string][]byte{}
	for name, q := range texts {
		want[name] = executorAnswer(t, ordered, q)
		if bytes.Count(want[name], []byte("\n")) < 2 {
			t.Fatalf("%s: the executor's answer is empty: the test checks nothing", name)
		}
	}
	for _, dir := range []string{ordered, shuffled} {
		for _, replicas := range []string{"0", "3"} {
			out := t.TempDir()
			args := []string{"--matches", filepath.Join(dir, "matches.csv"), "--players", filepath.Join(dir, "match_players.csv"), "--out", out, "--replicas", replicas}
			for name, q := range texts {
				f := filepath.Join(out, name+".sql")
				if err := os.WriteFile(f, []byte(q), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--query", name+"="+f)
			}
			var stdout, stderr bytes.Buffer
			if err := Run(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatalf("demo --replicas %s: %v\n%s", replicas, err, stderr.String())
			}
			for name := range texts {
				got, err := os.ReadFile(filepath.Join(out, name+".csv"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want[name]) {
					t.Errorf("--replicas %s, the rows %s: %s.csv differs from the executor's over the rows in order\n got %.300q\nwant %.300q",
						replicas, map[bool]string{true: "in order", false: "shuffled"}[dir == ordered], name, got, want[name])
				}
			}
		}
	}
}
