package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// examplesDir holds the example queries of queries/examples/README.md.
const examplesDir = "../../queries/examples"

// TestSQLExamplesAgainstDuckDB runs every example query of queries/examples
// with Wololo's engine and with DuckDB over a generated dataset
// (malformed records, missing and invalid values and all), as
// TestSQLAgainstDuckDB does its random queries, and fails on any
// difference. Each example must return rows, so that the comparison
// proves something. Both read the same text: the examples are written
// in the dialect both speak (PostgreSQL's).
func TestSQLExamplesAgainstDuckDB(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("%d example queries in %s, want at least 10", len(files), examplesDir)
	}
	tables, d := generatedTables(t)
	for _, f := range files {
		checkFile(t, d, tables, f)
	}
}

// bandQueryFile is issue 38's query, the win rate by rating band grouped
// by a four-branch CASE, which services/e2e runs in `wololo local run`
// and holds equal to the engine's in-process runner.
const bandQueryFile = "../../services/e2e/testdata/bands.sql"

// TestBandQueryAgainstDuckDB: issue 38's query answers as DuckDB does,
// its AVG of a CASE of 1.0 and 0.0 (DuckDB's DOUBLE) included.
func TestBandQueryAgainstDuckDB(t *testing.T) {
	tables, d := generatedTables(t)
	if rows := checkFile(t, d, tables, bandQueryFile); len(rows) != 4 {
		t.Errorf("%d bands, want 4: %q", len(rows), rows)
	}
}

// generatedTables are the two input files, generated (20,000 matches,
// malformed records, missing and invalid values and all), and a differ.
func generatedTables(t *testing.T) ([]sqlgen.Table, *differ) {
	t.Helper()
	var m, p bytes.Buffer
	if _, err := datagen.Generate(datagen.Config{Matches: 20000, Seed: 11}, &m, &p); err != nil {
		t.Fatal(err)
	}
	mh, ph := datagen.Headers()
	tables := []sqlgen.Table{
		{Name: "matches", Columns: mh, CSV: m.String()},
		{Name: "match_players", Columns: ph, CSV: p.String()},
	}
	return tables, newDiffer(t)
}

// checkFile runs the query of a file with our engine and with DuckDB over
// tables, fails on any difference or on no rows, and returns our rows.
func checkFile(t *testing.T, d *differ, tables []sqlgen.Table, f string) []string {
	t.Helper()
	text, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSuffix(filepath.Base(f), ".sql")
	query := string(text)
	var stats diffStats
	ours := d.check(t, name, tables, query, &stats)
	if stats.compared != 1 {
		t.Errorf("%s: not compared (beyond DuckDB's DECIMAL)", name)
	}
	if len(ours) == 0 {
		t.Errorf("%s: no rows on the generated dataset: the comparison proves nothing", name)
	}
	return ours
}
