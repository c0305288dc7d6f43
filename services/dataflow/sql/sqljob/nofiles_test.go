package sqljob_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
)

// A job of tables only (Spec.NoFiles): its queries read its tables, and
// one that reads matches or match_players is refused naming the file the
// job has not, as is a job of no file and no table.
func TestCheckNoFiles(t *testing.T) {
	tables := []sqljob.Table{{Name: "sales", Columns: []string{"region", "amount"}}}
	ok := sqljob.Spec{NoFiles: true, Tables: tables, Own: true, Queries: []sqljob.Query{
		{Name: "by_region", Text: "SELECT region, COUNT(*) AS n FROM sales GROUP BY region"},
	}}
	job, err := sqljob.Check(ok, sqljob.DefaultLimits, shape)
	if err != nil {
		t.Fatal(err)
	}
	if scanned := job.Plan.Scanned(); len(scanned["matches"]) != 0 || len(scanned["match_players"]) != 0 || len(scanned["sales"]) == 0 {
		t.Fatalf("scanned %v", scanned)
	}
	for _, c := range []struct {
		sql, want string
	}{
		{"SELECT COUNT(*) AS n FROM matches", "this job has no matches.csv: query q: 1:27: table matches: no such table"},
		{"SELECT s.region FROM sales AS s JOIN match_players AS p ON s.region = p.civ", "this job has no match_players.csv: query q"},
	} {
		spec := ok
		spec.Queries = []sqljob.Query{{Name: "q", Text: c.sql}}
		_, err := sqljob.Check(spec, sqljob.DefaultLimits, shape)
		if !errors.Is(err, sqljob.ErrTable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrTable with %q", c.sql, err, c.want)
		}
	}
	none := ok
	none.Tables = nil
	if _, err := sqljob.Check(none, sqljob.DefaultLimits, shape); !errors.Is(err, sqljob.ErrTable) || !strings.Contains(err.Error(), "no table") {
		t.Errorf("no file and no table: %v", err)
	}
}
