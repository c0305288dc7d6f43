package incr_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// constructs are queries of each construct whose answer's rows leave it
// as rows are appended, over sqlgen's tables t(k, n, b, s, d) and u(k,
// m): each runs the operator logic that retracts rows.
var constructs = []string{
	// DISTINCT over an aggregate's rows: a distinct row counted.
	"SELECT DISTINCT COUNT(*) FROM t GROUP BY k",
	"SELECT DISTINCT MAX(s), b FROM t GROUP BY b, k",
	// ORDER BY an aggregate, LIMIT: a row leaves the first N.
	"SELECT k, COUNT(*) FROM t GROUP BY k ORDER BY 2 DESC, 1 LIMIT 2",
	"SELECT k, SUM(n) FROM t GROUP BY k ORDER BY 2 LIMIT 1",
	// ROW_NUMBER, with and without LIMIT: rows renumbered.
	"SELECT ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, k) AS r, k, COUNT(*) AS c FROM t GROUP BY k ORDER BY c DESC, k",
	"SELECT ROW_NUMBER() OVER (ORDER BY k) AS r, k FROM t WHERE n > 0 ORDER BY k LIMIT 3",
	// Without GROUP BY: one row, over no rows too.
	"SELECT COUNT(*), SUM(n), MIN(s), MAX(s), AVG(n), STDDEV_SAMP(n), COUNT(d) FROM t",
	"SELECT COUNT(*) FROM t WHERE k IN (SELECT k FROM u)",
	// HAVING: a group leaves it, and comes back.
	"SELECT k FROM t GROUP BY k HAVING COUNT(*) = 2",
	"SELECT k, MIN(n) FROM t GROUP BY k HAVING COUNT(*) < 3 AND MIN(n) IS NOT NULL ORDER BY 2 DESC",
	// LIMIT over rows that only grow: the first N kept alone.
	"SELECT k, n FROM t ORDER BY n LIMIT 3",
	"SELECT DISTINCT k FROM t ORDER BY k DESC LIMIT 2",
	"SELECT t.k, u.m FROM t JOIN u ON t.k = u.k ORDER BY 2 DESC LIMIT 4",
	"SELECT k FROM t WHERE k IN (SELECT k FROM u WHERE m > 0) ORDER BY k LIMIT 2",
	// A join's groups.
	"SELECT u.k, COUNT(*), MAX(t.n) FROM t JOIN u ON t.k = u.k GROUP BY u.k HAVING MAX(t.n) > 1",
	"SELECT t.k, COUNT(*) FROM t JOIN t AS x ON t.k = x.s GROUP BY t.k",
	// A semi-join's rows whose key comes later, duplicated in u.
	"SELECT k, COUNT(*) FROM u WHERE k IN (SELECT k FROM t WHERE b) GROUP BY k",
}

// TestConstructsEveryEpoch runs each construct over many of sqlgen's
// tables, split into random epochs, checking every version.
func TestConstructsEveryEpoch(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 40
	}
	for _, q := range constructs {
		for seed := range uint64(seeds) {
			tables, cat := sqlgenTables(t, sqlgen.Generate(seed))
			root, err := sql.Compile(q, cat)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			r := rand.New(rand.NewPCG(seed, 41))
			runEpochs(t, fmt.Sprintf("seed %d: %s", seed, q), root, epochs(r, tables, 1+r.IntN(8)), nil)
		}
	}
}

// TestCheckRefuses: the constructs the engine does not maintain are
// refused, by Check and New, with an error naming them.
func TestCheckRefuses(t *testing.T) {
	cat := sql.Catalog{"t": {"k", "n", "b", "s", "d"}, "u": {"k", "m"}}
	for q, want := range map[string]string{
		"SELECT k FROM t WHERE k IN (SELECT k FROM u GROUP BY k HAVING COUNT(*) > 1)": "IN (SELECT ...) over a subquery whose rows can leave it",
		"SELECT k FROM t WHERE k IN (SELECT MAX(k) FROM u)":                           "IN (SELECT ...) over a subquery whose rows can leave it",
	} {
		root, err := sql.Compile(q, cat)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		err = incr.Check(root)
		if !errors.Is(err, incr.ErrUnsupported) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Check: %v, want %q", q, err, want)
		}
		if _, err := incr.New(root); !errors.Is(err, incr.ErrUnsupported) {
			t.Errorf("%s: New: %v", q, err)
		}
	}
}
