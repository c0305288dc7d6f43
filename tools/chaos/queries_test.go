package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
)

// smallDataset writes a generated dataset into a temporary directory and
// returns its two files.
func smallDataset(t *testing.T, matches int64) (string, string) {
	t.Helper()
	dir := t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: matches, Seed: 11}, dir); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv")
}

// TestSQLQueries: --sql is the four defaults as SQL, in order, then the
// embedded user queries, each a query the engine plans.
func TestSQLQueries(t *testing.T) {
	qs, err := SQLQueries()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, q := range qs {
		names = append(names, q.Name)
	}
	if want := append(slices.Clone(queries.Names), "maps", "twice"); !slices.Equal(names, want) {
		t.Fatalf("queries %v, want %v", names, want)
	}
	for i, q := range qs {
		if def := i < len(queries.Names); isDefault(q) != def {
			t.Errorf("%s: isDefault %v, want %v", q.Name, !def, def)
		}
	}
	if isDefault(sqljob.Query{Name: "q1", Text: "SELECT token FROM matches"}) {
		t.Errorf("a query named q1 with other text is taken for the default q1")
	}
}

// TestJobQueries: the --sql and --query flags together, and a name given
// by both refused as a usage error.
func TestJobQueries(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.sql")
	if err := os.WriteFile(mine, []byte("SELECT map FROM matches"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		want  []string
		usage bool
	}{
		{"none", nil, nil, false},
		{"sql", []string{"--sql"}, append(slices.Clone(queries.Names), "maps", "twice"), false},
		{"query", []string{"--query", "mine=" + mine}, []string{"mine"}, false},
		{"both", []string{"--sql", "--query", "mine=" + mine}, append(slices.Clone(queries.Names), "maps", "twice", "mine"), false},
		{"twice", []string{"--sql", "--query", "maps=" + mine}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := cli.NewFlagSet("test", "", io.Discard)
			qf := explain.RegisterQueryFlags(fs, "")
			sql := fs.Bool("sql", false, "")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			qs, err := jobQueries(fs, *sql, qf)
			if tc.usage {
				if !errors.Is(err, cli.ErrUsage) {
					t.Fatalf("got %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, q := range qs {
				names = append(names, q.Name)
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("queries %v, want %v", names, tc.want)
			}
		})
	}
}

// TestExpectedAndCompare: the expected files of a job of the default
// queries are the reference's four; of a job of queries, NAME.csv each, the
// defaults' the reference's and the others' the SQL engine's; a
// differing output is reported and the expected files written for a diff.
func TestExpectedAndCompare(t *testing.T) {
	matches, players := smallDataset(t, 1500)
	ref, err := reference.EvaluateFiles(matches, players)
	if err != nil {
		t.Fatal(err)
	}
	defaults, err := expected(matches, players, nil, deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(defaults.names, schema.ResultFiles(queries.Names)) {
		t.Errorf("the default queries' expected files: %v", defaults.names)
	}
	testkit.SameBytes(t, defaults.files, ref.Files())
	qs, err := SQLQueries()
	if err != nil {
		t.Fatal(err)
	}
	mine := sqljob.Query{Name: "q2", Text: "SELECT map, COUNT(*) AS n FROM matches GROUP BY map ORDER BY map"} // not the default q2
	qs = append(qs[:1], append([]sqljob.Query{mine}, qs[2:]...)...)
	want, err := expected(matches, players, qs, deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(want.names, append(schema.ResultFiles(queries.Names), "maps.csv", "twice.csv")) {
		t.Fatalf("names %v", want.names)
	}
	for name, w := range ref.Files() {
		if name != "q2.csv" && !bytes.Equal(want.files[name], w) {
			t.Errorf("the default %s's expected file is not the reference's", name)
		}
	}
	if bytes.Equal(want.files["q2.csv"], ref.Answers["q2"]) || !bytes.HasPrefix(want.files["q2.csv"], []byte("map,n\n")) {
		t.Errorf("a user's q2 expected as %.100q", want.files["q2.csv"])
	}
	for _, name := range want.names {
		if bytes.Count(want.files[name], []byte("\n")) < 2 {
			t.Errorf("%s: the expected file has no rows: the test checks nothing", name)
		}
	}
	if !strings.Contains(want.from, "q2.csv, maps.csv, twice.csv") {
		t.Errorf("from: %q", want.from)
	}

	out, refDir := t.TempDir(), filepath.Join(t.TempDir(), "reference")
	for _, name := range want.names {
		if err := os.WriteFile(filepath.Join(out, name), want.files[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if equal, diffs, _, err := compare(want, out, refDir); err != nil || !equal {
		t.Fatalf("the expected files themselves: equal %v, %v, %v", equal, diffs, err)
	}
	twice := filepath.Join(out, "twice.csv")
	if err := os.WriteFile(twice, bytes.Replace(want.files["twice.csv"], []byte("\n"), []byte("\nextra,row\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(out, "maps.csv")); err != nil {
		t.Fatal(err)
	}
	equal, diffs, at, err := compare(want, out, refDir)
	if err != nil || equal || at != refDir || len(diffs) != 3 ||
		!strings.HasPrefix(diffs[0], "maps.csv: ") || !strings.Contains(diffs[1], "twice.csv: got") || !strings.Contains(diffs[2], "diff -ru") {
		t.Fatalf("equal %v at %q err %v, diffs:\n%s", equal, at, err, strings.Join(diffs, "\n"))
	}
	for _, name := range want.names {
		if b, err := os.ReadFile(filepath.Join(refDir, name)); err != nil || !bytes.Equal(b, want.files[name]) {
			t.Errorf("%s for the diff: %v", name, err)
		}
	}
}

// TestChaosLocalSQL is the crash harness on a job of SQL queries: the
// four defaults as SQL and the user queries of --sql (a join grouped by
// map, two semi-joins, one a shuffle from shard to shard), two seeds of
// 12 SIGKILLs each across every kind of process, the leading master among
// them; every output must be byte-equal to the
// reference's or the SQL engine's in-process answer.
func TestChaosLocalSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos: skipped with -short (builds the binary and runs a 12-kill job on OS processes)")
	}
	bin := testkit.WololoBinary(t)
	matches, players := smallDataset(t, chaosMatches)
	qs, err := SQLQueries()
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []int64{3, 4} {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			w := testkit.Writer(t)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			start := time.Now()
			out := t.TempDir()
			rep, err := Local(ctx, Options{
				Binary: bin, Matches: matches, Players: players, Out: out, Queries: qs,
				Kills: 12, Seed: seed, Masters: 3,
				Stdout: w, Progress: w, Log: hclog.New(&hclog.LoggerOptions{Name: "chaos", Level: hclog.Warn, Output: w}),
			})
			if err != nil {
				if rep != nil {
					t.Logf("logs of every process: %s/<instance>.log", rep.DataDir)
				}
				t.Fatalf("chaos seed %d: %v", seed, err)
			}
			t.Logf("seed %d: %d kills in %s (upload done at +%s), %d restarts", seed, len(rep.Kills), time.Since(start).Round(time.Millisecond), fmtDur(rep.UploadAt), rep.Restarts)
			if len(rep.Kills) < 10 {
				t.Errorf("%d kills, want at least 10", len(rep.Kills))
			}
			if !rep.Equal {
				t.Errorf("outputs differ: %v", rep.Diffs)
			}
			for _, q := range qs {
				if _, err := os.Stat(filepath.Join(out, q.Name+".csv")); err != nil {
					t.Errorf("no output of query %s: %v", q.Name, err)
				}
			}
		})
	}
}

// TestLocalRefusedQueryStartsNothing: a query the SQL engine refuses
// fails the run before the cluster starts: no report, nothing made in
// the run's temporary directory.
func TestLocalRefusedQueryStartsNothing(t *testing.T) {
	matches, players := smallDataset(t, 200)
	tmp := t.TempDir()
	var stdout bytes.Buffer
	rep, err := Local(context.Background(), Options{
		Matches: matches, Players: players, Out: t.TempDir(), TempDir: tmp, Kills: 4, Stdout: &stdout,
		Queries: []sqljob.Query{{Name: "bad", From: "bad.sql", Text: "SELECT nope FROM matches"}},
	})
	if err == nil || rep != nil || !strings.Contains(err.Error(), `matches.csv: no column "nope" (read by query bad at`) {
		t.Fatalf("report %v, error %v", rep, err)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the run made %d entries in its temporary directory", len(left))
	}
}
