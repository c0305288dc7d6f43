package sqlops_test

import (
	"testing"
)

// joinQuery is a random query of the joins of docs/sql.md over t and u:
// inner, left, right and full, on one key or two, USING, three tables
// (one join by k, the next by another key: a shuffle from shard to
// shard), a self-join, an inner join's other ON condition, and WHERE
// conditions on either side of an outer join, which must stay above it.
func (g gen) joinQuery() (string, bool) {
	kind := g.pick("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT OUTER JOIN", "FULL OUTER JOIN")
	where := g.pick("", " WHERE u.m > 1", " WHERE t.n > 1", " WHERE u.c IS NULL", " WHERE t.k IS NULL", " WHERE "+g.pred())
	switch g.r.IntN(7) {
	case 0:
		return "SELECT t.k, t.n, u.k, u.m, u.c FROM t " + kind + " u ON t.k = u.k" + where, false
	case 1:
		return "SELECT t.k, t.s, u.c, u.m FROM t " + kind + " u ON t.k = u.k AND t.s = u.c" + where, false
	case 2:
		return "SELECT * FROM t " + kind + " u USING (k)" + where, false
	case 3: // three tables, the second join by another key
		return "SELECT t.k, u.c, v.k, v.m FROM t " + kind + " u ON t.k = u.k " + g.pick("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN") + " u AS v ON u.c = v.c" + where, false
	case 4: // a self-join, grouped by the NULL-padded side
		return "SELECT v.b, COUNT(*), COUNT(t.k), SUM(t.n) FROM t " + kind + " t AS v ON t.s = v.s" + " GROUP BY v.b", false
	case 5: // grouped by a side's key: the output is partitioned by it only where no NULLs pad it
		key := g.pick("k", "t.k", "u.k")
		return "SELECT " + key + ", COUNT(*), MAX(u.m) FROM t " + kind + " u USING (k) GROUP BY " + key, false
	}
	return "SELECT t.k, u.k, u.m FROM t JOIN u ON t.k = u.k AND t.n < u.m" + where, false
}

// TestJoinsMatchExec runs random joins, outer ones among them, through
// the physical plan on one task and on 1, 2 and 3 shards, and compares
// each answer with exec's (the oracle's, whose outer joins
// services/dataflow/sql/sqlgen/oracle's tests check against a naive
// evaluator and tools/duckdb's against DuckDB).
func TestJoinsMatchExec(t *testing.T) {
	runs := 200
	if testing.Short() {
		runs = 40
	}
	checkRandomQueries(t, runs, gen.joinQuery)
}
