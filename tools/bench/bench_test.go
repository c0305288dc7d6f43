package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/base/datagen"
)

// TestMain removes the binary testkit.WololoBinary built after the tests.
func TestMain(m *testing.M) { testkit.Main(m) }

// TestBenchSmoke runs the whole bench on a tiny dataset with the wololo
// binary built as make build builds it (testkit.WololoBinary) and the
// DuckDB baselines (plain and exact) built from ../duckdb (CGO), two rounds of every mode
// (demo and local mode's defaults, the SQL plan of the four default
// queries; the same on the hand-written graph; the job of
// ../../queries/examples; the analyst queries of ../../queries/analyst
// by DuckDB, demo and local mode), and checks the report has every section.
func TestBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wololo and starts a local cluster")
	}
	dir := t.TempDir()
	bin := testkit.WololoBinary(t)
	data := filepath.Join(dir, "data")
	if _, err := datagen.WriteDir(datagen.Config{Matches: 2000, Seed: 3}, data); err != nil {
		t.Fatal(err)
	}
	micro := filepath.Join(dir, "micro.txt")
	if err := os.WriteFile(micro, []byte("BenchmarkX-2  10  5 ns/op\nPASS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "BENCH.md")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, []string{
		"--matches", filepath.Join(data, "matches.csv"), "--players", filepath.Join(data, "match_players.csv"),
		"--out", out, "--binary", bin, "--work", filepath.Join(dir, "work"), "--local-data", filepath.Join(dir, "local"),
		"--micro", micro, "--runs", "2", "--duckdb", filepath.Join(dir, "duckdb-queries"), "--duckdb-src", "../duckdb",
		"--examples", "../../queries/examples", "--analyst", "../../queries/analyst",
		"--sizes", "1,2", "--sizes-data", filepath.Join(dir, "sizes"), "--sizes-matches", "2000",
	}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	analyst, err := filepath.Glob("../../queries/analyst/*.sql")
	if err != nil || len(analyst) < 20 {
		t.Fatalf("the analyst queries: %d, %v", len(analyst), err)
	}
	oneJob := fmt.Sprintf("one job of %d queries", len(analyst))
	for _, s := range []string{
		"## Targets", "## Machine", "## Dataset", "## Summary", "## Local mode, per process", "## Slowest stage",
		"## Micro-benchmarks", "## Reproduce", "BenchmarkX-2",
		"| Demo: the four default queries, SQL plan (one process, in memory) |", "| Local, the four default queries' SQL plan: 3 processes, segment logs, fsync, mutual TLS |",
		"| gateway-0 |", "| shard-1 |", "byte-equal to the reference",
		"Where the time of", "By kind of work", "go tool pprof -top -nodecount=15", "flat%",
		"| Exact DuckDB (the value rules in SQL, one process) |", "| DuckDB (the baselines, through go-duckdb) | v",
		"| Plain DuckDB (SQL as a user writes it, one process; the baseline) |",
		"## Against DuckDB", "| Durable local mode <= 0.8x exact DuckDB's wall time (median of 2) | ",
		"| Durable local mode <= 1x plain DuckDB's wall time (median of 2) | ", "| In-memory demo <= 0.6x plain DuckDB's wall time (median of 2) | ",
		"| In-memory demo <= 0.5x exact DuckDB's wall time (median of 2) | ", "| Exact DuckDB (the value rules in SQL, one process) | 2 | ",
		"| Plain DuckDB (SQL as a user writes it, one process; the baseline) | 2 | ",
		"### Every run", "| 0 | Reference evaluator (one process) |", "| 2 | Exact DuckDB (the value rules in SQL, one process) |",
		"| 2 | Plain DuckDB (SQL as a user writes it, one process; the baseline) |",
		"| 2 | Local: the four default queries, SQL plan (separate processes, segment logs, fsync, mutual TLS) |",
		"| 2 | Demo: the four default queries, SQL plan (one process, in memory) |",
		"## SQL plans",
		"| 2 | Demo: a SQL job of the example user queries (one process, in memory) |",
		"| 2 | Local: the four default queries as a standing job of one upload cut every 1s (--epoch-every), then closed |",
		"| With `--epoch-every 1s` on the upload of a standing job (`local-standing`), its first version out within 2s of the upload's start (median) | ",
		"| ... and its total time (upload, versions, close, results) <= 1.2x the batch job's (`local`, median wall times) | ",
		"| 2 | DuckDB: the analyst queries on a user's load (read_csv, try_cast; one process, the files loaded once) |",
		"| 2 | Demo: the analyst queries (one process per job, in memory) |",
		"| 2 | Local: the analyst queries (a cluster per job: separate processes, segment logs, fsync, mutual TLS) |",
		"in-memory demo (`demo-analyst`, " + oneJob + ") <= 1x DuckDB's wall time for the same texts (`duckdb-analyst`: one process, medians) | ",
		"in durable local mode (`local-analyst`, " + oneJob + ") <= 1.5x DuckDB's wall time for the same texts (`duckdb-analyst`: one process, medians) | ",
		"`demo-analyst`'s files against `duckdb-analyst`'s of the same round: ",
		"## The cost of more data", "| 2x (", "| durable local |",
		"| The four default queries added to that open job (`client query --job ID --query`, before its close) answer within 1.5x the time of their batch job over the same rows (`local`, median wall times) | ",
	} {
		if !strings.Contains(report, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	for _, s := range []string{"DIFFER", "No DuckDB baseline", "not run"} {
		if strings.Contains(report, s) {
			t.Errorf("report has %q", s)
		}
	}
	// The profiles kept are one round's, the others' are gone.
	if _, err := os.Stat(filepath.Join(dir, "work", "profiles", "gateway-0.prof")); err != nil {
		t.Errorf("profiles: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "work", "profiles-run-*")); len(m) > 0 {
		t.Errorf("profiles of other rounds left: %v", m)
	}
	if t.Failed() {
		t.Logf("report:\n%s\nprogress:\n%s", report, stderr.String())
	}
}
