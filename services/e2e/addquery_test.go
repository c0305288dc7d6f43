package e2e

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/services/cmdline/cli"
	sqlflags "github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
)

// TestAddedQueryThroughTheCLI: `client submit --standing`, an `append`,
// then `client query --job ID --query extra=F.sql` adds a query to the
// open job, and a second `append`: `results --epoch 2` and `--epoch 3`
// have extra.csv, each the SQL engine's answer (sqlops.Answer) of that
// query over the rows of the epochs so far (epoch 2's computed from the
// retained input, epoch 3's kept up with the append), beside the job's
// own queries; the results after `close` have its last version. A name
// the job has already, and a query the engine refuses, exit 4.
func TestAddedQueryThroughTheCLI(t *testing.T) {
	const epochs = 3
	_, gateway, matches, matchesUpTo, players, playersUpTo := retainingCluster(t, testDatasets(t)[1], epochs)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, must := cliOn(ctx, t, gateway)
	sqlFile := filepath.Join(t.TempDir(), "extra.sql")
	if err := os.WriteFile(sqlFile, []byte(oneoffSQL), 0o644); err != nil {
		t.Fatal(err)
	}
	queries := append(sqlflags.DefaultQueries(), sqljob.Query{Name: "extra", Text: oneoffSQL})
	want := func(k int) map[string][]byte {
		return answerOn(t, map[string]string{"matches": matchesUpTo[k-1], "match_players": playersUpTo[k-1]}, queries)
	}
	check := func(what, out string, k int) {
		t.Helper()
		w := want(k)
		for _, q := range queries {
			got, err := os.ReadFile(filepath.Join(out, q.Name+".csv"))
			if err != nil || string(got) != string(w[q.Name]) {
				t.Errorf("%s: %s.csv is not the answer over epochs 1..%d (%v)\n got: %.300q\nwant: %.300q", what, q.Name, k, err, got, w[q.Name])
			}
		}
	}

	must("submit", "--standing", "--quiet", "--job", "s", "--matches", matches[0], "--players", players[0], "--out", t.TempDir())
	must("append", "--quiet", "--job", "s", "--matches", matches[1], "--players", players[1], "--out", t.TempDir())
	if out := must("query", "--job", "s", "--query", "extra="+sqlFile); !strings.Contains(out, "at epoch 2") {
		t.Errorf("client query --query: %q does not say the epoch it was added at", out)
	}
	out := t.TempDir()
	must("results", "--job", "s", "--epoch", "2", "--out", out)
	check("results --epoch 2, the added query's backfill", out, 2)

	out = t.TempDir()
	must("append", "--quiet", "--job", "s", "--matches", matches[2], "--players", players[2], "--out", out)
	check("append after the query was added", out, 3)
	out = t.TempDir()
	must("results", "--job", "s", "--epoch", "3", "--out", out)
	check("results --epoch 3", out, 3)

	_, _, err := run("query", "--job", "s", "--query", "q1="+sqlFile)
	if code := cli.ExitCode(err); code != cli.ExitRefused || !strings.Contains(err.Error(), `has a query "q1"`) {
		t.Errorf("adding a query of a name the job has: exit %d, %v; want exit %d", code, err, cli.ExitRefused)
	}
	bad := filepath.Join(t.TempDir(), "bad.sql")
	if err := os.WriteFile(bad, []byte("SELECT token\nFROM matches\nWHERE token = = 1"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = run("query", "--job", "s", "--query", "bad="+bad)
	if code := cli.ExitCode(err); code != cli.ExitRefused || !strings.Contains(err.Error(), "3:15: syntax") {
		t.Errorf("adding a query the SQL engine refuses: exit %d, %v; want exit %d naming 3:15", code, err, cli.ExitRefused)
	}

	out = t.TempDir()
	must("results", "--job", "s", "--epoch", "1", "--out", out)
	if _, err := os.Stat(filepath.Join(out, "extra.csv")); err == nil {
		t.Errorf("results --epoch 1 has extra.csv: the query was added at epoch 2")
	}

	must("close", "--job", "s")
	out = t.TempDir()
	must("results", "--job", "s", "--out", out, "--keep")
	check("results after close", out, epochs)

	// The added query's changes watched (its first version all added,
	// at the epoch it was added at) add up to its last version.
	sum := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(must("watch", "--answers", "--job", "s")), "\n")[1:] {
		f := strings.SplitN(l, " ", 4)
		if len(f) != 4 || f[1] != "extra" {
			continue
		}
		if f[0] == "1" {
			t.Errorf("watch --answers: a change of extra at epoch 1, before it was added: %q", l)
		}
		diff, _ := strconv.ParseInt(f[2], 10, 64)
		row, err := csv.NewReader(strings.NewReader(f[3])).Read()
		if err != nil {
			t.Fatalf("watch --answers line %q: %v", l, err)
		}
		key := strings.Join(row, "\x00")
		if sum[key] += diff; sum[key] == 0 {
			delete(sum, key)
		}
	}
	if w := rowCounts(t, want(epochs)["extra"]); fmt.Sprint(sum) != fmt.Sprint(w) {
		t.Errorf("the changes of extra watched add up to %v; want %v", sum, w)
	}
}
