package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
)

// sqlDataset writes a small generated dataset and returns the demo's
// flags for it.
func sqlDataset(t *testing.T) (dir string, flags []string) {
	t.Helper()
	dir = t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: 2000, Seed: 7}, dir); err != nil {
		t.Fatal(err)
	}
	return dir, []string{"--matches", filepath.Join(dir, "matches.csv"), "--players", filepath.Join(dir, "match_players.csv")}
}

// queryFile is the path of a default query's file, from this package.
func queryFile(name string) string { return filepath.Join("..", "..", "..", "queries", name+".sql") }

// TestSQLDefaultQueries: the four default queries given as --query files
// and run by the SQL runner write files byte-equal to the reference's, on
// two shards and on three.
func TestSQLDefaultQueries(t *testing.T) {
	dir, flags := sqlDataset(t)
	ref, err := reference.EvaluateFiles(filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv"))
	if err != nil {
		t.Fatal(err)
	}
	refDir := t.TempDir()
	if err := reference.WriteDir(ref, refDir); err != nil {
		t.Fatal(err)
	}
	for _, replicas := range []string{"0", "3"} {
		out := t.TempDir()
		args := append(flags, "--out", out, "--replicas", replicas)
		for _, name := range queries.Names {
			args = append(args, "--query", name+"="+queryFile(name))
		}
		var stdout, stderr bytes.Buffer
		if err := Run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("demo --replicas %s: %v\n%s", replicas, err, stderr.String())
		}
		for _, name := range queries.Names {
			got, err := os.ReadFile(filepath.Join(out, name+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(refDir, name+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("--replicas %s: %s differs from the reference's (%d bytes, want %d)", replicas, name, len(got), len(want))
			}
			if !strings.Contains(stdout.String(), filepath.Join(out, name+".csv")) {
				t.Errorf("--replicas %s: the summary does not name %s:\n%s", replicas, name, stdout.String())
			}
		}
		if !strings.Contains(stdout.String(), "elapsed: ") {
			t.Errorf("no elapsed time in the summary:\n%s", stdout.String())
		}
	}
}

// userQuery counts wins per region on one map: a --table of civs'
// regions joined with match_players, matches in a semi-join.
const userQuery = `SELECT r.region, SUM(CASE WHEN p.winner THEN 1 ELSE 0 END) AS wins, COUNT(*) AS played
FROM match_players AS p JOIN regions AS r ON p.civ = r.civ
WHERE p.` + "match" + ` IN (SELECT token FROM matches WHERE map = 'arabia')
GROUP BY r.region
ORDER BY wins DESC, r.region
`

// TestSQLUserQuery: a user's query over a --table runs and writes the rows
// services/dataflow/sql/exec computes on the same files directly.
func TestSQLUserQuery(t *testing.T) {
	dir, flags := sqlDataset(t)
	regions := filepath.Join(dir, "regions.csv")
	if err := os.WriteFile(regions, []byte("civ,region\nFranks,west\nBritons,west\nMongols,east\nChinese,east\nAztecs,americas\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	qfile := filepath.Join(dir, "wins.sql")
	if err := os.WriteFile(qfile, []byte(userQuery), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := Run(context.Background(), append(flags, "--out", out, "--query", "wins="+qfile, "--table", "regions="+regions), &stdout, &stderr); err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	got, err := os.ReadFile(filepath.Join(out, "wins.csv"))
	if err != nil {
		t.Fatal(err)
	}

	want := executorAnswer(t, dir, userQuery, "regions")
	if !bytes.Equal(got, want) {
		t.Errorf("wins.csv:\n%s\nwant (the executor's):\n%s", got, want)
	}
	if n := bytes.Count(want, []byte("\n")); n < 3 {
		t.Errorf("the executor's answer has %d lines, want a header and rows:\n%s", n, want)
	}
	if !strings.Contains(stdout.String(), "wins.csv") {
		t.Errorf("the summary does not name wins.csv:\n%s", stdout.String())
	}
}

// executorAnswer is query's output file as services/dataflow/sql/exec
// computes it directly on the files of dir: matches.csv,
// match_players.csv and NAME.csv of each of more.
func executorAnswer(t *testing.T, dir, query string, more ...string) []byte {
	t.Helper()
	tables, cat := readTables(t, dir, more...)
	root, err := sql.Compile(query, cat)
	if err != nil {
		t.Fatal(err)
	}
	res, err := oracle.Execute(root, tables)
	if err != nil {
		t.Fatal(err)
	}
	return res.CSV()
}

// readTables reads the files of dir as executorAnswer does, and returns
// the tables and their catalog.
func readTables(t *testing.T, dir string, more ...string) (map[string]*exec.Table, sql.Catalog) {
	t.Helper()
	files := map[string]string{"matches": "matches.csv", "match_players": "match_players.csv"}
	for _, name := range more {
		files[name] = name + ".csv"
	}
	tables := map[string]*exec.Table{}
	cat := sql.Catalog{}
	for name, file := range files {
		f, err := os.Open(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		tab, err := exec.ReadCSV(f, schema.MaxRecordBytes)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		tables[name], cat[name] = tab, tab.Columns
	}
	return tables, cat
}

// TestSQLExamples: the example queries of queries/examples, run together
// as one job on three shards, each write the rows the executor computes
// on the same files (tools/duckdb holds them against DuckDB).
func TestSQLExamples(t *testing.T) {
	dir, flags := sqlDataset(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "queries", "examples", "*.sql"))
	if err != nil || len(files) < 10 {
		t.Fatalf("example queries: %v, %v", files, err)
	}
	out := t.TempDir()
	args := append(flags, "--out", out, "--replicas", "3")
	for _, f := range files {
		args = append(args, "--query", strings.TrimSuffix(filepath.Base(f), ".sql")+"="+f)
	}
	var stdout, stderr bytes.Buffer
	if err := Run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		query, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		if want := executorAnswer(t, dir, string(query)); !bytes.Equal(got, want) {
			t.Errorf("%s.csv:\n%s\nwant (the executor's):\n%s", name, got, want)
		}
	}
}

// TestSQLRefused: a query the engine refuses, a --table file that is not
// there, and flags of the graph's run given with --query exit 2, before any
// data is read: the default dataset is not even generated.
func TestSQLRefused(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.sql")
	if err := os.WriteFile(bad, []byte("SELECT civ\nFROM match_players NATURAL JOIN matches\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--query", "bad=" + bad}, "query bad (" + bad + "): 2:"},
		{[]string{"--query", "q1=" + queryFile("q1"), "--table", "civs=" + filepath.Join(dir, "nothere.csv")}, "--table civs=" + filepath.Join(dir, "nothere.csv")},
		{[]string{"--explain", "--grpc"}, "leave out --grpc"},
		{[]string{"--table", "civs=" + bad}, "1 tables and no queries: only a job of queries reads tables"},
	} {
		var stdout, stderr bytes.Buffer
		err := Run(context.Background(), append([]string{"--data", data, "--out", filepath.Join(dir, "out")}, c.args...), &stdout, &stderr)
		if !errors.Is(err, cli.ErrUsage) || cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("demo %v: %v (exit %d), want exit %d saying %q", c.args, err, cli.ExitCode(err), cli.ExitUsage, c.want)
		}
	}
	for _, d := range []string{data, filepath.Join(dir, "out")} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was made by a refused command line (%v)", d, err)
		}
	}
	// The construct and its exact place.
	err := Run(context.Background(), []string{"--data", data, "--query", "bad=" + bad}, &bytes.Buffer{}, &bytes.Buffer{})
	var se *sql.Error
	if !errors.As(err, &se) || se.Line != 2 || se.Col != 20 || se.Construct != "NATURAL JOIN" {
		t.Errorf("demo with a NATURAL JOIN: %v, want a *sql.Error of NATURAL JOIN at 2:20", err)
	}
}

// TestSQLExplain: --explain prints each query's logical plan and the
// job's physical plan, and runs nothing.
func TestSQLExplain(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"query q1 (queries/q1.sql), logical plan:", "query q4 (queries/q4.sql), logical plan:", "physical plan on gateway[1] and shard[2]:"}},
		{[]string{"--query", "q3=" + queryFile("q3"), "--replicas", "4"}, []string{"query q3 (" + queryFile("q3") + "), logical plan:", "physical plan on gateway[1] and shard[4]:"}},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"--explain", "--data", filepath.Join(dir, "data"), "--out", filepath.Join(dir, "out")}, c.args...)
		if err := Run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("demo %v: %v\n%s", args, err, stderr.String())
		}
		for _, w := range c.want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("demo %v: the output lacks %q:\n%s", args, w, stdout.String())
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("--explain made %v", entries)
	}
}

// TestSQLHelp: the usage says what --query runs on, and that a cluster
// takes the same queries.
func TestSQLHelp(t *testing.T) {
	var stderr bytes.Buffer
	if err := Run(context.Background(), []string{"-h"}, &bytes.Buffer{}, &stderr); cli.ExitCode(err) != 0 {
		t.Fatalf("-h: %v", err)
	}
	for _, w := range []string{"--query NAME=FILE.sql", "in-process runner", "wololo client submit\ntake the same --query", "-explain", "-table value"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("the help lacks %q:\n%s", w, stderr.String())
		}
	}
}
