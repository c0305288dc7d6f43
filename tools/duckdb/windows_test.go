package main

import (
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// The window functions of issue 41's item 2 (brief F): ROW_NUMBER,
// RANK, DENSE_RANK, COUNT, SUM, AVG, MIN and MAX OVER ([PARTITION BY
// ...] [ORDER BY ...]), compared with DuckDB on the same text, over a
// table of ties (equal numbers of different scales, NULLs, repeated
// rows). DuckDB numbers peers in an order SQL leaves to the engine, so
// a ROW_NUMBER's ORDER BY here makes the order total over the columns
// the query selects (rows it cannot tell apart are the same bytes);
// Wololo's own order of peers is pinned by services/dataflow/sql/exec's
// TestWindowFunctions. sqlgen's GenerateWith(Options{Windows: true})
// generates them at random too (TestSQLWindowsGeneratedAgainstDuckDB).
var windowQueries = []string{
	"SELECT t.k, t.n, RANK() OVER (PARTITION BY t.k ORDER BY t.n), DENSE_RANK() OVER (PARTITION BY t.k ORDER BY t.n DESC), COUNT(*) OVER (PARTITION BY t.k ORDER BY t.n) FROM t ORDER BY 1, 2, 3, 4, 5",
	"SELECT t.k, t.s, ROW_NUMBER() OVER (PARTITION BY t.k ORDER BY t.s, t.n) AS rn, t.n FROM t ORDER BY 1, 3",
	"SELECT t.k, t.n, SUM(t.n) OVER (PARTITION BY t.k ORDER BY t.n), MIN(t.s) OVER (PARTITION BY t.k ORDER BY t.n DESC), MAX(t.n) OVER (PARTITION BY t.k), COUNT(t.n) OVER () FROM t ORDER BY 1, 2, 3, 4, 5, 6",
	"SELECT t.k, COUNT(*) AS c, RANK() OVER (ORDER BY COUNT(*) DESC) AS r, SUM(COUNT(*)) OVER () AS total, MAX(SUM(t.n)) OVER (ORDER BY t.k) FROM t GROUP BY t.k ORDER BY 1",
	"SELECT t.b, t.n, 100 * t.n - SUM(t.n) OVER (PARTITION BY t.b ORDER BY t.n) AS d FROM t WHERE t.n IS NOT NULL ORDER BY 1, 2, 3",
	"SELECT k, n, r FROM (SELECT t.k, t.n, DENSE_RANK() OVER (PARTITION BY t.k ORDER BY t.n DESC) AS r FROM t) x WHERE r <= 2 ORDER BY 1, 2, 3",
	"SELECT t.k, t.n, AVG(t.n) OVER (PARTITION BY t.k) FROM t WHERE t.k IN ('a', 'd') ORDER BY 1, 2, 3",
	"SELECT t.s, t.k, MIN(t.n) OVER (PARTITION BY t.s, t.b ORDER BY t.k DESC) FROM t ORDER BY 1, 2, 3",
}

// TestSQLWindowsAgainstDuckDB runs windowQueries on both engines, over
// set operations' table of ties.
func TestSQLWindowsAgainstDuckDB(t *testing.T) { checkQueries(t, windowQueries, setOpsTables) }

// TestSQLWindowsGeneratedAgainstDuckDB runs the seeded random cases of
// sqlgen's Options.Windows that hold window functions; the other seeds'
// queries are TestSQLAgainstDuckDB's kinds, and skipped.
func TestSQLWindowsGeneratedAgainstDuckDB(t *testing.T) {
	checkConstructs(t, sqlgen.Options{Windows: true}, "window functions", func(c sqlgen.Case) bool { return c.Windows }, 2)
}
