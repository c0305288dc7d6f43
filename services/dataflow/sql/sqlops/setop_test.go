package sqlops_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// setOpQueries are queries of the constructs brief D added (FILTER,
// aggregates of DISTINCT, OFFSET, set operations), over the random
// tables t(k, n, b, s) and u(k, m, c) of this package's generator.
var setOpQueries = []string{
	"SELECT t.k, COUNT(*) FILTER (WHERE t.b), SUM(t.n) FILTER (WHERE t.n > 1), MAX(t.s) FILTER (WHERE NOT t.b) FROM t GROUP BY t.k",
	"SELECT COUNT(*) FILTER (WHERE t.b), MIN(t.n) FILTER (WHERE t.b) FROM t",
	"SELECT t.k, COUNT(DISTINCT t.n), SUM(DISTINCT t.n), AVG(DISTINCT t.n) FROM t GROUP BY t.k",
	"SELECT t.s, COUNT(DISTINCT t.k), COUNT(*), COUNT(t.n), SUM(t.n), MIN(t.n), MAX(t.k) FROM t GROUP BY t.s",
	"SELECT COUNT(DISTINCT t.k), SUM(t.n), COUNT(*) FROM t",
	"SELECT COUNT(DISTINCT t.k), SUM(t.n), COUNT(*) FROM t WHERE t.n > 1000",
	"SELECT u.c, COUNT(DISTINCT t.n) FROM t JOIN u ON t.k = u.k GROUP BY u.c HAVING COUNT(DISTINCT t.n) > 1",
	"SELECT t.k, t.n FROM t ORDER BY t.n DESC, t.k LIMIT 3 OFFSET 2",
	"SELECT t.k, COUNT(*) FROM t GROUP BY t.k ORDER BY 2, 1 OFFSET 1",
	"SELECT ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, t.k) AS r, t.k, COUNT(*) AS c FROM t GROUP BY t.k ORDER BY c DESC, t.k LIMIT 2 OFFSET 2",
	"SELECT u.c FROM u WHERE u.k IN (SELECT t.k FROM t ORDER BY t.k LIMIT 2 OFFSET 1)",
	"SELECT t.k, t.n FROM t UNION ALL SELECT u.k, u.m FROM u",
	"SELECT t.k, t.n FROM t UNION SELECT u.k, u.m FROM u",
	"SELECT t.k FROM t UNION SELECT t.s FROM t WHERE t.b",
	"SELECT t.n FROM t INTERSECT SELECT u.m FROM u",
	"SELECT t.k, t.s FROM t EXCEPT SELECT u.k, u.c FROM u",
	"SELECT x.k, COUNT(*), SUM(x.n) FROM (SELECT t.k, t.n FROM t UNION ALL SELECT u.k, u.m FROM u) x GROUP BY x.k",
	"SELECT COUNT(*) FROM (SELECT t.k FROM t UNION ALL SELECT u.k FROM u) x",
	"SELECT t.k, COUNT(*) FROM t GROUP BY t.k UNION ALL SELECT u.k, COUNT(*) FROM u GROUP BY u.k",
	"SELECT t.k, COUNT(*) FROM t GROUP BY t.k UNION SELECT u.c, COUNT(*) FROM u GROUP BY u.c",
	"SELECT t.k FROM t UNION ALL (SELECT u.k FROM u ORDER BY u.k DESC LIMIT 2) ORDER BY 1 LIMIT 5 OFFSET 1",
	"SELECT u.c FROM u WHERE u.k IN (SELECT t.k FROM t WHERE t.b INTERSECT SELECT t.k FROM t WHERE t.n > 1)",
}

// TestSetOpQueriesMatchExec runs setOpQueries through the physical plan
// on one task and on 1, 2 and 3 shards, and compares each answer with
// the oracle's (exec's operators over the logical plan).
func TestSetOpQueriesMatchExec(t *testing.T) {
	nonEmpty := 0
	for seed := range 40 {
		g := gen{rand.New(rand.NewPCG(uint64(seed), 41))}
		tables := g.tables(t)
		cat := sql.Catalog{"t": tables["t"].Columns, "u": tables["u"].Columns}
		for _, q := range setOpQueries {
			root, err := sql.Compile(q, cat)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			res, err := oracle.Execute(root, tables)
			if err != nil {
				t.Fatalf("seed %d: %s: %v", seed, q, err)
			}
			if res.Rows.N > 0 {
				nonEmpty++
			}
			want := sorted(res.CSV())
			for _, shards := range []int{0, 1, 2, 3} {
				p := planOf(t, map[string]string{"q": q}, []string{"q"}, tables, shards)
				got, err := sqlops.Run(p, tables)
				if err != nil {
					t.Fatalf("seed %d, %d shards: %s: %v", seed, shards, q, err)
				}
				if s := sorted(got.Files["q"]); s != want {
					t.Fatalf("seed %d, %d shards: %s\n got %q\nwant %q", seed, shards, q, s, want)
				}
			}
		}
	}
	if nonEmpty < 40*len(setOpQueries)/2 {
		t.Errorf("only %d answers with rows", nonEmpty)
	}
}

// placedSetOps are standing queries of the constructs brief D added,
// over sqlgen's tables t(k, n, b, s, d) and u(k, m), as placed's.
var placedSetOps = []string{
	"SELECT k, COUNT(DISTINCT n), SUM(DISTINCT n), COUNT(*), SUM(n), MIN(s) FROM t GROUP BY k",
	"SELECT COUNT(DISTINCT s), COUNT(*) FILTER (WHERE b) FROM t",
	"SELECT s, COUNT(DISTINCT k) FROM t WHERE k IN (SELECT k FROM u GROUP BY k HAVING MAX(m) < 2) GROUP BY s",
	"SELECT k, COUNT(*) FROM t GROUP BY k ORDER BY 2 DESC, 1 LIMIT 2 OFFSET 1",
	"SELECT k, n FROM t ORDER BY n, k OFFSET 3",
	"SELECT k, n FROM t UNION ALL SELECT k, m FROM u",
	"SELECT k FROM t UNION SELECT k FROM u",
	"SELECT n FROM t INTERSECT SELECT m FROM u",
	"SELECT k FROM t EXCEPT SELECT k FROM u ORDER BY 1 LIMIT 2",
	"SELECT k, COUNT(*) FROM t GROUP BY k EXCEPT SELECT k, COUNT(*) FROM u GROUP BY k",
	"SELECT k, COUNT(*) FROM (SELECT k FROM t UNION ALL SELECT k FROM u) x GROUP BY k",
}

// TestEpochsPlacedSetOps runs each of placedSetOps over 12 of sqlgen's
// datasets in random epochs on 1, 2 and 3 shards.
func TestEpochsPlacedSetOps(t *testing.T) {
	for seed := range uint64(12) {
		_, tables := sqlgenJob(t, seed)
		r := rand.New(rand.NewPCG(seed, 46))
		for i, q := range placedSetOps {
			name := fmt.Sprintf("d%d", i)
			j := newJob(t, map[string]string{name: q}, []string{name}, tables)
			checkEpochs(t, fmt.Sprintf("seed %d", seed), j, tables, splitEpochs(r, tables, 1+r.IntN(6)), 1+(int(seed)+i)%3)
		}
	}
}

// TestSumBesideDistinctPastTheBound pins docs/sql.md's rule: a plain SUM
// beside a DISTINCT aggregate is NULL where the sum of one group's rows
// of one distinct value passes 38 digits, though the whole sum (here
// 38 nines) does not; where none does, the sum is exact.
func TestSumBesideDistinctPastTheBound(t *testing.T) {
	nines := strings.Repeat("9", 38)
	for _, c := range []struct{ csv, want string }{
		{"k,n,s\na," + nines + ",x\na," + nines + ",x\na,-" + nines + ",y\n", "a,2,\n"},
		{"k,n,s\na," + nines + ",x\na,-1,x\na,-" + nines + ",y\n", "a,2,-1\n"},
	} {
		tab, err := exec.ReadCSV(strings.NewReader(c.csv), 0)
		if err != nil {
			t.Fatal(err)
		}
		tables := map[string]*exec.Table{"t": tab}
		root, err := sql.Compile("SELECT k, COUNT(DISTINCT s), SUM(n) FROM t GROUP BY k", sql.Catalog{"t": tab.Columns})
		if err != nil {
			t.Fatal(err)
		}
		res, err := oracle.Execute(root, tables)
		if err != nil {
			t.Fatal(err)
		}
		got := string(res.CSV())
		if want := "k,count(distinct s),sum(n)\n" + c.want; got != want {
			t.Errorf("%q: got %q, want %q", c.csv, got, want)
		}
	}
}

// TestLimitOffsetRestored: a LIMIT 3 OFFSET 4 fed batches of 3 rows,
// snapshotted and restored after each, passes rows 5 to 7, wherever its
// snapshot fell.
func TestLimitOffsetRestored(t *testing.T) {
	tab, err := exec.ReadCSV(strings.NewReader("k\n1\n2\n3\n4\n5\n6\n7\n8\n9\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	cols := []plan.Column{{Name: "k", Type: plan.Text}}
	o := &physical.Op{ID: 0, Kind: plan.Limit, Node: &plan.Node{Op: plan.Limit, N: 3, Offset: 4, Output: cols}}
	op, err := sqlops.New(o, [][]plan.Column{cols}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := 0; i < 9; i += 3 {
		b := exec.Concat(cols, []*exec.Batch{tab.Batches[0]})
		part := exec.Skip(int64(i), []*exec.Batch{b})
		part = exec.Limit(3, part)
		if err := op.Apply(0, part[0], func(b *exec.Batch) {
			for r := range b.N {
				got = append(got, string(b.Cols[0].Text(r)))
			}
		}); err != nil {
			t.Fatal(err)
		}
		snap, err := op.(stage.Snapshotter).AppendSnapshot(nil)
		if err != nil {
			t.Fatal(err)
		}
		if op, err = sqlops.New(o, [][]plan.Column{cols}, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := op.(stage.Snapshotter).Restore(snap); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(got, ",") != "5,6,7" {
		t.Errorf("got %q, want 5,6,7", got)
	}
}
