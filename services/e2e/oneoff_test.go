package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/client"
	sqlflags "github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/roles/node"
)

// oneoffSQL is the one-off query of TestOneOffQueryThroughTheCLI: a join
// of both tables, which no default query is.
const oneoffSQL = `SELECT m.map, p.civ, count(*) AS games, sum(p.rating) AS rating
FROM matches m JOIN match_players p ON p.match = m.token
GROUP BY m.map, p.civ
ORDER BY games DESC, m.map, p.civ
LIMIT 25`

// TestOneOffQueryThroughTheCLI: `client submit --standing` and two
// `append`s, then `client query --job ID "SELECT ..."`: its stdout is the
// SQL engine's answer (sqlops.Answer) of that query over the rows of the
// three epochs, with nothing uploaded again; a query the engine refuses
// exits 4 (refused) with its line:column, as do one of a column the
// tables lack and one of a job that is not there.
func TestOneOffQueryThroughTheCLI(t *testing.T) {
	const epochs = 3
	_, gateway, matches, matchesUpTo, players, playersUpTo := retainingCluster(t, testDatasets(t)[1], epochs)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, must := cliOn(ctx, t, gateway)

	must("submit", "--standing", "--quiet", "--job", "s", "--matches", matches[0], "--players", players[0], "--out", t.TempDir())
	for k := 2; k <= epochs; k++ {
		must("append", "--quiet", "--job", "s", "--matches", matches[k-1], "--players", players[k-1], "--out", t.TempDir())
	}
	want := answerOn(t, map[string]string{"matches": matchesUpTo[epochs-1], "match_players": playersUpTo[epochs-1]},
		[]sqljob.Query{{Name: "query", Text: oneoffSQL}})["query"]
	got, stderr, err := run("query", "--job", "s", oneoffSQL)
	if err != nil || got != string(want) {
		t.Fatalf("client query: %v (%s)\n got: %.400q\nwant: %.400q", err, stderr, got, want)
	}
	if !strings.Contains(stderr, "over epochs 1 to 3") {
		t.Errorf("client query's stderr %q does not say the epochs it is over", stderr)
	}
	// A default query, the SQL before the flags, over the same rows.
	q2 := sqlflags.DefaultQueries()[1]
	want = answerOn(t, map[string]string{"matches": matchesUpTo[epochs-1], "match_players": playersUpTo[epochs-1]}, []sqljob.Query{{Name: "query", Text: q2.Text}})["query"]
	if got, _, err := run("query", q2.Text, "--job", "s"); err != nil || got != string(want) {
		t.Fatalf("client query of %s, the SQL before the flags: %v\n got: %.300q\nwant: %.300q", q2.Name, err, got, want)
	}

	_, stderr, err = run("query", "--job", "s", "SELECT token\nFROM matches\nWHERE token = = 1")
	if code := cli.ExitCode(err); code != cli.ExitRefused || !strings.Contains(err.Error(), "3:15: syntax") {
		t.Fatalf("a query the SQL engine refuses: exit %d, %v (%s); want exit %d naming 3:15", code, err, stderr, cli.ExitRefused)
	}
	_, _, err = run("query", "--job", "s", "SELECT nope FROM matches")
	if code := cli.ExitCode(err); code != cli.ExitRefused || !strings.Contains(err.Error(), `no column "nope"`) {
		t.Fatalf("a query of an unknown column: exit %d, %v; want exit %d", code, err, cli.ExitRefused)
	}
	_, _, err = run("query", "--job", "nope", "SELECT count(*) AS n FROM matches")
	if code := cli.ExitCode(err); code != cli.ExitRefused || !strings.Contains(err.Error(), `no job "nope"`) {
		t.Fatalf("a query of an unknown job: exit %d, %v; want exit %d", code, err, cli.ExitRefused)
	}
}

// cliOn runs `wololo client` commands with the gateway's flags: run
// returns stdout, stderr and the error; must fails the test on an error
// and returns stdout.
func cliOn(ctx context.Context, t *testing.T, gateway []string) (run func(args ...string) (string, string, error), must func(args ...string) string) {
	run = func(args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		err := client.Run(ctx, append(args, gateway...), &stdout, &stderr)
		return stdout.String(), stderr.String(), err
	}
	must = func(args ...string) string {
		t.Helper()
		stdout, stderr, err := run(args...)
		if err != nil {
			t.Fatalf("client %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return stdout
	}
	return run, must
}

// retainingCluster starts a cluster whose gateway retains the jobs'
// input (a data directory), and returns it, the client's flags for it,
// and d's files cut into epochs (splitEpochs).
func retainingCluster(t *testing.T, d *dataset, epochs int) (c *node.Cluster, gateway, matches, matchesUpTo, players, playersUpTo []string) {
	t.Helper()
	c = startCluster(t, deploy.Default(), node.ClusterOptions{DataDir: t.TempDir()})
	gateway = []string{"--server", c.GatewayAddr(), "--tls-dir", clientDir(t, c, "client"), "--name", "client"}
	dir := t.TempDir()
	matches, matchesUpTo = splitEpochs(t, d.matches, dir, epochs)
	players, playersUpTo = splitEpochs(t, d.players, dir, epochs)
	return c, gateway, matches, matchesUpTo, players, playersUpTo
}
