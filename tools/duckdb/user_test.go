package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/base/datagen"
)

func TestParseQuery(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Query
		err  string
	}{
		{"a=x.sql", Query{Name: "a", Path: "x.sql"}, ""},
		{"civ_wins-2=dir/a=b.sql", Query{Name: "civ_wins-2", Path: "dir/a=b.sql"}, ""},
		{"x.sql", Query{}, "want NAME=FILE"},
		{"a=", Query{}, "want NAME=FILE"},
		{"=x.sql", Query{}, "NAME is"},
		{"-a=x.sql", Query{}, "NAME is"},
		{"a b=x.sql", Query{}, "NAME is"},
	} {
		got, err := ParseQuery(c.in)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseQuery(%q) = %+v, %v; want %+v, %q", c.in, got, err, c.want, c.err)
		}
	}
}

// TestAnswerQueryFiles: --query's load is a user's (the kinds' columns
// typed by try_cast, the others text under their header's names) and
// each query file answers NAME.csv, its numbers without exponents, its
// NULLs empty.
func TestAnswerQueryFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: 500, Seed: 7}, dir); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"kinds": "SELECT typeof(rating) AS r, typeof(winner) AS w, typeof(civ) AS c, typeof(average_rating) AS a, typeof(mirror) AS m, typeof(duration) AS d, typeof(server) AS s FROM match_players, matches LIMIT 1",
		"sums":  "SELECT SUM(1) AS n, 1e20::DOUBLE AS big, 0.5::DOUBLE AS half, NULL AS nothing, true AS yes, 1.50::DECIMAL(4, 2) AS dec",
	}
	var qs []Query
	for name, text := range files {
		path := filepath.Join(dir, name+".sql")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, Query{Name: name, Path: path})
	}
	out := filepath.Join(dir, "out")
	sum, err := Answer(context.Background(), Options{Matches: filepath.Join(dir, "matches.csv"), Players: filepath.Join(dir, "match_players.csv"), Out: out, Queries: qs})
	if err != nil {
		t.Fatal(err)
	}
	if sum.MatchRows < 400 || sum.PlayerRows < 1000 {
		t.Errorf("loaded %d match rows and %d player rows of 500 matches", sum.MatchRows, sum.PlayerRows)
	}
	for name, want := range map[string]string{
		"kinds": "r,w,c,a,m,d,s\nDOUBLE,BOOLEAN,VARCHAR,DOUBLE,BOOLEAN,INTERVAL,VARCHAR\n",
		"sums":  "n,big,half,nothing,yes,dec\n1,100000000000000000000,0.5,,true,1.50\n",
	} {
		b, err := os.ReadFile(filepath.Join(out, name+".csv"))
		if err != nil || string(b) != want {
			t.Errorf("%s.csv = %q, %v; want %q", name, b, err, want)
		}
	}
}

// TestAnswerWithinAMemoryLimit: --memory-limit sets DuckDB's memory_limit
// (a query past it reads it back as set), and one DuckDB does not take is
// refused, naming it.
func TestAnswerWithinAMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: 200, Seed: 3}, dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "limit.sql")
	if err := os.WriteFile(path, []byte("SELECT current_setting('memory_limit') AS m"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Matches: filepath.Join(dir, "matches.csv"), Players: filepath.Join(dir, "match_players.csv"), Out: filepath.Join(dir, "out"), Queries: []Query{{Name: "limit", Path: path}}, MemoryLimit: "256MB"}
	if _, err := Answer(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(o.Out, "limit.csv")); err != nil || !strings.HasPrefix(string(b), "m\n244.1 MiB") {
		t.Errorf("limit.csv = %q, %v; want DuckDB's memory_limit 256MB (244.1 MiB)", b, err)
	}
	o.MemoryLimit = "a lot"
	if _, err := Answer(context.Background(), o); err == nil || !strings.Contains(err.Error(), `memory_limit to "a lot"`) {
		t.Errorf("a memory limit of %q: %v; want it refused, named", o.MemoryLimit, err)
	}
}
