package oracle_test

import (
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// TestFunctionsMatchNaive: random queries of sqlgen's Options.Functions
// (%, casts to INTEGER, BIGINT and NUMERIC(p, s), CROSS JOIN and comma
// joins) give the naive evaluator's rows by Execute, as rewrite.Optimize
// rewrites them, and through the physical plan on one task and on 1 and
// 3 shards.
func TestFunctionsMatchNaive(t *testing.T) {
	matchNaiveOf(t, sqlgen.Options{Functions: true}, func(c sqlgen.Case) bool { return c.Functions },
		[]string{" % ", "AS NUMERIC(", "::", "CROSS JOIN", "FROM t, u", "GREATEST(", "LEAST(", "CONCAT(", "LEFT(", "RIGHT(", "SPLIT_PART(", "NULLS FIRST", "NULLS LAST", "FETCH FIRST", "BOOL_AND(", "BOOL_OR("})
}
