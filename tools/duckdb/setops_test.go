package main

import (
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// The constructs of issue 41's item 2 that brief D added (FILTER on
// aggregates, OFFSET, aggregates of DISTINCT, UNION/INTERSECT/EXCEPT),
// each over a table whose edge cases they meet (NULLs, equal numbers of
// different scales, empty groups), compared with DuckDB on the same
// text. sqlgen's GenerateWith(Options{SetOps: true}) generates them at
// random too (TestSQLSetOpsGeneratedAgainstDuckDB).
var setOpsTables = []sqlgen.Table{
	{Name: "t", Columns: []string{"k", "n", "b", "s"},
		CSV: "k,n,b,s\na,1,1,x\na,1.0,0,x\na,2,1,y\na,,1,y\nb,2.5,0,x\nb,2.5,,z\nb,-3,1,z\nc,,0,\nc,,,w\nd,7,1,x\nd,7,1,x\n"},
	{Name: "u", Columns: []string{"k", "m"},
		CSV: "k,m\na,1\na,1\nb,2\nb,2\nb,3\ne,4\n,5\n"},
}

var setOpsQueries = []string{
	// FILTER: COUNT(*) counts the rows where the condition is true (not NULL).
	"SELECT t.k, COUNT(*) FILTER (WHERE t.b), COUNT(t.n) FILTER (WHERE t.b), SUM(t.n) FILTER (WHERE NOT t.b), MIN(t.s) FILTER (WHERE t.n > 1), MAX(t.n) FILTER (WHERE t.b IS NULL) FROM t GROUP BY t.k ORDER BY 1, 2, 3, 4, 5, 6",
	"SELECT COUNT(*) FILTER (WHERE t.n > 100), SUM(t.n) FILTER (WHERE t.n > 100), COUNT(*) FROM t",
	"SELECT t.k, STDDEV_SAMP(t.n) FILTER (WHERE t.b) FROM t GROUP BY t.k HAVING COUNT(*) FILTER (WHERE t.b) >= 1 ORDER BY 1, 2",
	// Aggregates of DISTINCT, alone and beside plain ones.
	"SELECT t.k, COUNT(DISTINCT t.n), SUM(DISTINCT t.n), MIN(DISTINCT t.n), MAX(DISTINCT t.s) FROM t GROUP BY t.k ORDER BY 1, 2, 3, 4, 5",
	"SELECT t.k, COUNT(DISTINCT t.s), COUNT(*), COUNT(t.n), SUM(t.n), MIN(t.n), MAX(t.s) FROM t GROUP BY t.k ORDER BY 1, 2, 3, 4, 5, 6, 7",
	"SELECT COUNT(DISTINCT t.n), COUNT(*), SUM(t.n) FROM t",
	"SELECT COUNT(DISTINCT t.n), COUNT(*), SUM(t.n) FROM t WHERE t.n > 100",
	"SELECT t.b, COUNT(DISTINCT t.k) FILTER (WHERE t.n IS NOT NULL), COUNT(*) FROM t GROUP BY t.b HAVING COUNT(DISTINCT t.k) FILTER (WHERE t.n IS NOT NULL) > 1 ORDER BY 1, 2, 3",
	"SELECT u.k, COUNT(DISTINCT u.m), SUM(DISTINCT u.m), COUNT(*), MAX(u.m) FROM u GROUP BY u.k ORDER BY 1, 2, 3, 4, 5",
	"SELECT t.k, STDDEV_SAMP(DISTINCT t.n) FROM t GROUP BY t.k ORDER BY 1, 2",
	// OFFSET, with and without LIMIT; ROW_NUMBER counts the rows it skips.
	"SELECT t.k, t.n FROM t ORDER BY 1, 2 LIMIT 3 OFFSET 2",
	"SELECT t.k, t.s FROM t ORDER BY 1 DESC, 2 OFFSET 4",
	"SELECT ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, t.k) AS r, t.k, COUNT(*) AS c FROM t GROUP BY t.k ORDER BY c DESC, t.k LIMIT 2 OFFSET 1",
	"SELECT u.k, u.m FROM u WHERE u.k IN (SELECT t.k FROM t ORDER BY t.k DESC LIMIT 3 OFFSET 2) ORDER BY 1, 2",
	// Set operations: by position, NULLs equal, numbers equal by value.
	"SELECT t.k, t.n FROM t UNION ALL SELECT u.k, u.m FROM u ORDER BY 1, 2",
	"SELECT t.k AS key, t.n FROM t UNION SELECT u.k, u.m FROM u ORDER BY key DESC, 2 LIMIT 6 OFFSET 1",
	"SELECT t.n FROM t INTERSECT SELECT u.m FROM u ORDER BY 1",
	"SELECT t.k FROM t EXCEPT SELECT u.k FROM u ORDER BY 1",
	"SELECT t.k, t.n FROM t EXCEPT SELECT u.k, u.m FROM u ORDER BY 1, 2",
	"SELECT t.s FROM t WHERE t.b UNION SELECT t.s FROM t WHERE NOT t.b INTERSECT SELECT t.s FROM t WHERE t.n > 1 ORDER BY 1",
	"(SELECT t.k FROM t UNION SELECT u.k FROM u) EXCEPT (SELECT t.k FROM t ORDER BY t.k DESC LIMIT 1) ORDER BY 1",
	"SELECT k, COUNT(*) FROM (SELECT t.k FROM t UNION ALL SELECT u.k FROM u) x GROUP BY k ORDER BY 1, 2",
	"WITH a AS (SELECT t.k, COUNT(*) AS c FROM t GROUP BY t.k) SELECT k, c FROM a UNION SELECT u.k, COUNT(*) FROM u GROUP BY u.k ORDER BY 1, 2",
	"SELECT u.k, u.m FROM u WHERE u.k IN (SELECT t.k FROM t WHERE t.n > 2 UNION SELECT t.s FROM t) ORDER BY 1, 2",
	"SELECT x.k FROM ((SELECT t.k FROM t) INTERSECT (SELECT u.k FROM u)) x ORDER BY 1",
	"SELECT u.k, u.m FROM u WHERE u.k IN ((SELECT t.s FROM t) UNION ALL SELECT t.k FROM t WHERE t.b) ORDER BY 1, 2",
}

// TestSQLSetOpsAgainstDuckDB runs setOpsQueries on both engines.
func TestSQLSetOpsAgainstDuckDB(t *testing.T) { checkQueries(t, setOpsQueries, setOpsTables) }

// checkQueries runs queries, each one text, on both engines over tables,
// and fails unless each is compared and returns rows.
func checkQueries(t *testing.T, queries []string, tables []sqlgen.Table) {
	t.Helper()
	d := newDiffer(t)
	stats := &diffStats{}
	for _, q := range queries {
		d.check(t, q, tables, q, stats)
	}
	if stats.compared != len(queries) || stats.nonEmpty != len(queries) {
		t.Errorf("%d compared, %d with rows, of %d queries", stats.compared, stats.nonEmpty, len(queries))
	}
}

// TestSQLSetOpsGeneratedAgainstDuckDB runs the seeded random cases of
// sqlgen's Options.SetOps that hold one of its constructs (FILTER,
// aggregates of DISTINCT, OFFSET, UNION [ALL], INTERSECT, EXCEPT); the
// seeds whose query holds none are TestSQLAgainstDuckDB's kinds, and
// skipped.
func TestSQLSetOpsGeneratedAgainstDuckDB(t *testing.T) {
	n, first, stats := checkGenerated(t, sqlgen.Options{SetOps: true}, "set operations", func(c sqlgen.Case) bool { return c.SetOps })
	t.Logf("%d seeds from %d: %d queries of set operations, FILTER, DISTINCT aggregates or OFFSET compared (%d returned rows), %d beyond DuckDB's DECIMAL(38)", n, first, stats.compared, stats.nonEmpty, stats.overflow)
	if stats.compared < int(n)/3 || stats.nonEmpty < stats.compared/4 {
		t.Errorf("%d compared, %d with rows, of %d seeds: too few to test them", stats.compared, stats.nonEmpty, n)
	}
}
