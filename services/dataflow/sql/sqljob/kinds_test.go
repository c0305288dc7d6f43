package sqljob_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// TestTablesAreTextUnlessCast: a job's --table columns are text (docs/sql.md
// "Kinds"): compared with a number uncast, the query is refused naming
// both sides; cast, the column is read as a number by its own scan
// column beside its text, and the job's answer, planned and run on the
// shards, compares numbers (10 above 9, where texts order '10' first).
func TestTablesAreTextUnlessCast(t *testing.T) {
	read := func(csv string) *exec.Table {
		tt, err := exec.ReadCSV(strings.NewReader(csv), 0)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	tables := map[string]*exec.Table{
		"matches":       read("token,map,mirror\nm1,arabia,0\nm2,arena,1\n"),
		"match_players": read("match,civ,rating,winner\nm1,Huns,1500,1\nm1,Celts,9,0\nm2,Huns,10,1\nm2,Celts,x,0\n"),
		"r":             read("civ,elo\nHuns,10\nCelts,9\nGoths,x\n"),
	}
	bad := sqljob.Query{Name: "bad", Text: "SELECT civ FROM r WHERE elo > 9"}
	cat := sql.Catalog{}
	for name, tt := range tables {
		cat[name] = tt.Columns
	}
	_, err := sqljob.Plan([]sqljob.Query{bad}, cat, shape)
	var se *sql.Error
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "query bad: 1:29: comparison >: elo is a text and 9 is a number") {
		t.Fatalf("uncast: %v", err)
	}
	grouped := sqljob.Query{Name: "grouped", Text: "SELECT civ, COUNT(*) FROM r GROUP BY civ, elo ORDER BY elo::numeric"}
	if _, err := sqljob.Plan([]sqljob.Query{grouped}, cat, shape); err == nil || !strings.Contains(err.Error(), "group by the cast itself: GROUP BY elo::numeric") {
		t.Fatalf("a cast above GROUP BY: %v", err)
	}
	q := sqljob.Query{Name: "ok", Text: "SELECT r.civ, r.elo::numeric AS elo, COUNT(*) AS n, MAX(p.rating) AS top FROM match_players p JOIN r ON p.civ = r.civ " +
		"WHERE r.elo::numeric > 9 OR r.elo = 'x' GROUP BY r.civ, r.elo::numeric ORDER BY r.elo::numeric DESC"}
	files, err := sqlops.Answer([]sqljob.Query{q}, tables, shape)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(files["ok"]), "civ,elo,n,top\nHuns,10,2,1500\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
