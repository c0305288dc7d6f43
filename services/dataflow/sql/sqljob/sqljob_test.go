package sqljob_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
)

var (
	cat = sql.Catalog{
		"matches":       {"token", "ladder", "map", "mirror"},
		"match_players": {"match", "civ", "rating"},
	}
	shape = physical.Shape{Gateway: physical.Task{Name: "gateway", Replicas: 1}, Shard: physical.Task{Name: "shard", Replicas: 2}}
)

func TestCheckName(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"q1", true}, {"by_civ", true}, {"by-civ", true}, {"_x", true}, {"9", true}, {long, true},
		{"", false}, {"-x", false}, {"a.b", false}, {"a/b", false}, {"../x", false}, {"a b", false},
		{long + "a", false}, {"é", false}, {"rejects", false}, {"Rejects", false}, {"rejects2", true},
	} {
		err := sqljob.CheckName(c.name)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, sqljob.ErrName)) {
			t.Errorf("CheckName(%q) = %v, want ok %v", c.name, err, c.ok)
		}
	}
}

func TestCheckNames(t *testing.T) {
	if err := sqljob.CheckNames([]sqljob.Query{{Name: "a"}, {Name: "b"}}); err != nil {
		t.Errorf("two names: %v", err)
	}
	err := sqljob.CheckNames([]sqljob.Query{{Name: "a"}, {Name: "b"}, {Name: "a"}})
	if !errors.Is(err, sqljob.ErrName) || !strings.Contains(err.Error(), "query a is named twice") {
		t.Errorf("a name twice: %v", err)
	}
}

// TestPlan: the queries are compiled and planned in order, and Explain
// is each one's logical plan, then the physical plan.
func TestPlan(t *testing.T) {
	qs := []sqljob.Query{
		{Name: "civs", Text: "SELECT civ, COUNT(*) AS n FROM match_players GROUP BY civ"},
		{Name: "maps", From: "maps.sql", Text: "SELECT map FROM matches WHERE NOT mirror"},
	}
	job, err := sqljob.Plan(qs, cat, shape)
	if err != nil {
		t.Fatal(err)
	}
	if len(job.Logical) != 2 || job.Logical[0].Name != "civs" || job.Logical[1].Name != "maps" || len(job.Plan.Queries) != 2 {
		t.Fatalf("job %+v", job)
	}
	want := "query civs, logical plan:\n" + job.Logical[0].Plan.String() + "\n" +
		"query maps (maps.sql), logical plan:\n" + job.Logical[1].Plan.String() + "\n" +
		"physical plan on gateway[1] and shard[2]:\n" + job.Plan.String()
	if got := job.Explain(); got != want {
		t.Errorf("Explain:\n%s\nwant:\n%s", got, want)
	}
	b, err := job.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := physical.Decode(b)
	if err != nil || back.String() != job.Plan.String() {
		t.Errorf("the encoded plan decodes to %v (%v)", back, err)
	}
}

// TestRefused: a query the engine refuses names the query and keeps the
// *sql.Error; a bad name is ErrName.
func TestRefused(t *testing.T) {
	good := sqljob.Query{Name: "ok", Text: "SELECT token FROM matches"}
	for _, c := range []struct {
		what      string
		q         sqljob.Query
		want      string
		construct string
	}{
		{"unsupported", sqljob.Query{Name: "j", Text: "SELECT token\nFROM matches m NATURAL JOIN match_players p"}, "query j: 2:16: NATURAL JOIN:", "NATURAL JOIN"},
		{"a column of no table's alias", sqljob.Query{Name: "c", From: "c.sql", Text: "SELECT x.nope FROM matches"}, "query c (c.sql): 1:8: column x.nope: no such column", "column x.nope"},
		{"unknown table", sqljob.Query{Name: "t", Text: "SELECT x FROM civs"}, "query t: 1:15:", ""},
		{"syntax", sqljob.Query{Name: "s", Text: "SELEC token FROM matches"}, "query s: 1:", "syntax"},
	} {
		t.Run(c.what, func(t *testing.T) {
			_, err := sqljob.Plan([]sqljob.Query{good, c.q}, cat, shape)
			var se *sql.Error
			if err == nil || !errors.As(err, &se) || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v, want a *sql.Error saying %q", err, c.want)
			}
			if c.construct != "" && se.Construct != c.construct {
				t.Errorf("construct %q, want %q", se.Construct, c.construct)
			}
		})
	}
	for _, qs := range [][]sqljob.Query{{{Name: "a.b", Text: good.Text}}, {good, good}} {
		if _, err := sqljob.Plan(qs, cat, shape); !errors.Is(err, sqljob.ErrName) {
			t.Errorf("Plan(%v): %v, want ErrName", qs, err)
		}
	}
	if _, err := sqljob.Plan(nil, cat, shape); err == nil {
		t.Error("no query planned")
	}
}

// TestDefaultMaxQueries: a job of the default limits holds 32 queries
// (the 24 analyst ones, queries/analyst, in one job) and is refused 33 as
// a limit.
func TestDefaultMaxQueries(t *testing.T) {
	for _, c := range []struct {
		n       int
		refused bool
	}{{1, false}, {24, false}, {32, false}, {33, true}} {
		spec := sqljob.Spec{Matches: cat["matches"], Players: cat["match_players"], Own: true}
		for i := range c.n {
			spec.Queries = append(spec.Queries, sqljob.Query{Name: fmt.Sprintf("q%02d", i), Text: "SELECT token FROM matches"})
		}
		_, err := sqljob.Check(spec, sqljob.DefaultLimits, shape)
		if refused := errors.Is(err, sqljob.ErrLimit); refused != c.refused || (!c.refused && err != nil) {
			t.Errorf("a job of %d queries: %v, want refused %v", c.n, err, c.refused)
		}
		if c.refused && err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%d queries, more than a job may have (32, --max-queries)", c.n)) {
			t.Errorf("a job of %d queries: %v", c.n, err)
		}
	}
}

func TestTextBytes(t *testing.T) {
	if n := sqljob.TextBytes([]sqljob.Query{{Text: "abc"}, {Text: "de"}}); n != 5 {
		t.Errorf("TextBytes = %d, want 5", n)
	}
}

// TestMissingColumn: a column an input lacks is ErrColumn naming the
// input, the column, the query, where the query reads it, and the
// input's column nearest to it when one is near.
func TestMissingColumn(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"SELECT civv FROM match_players", `match_players.csv: no column "civv" (read by query q at 1:8); did you mean civ?`},
		{"SELECT token\nFROM matches m\nWHERE m.lader > 0", `matches.csv: no column "lader" (read by query q at 3:7); did you mean ladder?`},
		{"SELECT zzz FROM matches", `matches.csv: no column "zzz" (read by query q at 1:8)`},
	} {
		_, err := sqljob.Plan([]sqljob.Query{{Name: "q", Text: c.text}}, cat, shape)
		if !errors.Is(err, sqljob.ErrColumn) || err.Error() != c.want {
			t.Errorf("%q: %v; want ErrColumn %q", c.text, err, c.want)
		}
	}
}
