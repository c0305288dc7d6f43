package oracle_test

import (
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// TestWindowsMatchNaive: random queries of sqlgen's Options.Windows
// (RANK, DENSE_RANK, ROW_NUMBER, COUNT, SUM, MIN, MAX OVER (...), over
// rows and over groups) give the naive evaluator's rows by Execute, as
// rewrite.Optimize rewrites them, and through the physical plan on one
// task and on 1 and 3 shards.
func TestWindowsMatchNaive(t *testing.T) {
	matchNaiveOf(t, sqlgen.Options{Windows: true}, func(c sqlgen.Case) bool { return c.Windows },
		[]string{"ROW_NUMBER", "DENSE_RANK", " RANK", "COUNT(*) OVER", "SUM(", "MIN(", "MAX(", "PARTITION BY", "ORDER BY t", "GROUP BY"})
}
