package sqlops_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// TestAnswer: Answer plans a job's queries over the tables' columns and
// runs them: the four defaults byte-equal to the reference, a user's
// query equal to the same query planned by hand and run, and a query the
// engine refuses, a name that is not one or no query at all an error.
func TestAnswer(t *testing.T) {
	m, pl, tables := generated(t, 2000, 6)
	ref, err := reference.Evaluate(bytes.NewReader(m), bytes.NewReader(pl))
	if err != nil {
		t.Fatal(err)
	}
	shape := physical.Shape{Gateway: physical.Task{Name: "gateway", Replicas: 1}, Shard: physical.Task{Name: "shard", Replicas: 2}}
	const civs = "SELECT p.civ, COUNT(*) AS n FROM match_players p JOIN matches m ON p.match = m.token GROUP BY p.civ ORDER BY n DESC, p.civ"

	var job []sqljob.Query
	for _, name := range queries.Names {
		text, _ := queries.Text(name)
		job = append(job, sqljob.Query{Name: name, Text: text})
	}
	job = append(job, sqljob.Query{Name: "civs", Text: civs})
	got, err := sqlops.Answer(job, tables, shape)
	if err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(ref.Answers)
	res, err := sqlops.Run(planOf(t, map[string]string{"civs": civs}, []string{"civs"}, tables, 2), tables)
	if err != nil {
		t.Fatal(err)
	}
	want["civs"] = res.Files["civs"]
	if len(got) != len(want) {
		t.Errorf("%d files, want %d", len(got), len(want))
	}
	for name, w := range want {
		if !bytes.Equal(got[name], w) {
			t.Errorf("%s differs:\n got %.300q\nwant %.300q", name, got[name], w)
		}
		if bytes.Count(w, []byte("\n")) < 2 {
			t.Errorf("%s: the expected answer has no rows: the test checks nothing", name)
		}
	}

	for _, tc := range []struct {
		name  string
		job   []sqljob.Query
		check func(error) bool
	}{
		{"refused", []sqljob.Query{{Name: "bad", Text: "SELECT token FROM matches NATURAL JOIN match_players p"}}, func(err error) bool {
			var se *sql.Error
			return errors.As(err, &se) && strings.Contains(err.Error(), "query bad")
		}},
		{"unknown table", []sqljob.Query{{Name: "nope", Text: "SELECT a FROM nowhere"}}, func(err error) bool {
			var se *sql.Error
			return errors.As(err, &se)
		}},
		{"bad name", []sqljob.Query{{Name: "a.b", Text: civs}}, func(err error) bool { return errors.Is(err, sqljob.ErrName) }},
		{"none", nil, func(err error) bool { return err != nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := sqlops.Answer(tc.job, tables, shape)
			if files != nil || !tc.check(err) {
				t.Errorf("got %d files and error %v", len(files), err)
			}
		})
	}
}

// TestOrderedLimitOverManyBatches: the first rows of a filtered table in
// order, over a table of many batches spread on two shards, are the ones
// a plain loop over the table finds. It holds the in-process runner to
// reading what an exchange sends as it sends it: an exchange's row lists
// are scratch its next batch overwrites, and reading them later once gave
// other rows, which this query showed and the runner's other tests did
// not.
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
