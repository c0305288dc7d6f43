package main

import (
	"path/filepath"
	"testing"
)

// analystDir holds the analyst queries of queries/analyst/README.md.
const analystDir = "../../queries/analyst"

// TestSQLAnalystQueriesAgainstDuckDB runs every query of queries/analyst
// (issue 41's "at least 20 more" queries an analyst writes: outer joins,
// joins of three tables and on two keys, USING, set operations, FILTER,
// aggregates of DISTINCT, OFFSET, CTEs, subqueries in FROM, EXISTS and
// scalar subqueries, window functions, the string and number functions) with Wololo's engine and with DuckDB over the
// generated dataset, the same text for both, as
// TestSQLExamplesAgainstDuckDB runs the examples: the same rows, and some.
func TestSQLAnalystQueriesAgainstDuckDB(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(analystDir, "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("%d analyst queries in %s, want at least 20", len(files), analystDir)
	}
	tables, d := generatedTables(t)
	for _, f := range files {
		rows := checkFile(t, d, tables, f)
		t.Logf("%s: %d rows", filepath.Base(f), len(rows))
	}
}
