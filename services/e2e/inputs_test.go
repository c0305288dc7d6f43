package e2e

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/roles/node"
)

// runWithStdin runs bin with args and stdin to its end, at most two
// minutes.
func runWithStdin(t *testing.T, bin string, stdin []byte, args ...string) ran {
	t.Helper()
	return runWith(t, 2*time.Minute, stdin, bin, args...)
}

// gzipped writes a gzip-compressed copy of the file at path into dir,
// under a name that does not say so, and returns its path and bytes.
func gzipped(t *testing.T, path, dir string) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, filepath.Base(path)+".data")
	if err := os.WriteFile(out, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out, z.Bytes()
}

// sameDir fails unless the result files of dir are those of want (each
// NAME.csv), byte for byte.
func sameDir(t *testing.T, what, dir, want string, names []string) {
	t.Helper()
	for _, name := range names {
		w, err := os.ReadFile(filepath.Join(want, name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, name+".csv"))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !bytes.Equal(got, w) || bytes.Count(w, []byte("\n")) < 3 {
			t.Errorf("%s: %s.csv differs from the plain files' job (or has too few rows)\n got: %.300q\nwant: %.300q", what, name, got, w)
		}
	}
}

// tablesOnlyJob writes into dir the queries of a job of two tables,
// regions (writeRegions) and p (a copy of the players file): their
// --query flags, their names, and the path of regions.csv.
func tablesOnlyJob(t *testing.T, players, dir string) (queryArgs, names []string, regions string) {
	t.Helper()
	regions, _ = writeRegions(t, players, dir)
	queries := map[string]string{
		"by_region": "SELECT r.region, COUNT(*) AS players, MAX(p.rating) AS top FROM p JOIN regions r ON p.civ = r.civ GROUP BY r.region ORDER BY r.region",
		"civs":      "SELECT civ, winner, COUNT(*) AS n FROM p GROUP BY civ, winner ORDER BY civ, winner",
	}
	names = []string{"by_region", "civs"}
	for _, name := range names {
		path := filepath.Join(dir, name+".sql")
		if err := os.WriteFile(path, []byte(queries[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		queryArgs = append(queryArgs, "--query", name+"="+path)
	}
	return queryArgs, names, regions
}

// TestCLIInputs runs bin/wololo's client submit (and demo) on a cluster
// with: a job of --table files only, the same tables gzip-compressed,
// one of them on standard input (gzip-compressed too), and the default
// job of gzip-compressed matches and players. Each writes, byte for
// byte, the answers of the same job on the plain files (the tables'
// queries with the two files given; the reference's). A query of matches
// in a job of tables only is refused at creation (by the client's copy of the
// gateway's checks, exit 1), one file
// without the other is a usage error (exit 2), and no spool of standard
// input is left behind.
func TestCLIInputs(t *testing.T) {
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[1] // messy: CRLF, quoted, shuffled columns
	c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 2})
	tlsDir := clientDir(t, c, "client")
	tmp := t.TempDir()
	spools := t.TempDir() // TMPDIR of the runs: where a spool would be left
	queryArgs, names, regions := tablesOnlyJob(t, d.players, tmp)
	submit := func(stdin []byte, args ...string) ran {
		t.Helper()
		args = append(append([]string{"client", "submit", "--quiet", "--server", c.GatewayAddr(), "--tls-dir", tlsDir}, queryArgs...), args...)
		cmd := append([]string{"env", "TMPDIR=" + spools, bin}, args...)
		return runWithStdin(t, cmd[0], stdin, cmd[1:]...)
	}
	must := func(what string, r ran) {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", what, r.code, r.output())
		}
	}
	gzRegions, _ := gzipped(t, regions, tmp)
	gzPlayers, gzPlayersBytes := gzipped(t, d.players, tmp)
	gzMatches, _ := gzipped(t, d.matches, tmp)

	plain := t.TempDir() // the same queries, with the two files given
	must("plain files", submit(nil, "--matches", d.matches, "--players", d.players, "--table", "regions="+regions, "--table", "p="+d.players, "--out", plain))

	only := t.TempDir()
	r := submit(nil, "--json", "--table", "regions="+regions, "--table", "p="+d.players, "--out", only)
	must("tables only", r)
	sameDir(t, "tables only", only, plain, names)
	if rep := jsonLines(t, "submit --json", r.stdout); len(rep) != 1 || len(rep[0]["inputs"].([]any)) != 2 {
		t.Errorf("tables only: the report's inputs are not the two tables: %v", rep)
	}

	zipped := t.TempDir()
	must("gzip tables", submit(nil, "--table", "regions="+gzRegions, "--table", "p="+gzPlayers, "--out", zipped))
	sameDir(t, "gzip tables", zipped, plain, names)

	stdin := t.TempDir()
	must("a gzip table on stdin", submit(gzPlayersBytes, "--table", "regions="+regions, "--table", "p=-", "--out", stdin))
	sameDir(t, "a gzip table on stdin", stdin, plain, names)

	defaults := t.TempDir()
	must("gzip matches and players on stdin", runWithStdin(t, bin, gzPlayersBytes, "client", "submit", "--quiet", "--server", c.GatewayAddr(), "--tls-dir", tlsDir, "--matches", gzMatches, "--players", "-", "--out", defaults))
	compareOutputs(t, d, defaults)

	demo := t.TempDir()
	must("demo, tables only, gzip on stdin", runWithStdin(t, bin, gzPlayersBytes, append(append([]string{"demo"}, queryArgs...), "--table", "regions="+gzRegions, "--table", "p=-", "--out", demo)...))
	sameDir(t, "demo, tables only, gzip on stdin", demo, plain, names)

	m := filepath.Join(tmp, "m.sql")
	if err := os.WriteFile(m, []byte("SELECT COUNT(*) AS n FROM matches"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = submit(nil, "--query", "m="+m, "--table", "regions="+regions, "--table", "p="+d.players, "--out", t.TempDir())
	if r.code != cli.ExitError || !strings.Contains(r.stderr, "this job has no matches.csv: query m") { // refused by the client's own checks (checkLocally), before the gateway
		t.Errorf("a query of matches in a job of tables only: exit %d\n%s", r.code, r.output())
	}
	r = submit(nil, "--matches", d.matches, "--table", "p="+d.players, "--out", t.TempDir())
	if r.code != cli.ExitUsage || !strings.Contains(r.stderr, "--players is required with --matches") {
		t.Errorf("--matches alone: exit %d\n%s", r.code, r.output())
	}
	if left, _ := filepath.Glob(filepath.Join(spools, "wololo-stdin-*")); len(left) != 0 {
		t.Errorf("spools of standard input left behind: %v", left)
	}
}

// TestLocalRunTablesOnly: `wololo local run --epochs 2` of a job of
// tables only, one gzip-compressed and the other gzip on standard input:
// cut into two appends (the compressed files decompressed to be cut, the
// spool of stdin read), submitted as a standing job of tables only and
// appended to (no --matches, --players), its final answers byte-equal to
// those of the in-memory demo of the same queries on the plain files.
func TestLocalRunTablesOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a local cluster")
	}
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[0]
	tmp := t.TempDir()
	queryArgs, names, regions := tablesOnlyJob(t, d.players, tmp)
	plain := t.TempDir()
	if r := runBinary(t, bin, append(append([]string{"demo"}, queryArgs...), "--matches", d.matches, "--players", d.players, "--table", "regions="+regions, "--table", "p="+d.players, "--out", plain)...); r.code != 0 {
		t.Fatalf("demo on the plain files: exit %d\n%s", r.code, r.output())
	}
	gzRegions, _ := gzipped(t, regions, tmp)
	_, gzPlayers := gzipped(t, d.players, tmp)
	out := t.TempDir()
	r := runWithStdin(t, bin, gzPlayers, append(append([]string{"local", "run", "--free-ports", "--log-level", "warn", "--epochs", "2"}, queryArgs...), "--table", "regions="+gzRegions, "--table", "p=-", "--out", out)...)
	if r.code != 0 || !strings.Contains(r.stdout, "version 2:") {
		t.Fatalf("local run --epochs 2 of tables only: exit %d\n%s", r.code, r.output())
	}
	sameDir(t, "local run --epochs 2 of tables only", out, plain, names)
}
