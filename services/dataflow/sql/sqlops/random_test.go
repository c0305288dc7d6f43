package sqlops_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// A small generator of random queries over two small random tables, t
// (k, n, b, s) and u (k, m, c), written for this test: it needs queries
// that reach every operator of the physical plan (filters, projections,
// joins, IN subqueries, complete, partial and global aggregates, DISTINCT,
// ORDER BY, LIMIT), not their meaning, which the oracle's property test
// (services/dataflow/sql/sqlgen/oracle) checks against a naive evaluator;
// here the physical plan's answer is compared with the oracle's. Values include NULLs, invalid values, numbers
// wider than a double and as wide as a number may be, equal numbers of different scales (one group
// whichever shard sees them) and bytes that are not UTF-8.
type gen struct{ r *rand.Rand }

func (g gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g gen) table(header string, cols ...[]string) []byte {
	var b bytes.Buffer
	b.WriteString(header + "\n")
	for range g.r.IntN(40) {
		for i, vs := range cols {
			if i > 0 {
				b.WriteByte(',')
			}
			v := vs[g.r.IntN(len(vs))]
			if strings.ContainsAny(v, ",\"") {
				v = `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
			}
			b.WriteString(v)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

var (
	keys = []string{"a", "b", "c", "d", "\xff", ""}
	// 38 nines: value.MaxDigits, which sums of two pass (a partial sum
	// keeps them, the final sum is NULL only when the total is past).
	numbers = []string{"1", "2.5", "2.50", "-3", "", "x", "100000000000000000000000.5", "0", "7", "99999999999999999999999999999999999999"}
	bools   = []string{"true", "FALSE", "1", "0", "", "maybe"}
	texts   = []string{"x", "y,z", "", "\xfe", "w"}
)

func (g gen) pred() string {
	p := g.pick("t.n > 1", "t.b", "NOT t.b", "t.s <> 'x'", "t.n IS NULL", "(t.n > 0 OR t.b)", "t.k IN ('a', 'c')", "t.n * 2 >= 5")
	if g.r.IntN(3) == 0 {
		p += " AND " + g.pick("t.s IS NOT NULL", "t.n <= 7", "t.b IS NOT NULL")
	}
	return p
}

func (g gen) where() string {
	if g.r.IntN(2) == 0 {
		return ""
	}
	return " WHERE " + g.pred()
}

// query returns a query and whether its rows' order is its own (ORDER BY).
func (g gen) query() (string, bool) {
	switch g.r.IntN(11) {
	case 10: // two semi-joins on different keys: a shuffle from shard to shard
		return "SELECT t.s, COUNT(*) FROM t WHERE t.k IN (SELECT k FROM u) AND t.s IN (SELECT c FROM u WHERE m > 1) GROUP BY t.s", false
	case 0:
		return "SELECT " + g.pick("", "DISTINCT ") + "t.k, t.n FROM t" + g.where(), false
	case 1:
		having := g.pick("", " HAVING COUNT(*) > 1", " HAVING SUM(t.n) > 2")
		return "SELECT t.k, COUNT(*), SUM(t.n), MIN(t.n), MAX(t.s), AVG(t.n), COUNT(t.b), STDDEV_SAMP(t.n) FROM t" + g.where() + " GROUP BY t.k" + having, false
	case 2:
		return "SELECT u.c, COUNT(*), SUM(t.n), MAX(u.m), AVG(t.n), MIN(t.s), COUNT(u.m), STDDEV_SAMP(u.m) FROM t JOIN u ON t.k = u.k" + g.where() + " GROUP BY u.c" + g.pick("", " HAVING AVG(t.n) > 1"), false
	case 3:
		if g.r.IntN(2) == 0 {
			return "SELECT t.s, AVG(t.n), SUM(CASE WHEN t.b THEN 1 ELSE 0 END) FROM t WHERE t.k IN (SELECT k FROM u WHERE m > 0) GROUP BY t.s", false
		}
		return "SELECT t.s, t.n FROM t WHERE t.k IN (SELECT k FROM u WHERE m > 0)" + g.pick("", " AND "+g.pred()), false
	case 4:
		return "SELECT t.b, COUNT(*) AS c FROM t GROUP BY t.b ORDER BY c DESC, t.b LIMIT " + fmt.Sprint(1+g.r.IntN(3)), true
	case 5:
		return "SELECT COUNT(*), SUM(t.n), AVG(t.n), MIN(t.b), STDDEV_SAMP(CASE WHEN t.b THEN t.n END) FROM t" + g.where(), false
	case 6:
		return "SELECT DISTINCT u.c FROM t JOIN u ON t.k = u.k" + g.where(), false
	case 7:
		return "SELECT t.n, COUNT(*), AVG(t.n) FROM t" + g.where() + " GROUP BY t.n", false
	case 8:
		return "SELECT t.k, SUM(t.n) AS x FROM t WHERE t.k IN (SELECT k FROM u GROUP BY k HAVING COUNT(*) > 1) GROUP BY t.k ORDER BY x DESC LIMIT 3", true
	}
	return "SELECT t.k, u.c, t.n + u.m AS v FROM t JOIN u ON t.k = u.k" + g.where() + " ORDER BY v, t.k", true
}

// sorted is the file with its rows (not its header) sorted, for queries
// whose order is not theirs.
func sorted(csv []byte) string {
	lines := strings.SplitAfter(string(csv), "\n")
	slices.Sort(lines[1:])
	return strings.Join(lines, "")
}

// TestRandomQueriesMatchExec runs random queries, each alone and all of
// one seed together (sharing scans and shuffles), through the physical
// plan on one task and on 1, 2 and 3 shards, and compares each answer
// with exec's.
func TestRandomQueriesMatchExec(t *testing.T) {
	runs := 300
	if testing.Short() {
		runs = 60
	}
	checkRandomQueries(t, runs, gen.query)
}

// checkRandomQueries is TestRandomQueriesMatchExec's check over runs
// seeds, of the queries query makes.
func checkRandomQueries(t *testing.T, runs int, query func(gen) (string, bool)) {
	t.Helper()
	nonEmpty, queries, shardToShard := 0, 0, 0
	for seed := range runs {
		g := gen{rand.New(rand.NewPCG(uint64(seed), 25))}
		tables := g.tables(t)
		cat := sql.Catalog{"t": tables["t"].Columns, "u": tables["u"].Columns}
		texts := map[string]string{}
		var names []string
		want := map[string]string{}
		ordered := map[string]bool{}
		for i := range 1 + g.r.IntN(4) {
			q, inOrder := query(g)
			name := fmt.Sprintf("r%d", i)
			root, err := sql.Compile(q, cat)
			if err != nil {
				t.Fatalf("seed %d: %s: %v", seed, q, err)
			}
			res, err := oracle.Execute(root, tables)
			if err != nil {
				t.Fatalf("seed %d: %s: %v", seed, q, err)
			}
			texts[name], names = q, append(names, name)
			queries++
			want[name], ordered[name] = string(res.CSV()), inOrder
			if !inOrder {
				want[name] = sorted(res.CSV())
			}
			if res.Rows.N > 0 {
				nonEmpty++
			}
		}
		for _, shards := range []int{0, 1, 2, 3} {
			p := planOf(t, texts, names, tables, shards)
			for _, ch := range p.Channels {
				if ch.From == "shard" && ch.To == "shard" {
					shardToShard++
				}
			}
			res, err := sqlops.Run(p, tables)
			if err != nil {
				t.Fatalf("seed %d, %d shards: %v", seed, shards, err)
			}
			for _, name := range names {
				got := string(res.Files[name])
				if !ordered[name] {
					got = sorted(res.Files[name])
				}
				if got != want[name] {
					t.Fatalf("seed %d, %d shards: %s\n got %q\nwant %q", seed, shards, texts[name], got, want[name])
				}
			}
		}
	}
	if shardToShard == 0 {
		t.Error("no plan had a channel from shard to shard")
	}
	if nonEmpty < queries/2 {
		t.Errorf("only %d of %d queries have rows: the test checks little", nonEmpty, queries)
	}
}

// tables makes the random tables t(k, n, b, s) and u(k, m, c) the random
// queries run over.
func (g gen) tables(t *testing.T) map[string]*exec.Table {
	t.Helper()
	tables := map[string]*exec.Table{}
	for name, text := range map[string][]byte{
		"t": g.table("k,n,b,s", keys, numbers, bools, texts),
		"u": g.table("k,m,c", keys, numbers, texts),
	} {
		tab, err := exec.ReadCSV(bytes.NewReader(text), 0)
		if err != nil {
			t.Fatal(err)
		}
		tables[name] = tab
	}
	return tables
}
