package explain_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/explain"
)

func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := explain.Run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestDefaults: with no flag, the four default queries on the default
// topology, against testdata/defaults.golden.
func TestDefaults(t *testing.T) {
	t.Setenv("WOLOLO_TOPOLOGY", "")
	out, _, err := run(t)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, "defaults.golden", []byte(out))
}

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTopology: --topology names the tasks the plan is on.
func TestTopology(t *testing.T) {
	top, err := deploy.Default().WithReplicas(map[string]int{"shard": 3})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "--topology", write(t, t.TempDir(), "top.json", string(js)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "physical plan on gateway[1] and shard[3]:") || !strings.Contains(out, "task shard[3]:") {
		t.Errorf("--topology with 3 shards:\n%s", out)
	}
}

// TestQueriesAndTables: --query files over --table headers and a
// --players file whose header differs from the generator's.
func TestQueriesAndTables(t *testing.T) {
	dir := t.TempDir()
	civs := write(t, dir, "civs.csv", "civ,region\nAztecs,americas\n")
	players := write(t, dir, "players.csv", "match,civ,elo\nm1,Aztecs,1000\n")
	q := write(t, dir, "q.sql", "SELECT c.region, COUNT(*) AS n\nFROM match_players p JOIN civs c ON p.civ = c.civ\nWHERE p.elo::numeric > 1500\nGROUP BY c.region")
	out, _, err := run(t, "--query", "regions="+q, "--table", "civs="+civs, "--players", players)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"query regions (" + q + "), logical plan:",
		"scan civs -> (civ text, region text)",
		"match_players-by-civ: gateway -> shard, by civ",
		"route 0 -> #4 [regions] where (elo#1 > 1500), reads (civ)",
		"partial-aggregate by [region#0]",
		"final-aggregate by [region#0]",
		"sink regions.csv",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "query q1") {
		t.Errorf("--query given, yet the default queries are explained:\n%s", out)
	}
}

// TestRefused: a query the engine refuses exits 2 naming the construct
// and its line:column; a missing file exits 1; a malformed flag 2.
func TestRefused(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "bad.sql", "SELECT token\nFROM matches m NATURAL JOIN match_players p")
	unknown := write(t, dir, "unknown.sql", "SELECT nope FROM matches")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--query", "bad=" + bad}, cli.ExitUsage, "query bad (" + bad + "): 2:16: NATURAL JOIN: not supported"},
		{[]string{"--query", "u=" + unknown}, cli.ExitUsage, `matches.csv: no column "nope" (read by query u at`},
		{[]string{"--query", "x=" + filepath.Join(dir, "missing.sql")}, cli.ExitError, "no such file"},
		{[]string{"--query", "nameonly"}, cli.ExitUsage, "want NAME=FILE"},
		{[]string{"--query", "a=" + bad, "--query", "a=" + unknown}, cli.ExitUsage, "query a is named twice"},
		{[]string{"--table", "t=" + filepath.Join(dir, "missing.csv")}, cli.ExitError, "table t"},
		{[]string{"--query", "u=" + unknown, "--table", "matches=" + bad}, cli.ExitUsage, `table 1: table name "matches" is the table of matches.csv`},
		{[]string{"stray"}, cli.ExitUsage, "unexpected argument"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, _, err := run(t, c.args...)
			if code := cli.ExitCode(err); code != c.code || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v (exit %d), want exit %d saying %q", err, code, c.code, c.want)
			}
		})
	}
}

// TestHelp: -h prints the usage and the flags, and exits 0.
func TestHelp(t *testing.T) {
	_, stderr, err := run(t, "-h")
	if !errors.Is(err, flag.ErrHelp) || cli.ExitCode(err) != 0 {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"usage: wololo explain [--query NAME=FILE.sql ...]", "-query value", "-table value", "-topology string", "line:column"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the help lacks %q:\n%s", want, stderr)
		}
	}
}

// TestTablesOnly: --table files and neither --matches nor --players make
// a job of its tables only (a gzip-compressed file's header read as
// well), whose queries read no matches or match_players.
func TestTablesOnly(t *testing.T) {
	dir := t.TempDir()
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write([]byte("civ,region\nAztecs,americas\n"))
	w.Close()
	civs := write(t, dir, "civs.data", z.String())
	q := write(t, dir, "q.sql", "SELECT region, COUNT(*) AS n FROM civs GROUP BY region")
	out, _, err := run(t, "--query", "regions="+q, "--table", "civs="+civs)
	if err != nil || !strings.Contains(out, "scan civs -> (region text)") || strings.Contains(out, "match") {
		t.Fatalf("a job of a gzip-compressed table only: %v\n%s", err, out)
	}
	m := write(t, dir, "m.sql", "SELECT COUNT(*) AS n FROM matches")
	_, _, err = run(t, "--query", "regions="+q, "--query", "m="+m, "--table", "civs="+civs)
	if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "this job has no matches.csv: query m") {
		t.Fatalf("a query of matches in a job of tables only: %v", err)
	}
}
