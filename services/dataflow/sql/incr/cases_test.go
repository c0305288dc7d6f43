package incr_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// constructs are queries of each construct whose answer's rows leave it
// as rows are appended, over sqlgen's tables t(k, n, b, s, d) and u(k,
// m): each runs the operator logic that retracts rows.
var constructs = []string{
	// DISTINCT over an aggregate's rows: a distinct row counted.
	"SELECT DISTINCT COUNT(*) FROM t GROUP BY k",
	"SELECT DISTINCT MAX(s), b FROM t GROUP BY b, k",
	"SELECT DISTINCT SUM(n) FROM t GROUP BY k",
	"SELECT DISTINCT MIN(n), b FROM t GROUP BY k, b ORDER BY 1 DESC LIMIT 3",
	// ORDER BY an aggregate, LIMIT: a row leaves the first N.
	"SELECT k, COUNT(*) FROM t GROUP BY k ORDER BY 2 DESC, 1 LIMIT 2",
	"SELECT k, SUM(n) FROM t GROUP BY k ORDER BY 2 LIMIT 1",
	// ROW_NUMBER, with and without LIMIT: rows renumbered.
	"SELECT ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, k) AS r, k, COUNT(*) AS c FROM t GROUP BY k ORDER BY c DESC, k",
	"SELECT ROW_NUMBER() OVER (ORDER BY k) AS r, k FROM t WHERE n > 0 ORDER BY k LIMIT 3",
	// Without GROUP BY: one row, over no rows too.
	"SELECT COUNT(*), SUM(n), MIN(s), MAX(s), AVG(n), STDDEV_SAMP(n), COUNT(d) FROM t",
	"SELECT COUNT(*) FROM t WHERE k IN (SELECT k FROM u)",
	"SELECT COUNT(*), MAX(n) FROM t HAVING COUNT(*) > 3",
	// HAVING: a group leaves it, and comes back.
	"SELECT k FROM t GROUP BY k HAVING COUNT(*) = 2",
	"SELECT k, MIN(n) FROM t GROUP BY k HAVING COUNT(*) < 3 AND MIN(n) IS NOT NULL ORDER BY 2 DESC",
	// LIMIT over rows that only grow: the first N kept alone.
	"SELECT k, n FROM t ORDER BY n LIMIT 3",
	"SELECT DISTINCT k FROM t ORDER BY k DESC LIMIT 2",
	"SELECT ROW_NUMBER() OVER (ORDER BY n DESC) AS r, n FROM t WHERE n IS NOT NULL ORDER BY n DESC",
	"SELECT DISTINCT t.k FROM t JOIN u ON t.k = u.k WHERE u.m > 0 ORDER BY 1 LIMIT 1",
	"SELECT t.k, u.m FROM t JOIN u ON t.k = u.k ORDER BY 2 DESC LIMIT 4",
	"SELECT k FROM t WHERE k IN (SELECT k FROM u WHERE m > 0) ORDER BY k LIMIT 2",
	// A join's groups.
	"SELECT u.k, COUNT(*), MAX(t.n) FROM t JOIN u ON t.k = u.k GROUP BY u.k HAVING MAX(t.n) > 1",
	"SELECT t.k, COUNT(*) FROM t JOIN t AS x ON t.k = x.s GROUP BY t.k",
	// A semi-join's rows whose key comes later, duplicated in u.
	"SELECT k, COUNT(*) FROM u WHERE k IN (SELECT k FROM t WHERE b) GROUP BY k",
	// A semi-join's rows whose key leaves the subquery (its HAVING).
	"SELECT k, n FROM t WHERE k IN (SELECT k FROM u GROUP BY k HAVING COUNT(*) = 1)",
	"SELECT k FROM t WHERE k IN (SELECT MAX(k) FROM u) ORDER BY k LIMIT 2",
	"SELECT DISTINCT u.k FROM u WHERE u.k IN (SELECT k FROM t GROUP BY k HAVING MIN(n) > 0)",
	// A subquery's ORDER BY ... LIMIT: a key leaves its first rows.
	"SELECT k, n FROM t WHERE k IN (SELECT k FROM u ORDER BY m DESC, k LIMIT 2)",
	"SELECT COUNT(*) FROM t WHERE k IN (SELECT k FROM u GROUP BY k ORDER BY COUNT(*) DESC, k LIMIT 1)",
	// GROUP BY over such rows: each touched group computed again.
	"SELECT COUNT(*), MIN(n), MAX(s) FROM t WHERE k IN (SELECT k FROM u GROUP BY k HAVING COUNT(*) = 1)",
	"SELECT s, COUNT(*), MIN(n), SUM(n) FROM t WHERE k IN (SELECT MAX(k) FROM u) GROUP BY s HAVING COUNT(*) > 1",
	// The inner joins of issue 41 (an outer join is refused: join.go):
	// on two keys (one KEY(...) of each side, a number equal by value),
	// USING, of three tables on different keys, a self-join with a
	// condition in ON.
	"SELECT t.k, t.n, u.m FROM t JOIN u ON t.k = u.k AND t.n = u.m",
	"SELECT k, COUNT(*), SUM(u.m) FROM t JOIN u USING (k) GROUP BY k",
	"SELECT t.k, u.m, v.k FROM t JOIN u ON t.k = u.k JOIN u AS v ON v.m = u.m WHERE v.k <> t.k",
	"SELECT a.k, a.n, b.n FROM t AS a JOIN t AS b ON a.k = b.k AND a.n < b.n ORDER BY 1, 2, 3 LIMIT 3",
	"SELECT b, MAX(d) FROM t WHERE k IN (SELECT k FROM u GROUP BY k HAVING MAX(m) < 2) GROUP BY b ORDER BY 2 DESC LIMIT 1",
	// FILTER, and aggregates of DISTINCT: a value counted once per group
	// whatever its rows, beside plain aggregates.
	"SELECT k, COUNT(*) FILTER (WHERE b), SUM(n) FILTER (WHERE n > 1), MAX(s) FILTER (WHERE NOT b) FROM t GROUP BY k",
	"SELECT k, COUNT(DISTINCT n), SUM(DISTINCT n), COUNT(*), SUM(n), MIN(s) FROM t GROUP BY k HAVING COUNT(DISTINCT n) > 1",
	"SELECT COUNT(DISTINCT s), COUNT(n) FROM t",
	// OFFSET: a row moves in and out of the rows after the first M.
	"SELECT k, n FROM t ORDER BY n, k LIMIT 3 OFFSET 2",
	"SELECT k, COUNT(*) FROM t GROUP BY k ORDER BY 2 DESC, 1 OFFSET 1",
	"SELECT ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, k) AS r, k, COUNT(*) AS c FROM t GROUP BY k ORDER BY c DESC, k LIMIT 2 OFFSET 1",
	"SELECT k FROM t WHERE k IN (SELECT k FROM u ORDER BY m DESC, k LIMIT 2 OFFSET 1) ORDER BY k",
	// Set operations: UNION ALL's weights added, UNION, INTERSECT and
	// EXCEPT counted per row (a row leaves EXCEPT when it arrives in u).
	"SELECT k, n FROM t UNION ALL SELECT k, m FROM u",
	"SELECT k FROM t UNION SELECT k FROM u ORDER BY 1 LIMIT 3",
	"SELECT n FROM t INTERSECT SELECT m FROM u",
	"SELECT k FROM t EXCEPT SELECT k FROM u",
	"SELECT k, COUNT(*) FROM (SELECT k FROM t UNION ALL SELECT k FROM u) x GROUP BY k",
	"SELECT k, COUNT(*) FROM t GROUP BY k EXCEPT SELECT k, COUNT(*) FROM u GROUP BY k",
	// The constructs an analyst meets next (issue 41): a CROSS JOIN and
	// a comma join (every pair, the new row of either side paired with
	// all the other's), %, casts, the functions, NULLS FIRST and FETCH
	// FIRST (a NULL entering the first rows).
	"SELECT t.k, u.k, u.m FROM t CROSS JOIN u WHERE t.n > 0",
	"SELECT u.k, COUNT(*), SUM(t.n % 2) FROM t, u GROUP BY u.k",
	"SELECT k, n::int, CAST(n AS numeric(10, 1)), n % 3 FROM t ORDER BY 2 LIMIT 3",
	"SELECT k, BOOL_AND(b), BOOL_OR(n > 1) FROM t GROUP BY k",
	"SELECT s, BOOL_AND(b), BOOL_OR(n > 1) FROM t WHERE k IN (SELECT k FROM u GROUP BY k HAVING COUNT(*) = 1) GROUP BY s",
	"SELECT k, n, LAG(n) OVER (PARTITION BY k ORDER BY n, s, b, d), LEAD(s, 1, 'z') OVER (ORDER BY k, n DESC NULLS FIRST, s, b, d) FROM t",
	"SELECT k, GREATEST(n, 0), CONCAT(k, s), SPLIT_PART(s, ',', -1) FROM t ORDER BY 2 DESC NULLS FIRST, 1 NULLS FIRST FETCH FIRST 3 ROWS ONLY",
}

// TestConstructsEveryEpoch runs each construct over many of sqlgen's
// tables, split into random epochs, checking every version; the plan as
// Compile makes it and as rewrite.Optimize rewrites it.
func TestConstructsEveryEpoch(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 40
	}
	for _, q := range constructs {
		for seed := range uint64(seeds) {
			root, tables, _ := seedPlan(t, seed, q)
			r := rand.New(rand.NewPCG(seed, 41))
			runEpochs(t, fmt.Sprintf("seed %d: %s", seed, q), root, epochs(r, tables, 1+r.IntN(8)))
		}
	}
}

// TestCheckRefuses: a plan the engine does not maintain (none that
// Compile makes, today) is refused, by Check and New, with an error
// naming what it does not maintain.
func TestCheckRefuses(t *testing.T) {
	scan := &plan.Node{Op: plan.Scan, Table: "t", Output: []plan.Column{{Name: "k", Type: plan.Text}}}
	for _, c := range []struct {
		root *plan.Node
		want string
	}{
		{scan, "no ORDER of its answer above its scan"},
		{&plan.Node{Op: plan.Sort, Input: []*plan.Node{{Op: "windowing", Input: []*plan.Node{scan}}}}, `the plan operator "windowing"`},
		{&plan.Node{Op: plan.Sort, Input: []*plan.Node{{Op: plan.Limit, N: 1, Input: []*plan.Node{scan}}}}, "no ORDER of its answer above its scan"},
		{&plan.Node{Op: plan.Sort, Input: []*plan.Node{{Op: plan.Join, JoinType: plan.JoinLeft, Input: []*plan.Node{scan, scan}}}}, "LEFT JOIN"},
		{&plan.Node{Op: plan.Sort, Input: []*plan.Node{{Op: plan.Join, JoinType: plan.JoinFull, Input: []*plan.Node{scan, scan}}}}, "FULL JOIN"},
	} {
		err := incr.Check(c.root)
		if !errors.Is(err, incr.ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Check: %v, want %q", c.root, err, c.want)
		}
		if _, err := incr.New(c.root); !errors.Is(err, incr.ErrUnsupported) {
			t.Errorf("%s: New: %v", c.root, err)
		}
	}
}

// TestVersionsOfQ2AndQ3 shows the changes a user sees, epoch by epoch:
// q2's match leaves its HAVING when a third player row arrives, and q3
// counts a player row from the epoch its match arrives in.
func TestVersionsOfQ2AndQ3(t *testing.T) {
	qs := defaultQueries(t)
	matches := "token,ladder,mirror,average_rating,map,server,duration\n"
	players := "match,rating,civ,winner\n"
	cat := sql.Catalog{"matches": strings.Split(strings.TrimSpace(matches), ","), "match_players": strings.Split(strings.TrimSpace(players), ",")}
	appends := []map[string]string{
		{"match_players": "m1,1600,Huns,false\nm1,1100,Goths,true\n"},
		{"match_players": "m1,1000,Celts,false\n", "matches": "m1,RM_1v1,false,1000,arena,eastus,0:30:00\n"},
		{"matches": "m1,RM_1v1,false,1000,arena,eastus,0:30:00\n"},
	}
	want := map[string][]string{
		"q2": {"token,diff\nm1,1\n", "token,diff\nm1,-1\n", "token,diff\n"},
		"q3": {
			"civ,wins,played,win_pct,diff\n",
			"civ,wins,played,win_pct,diff\nCelts,0,1,0.0000,1\nGoths,1,1,100.0000,1\nHuns,0,1,0.0000,1\n",
			"civ,wins,played,win_pct,diff\n",
		},
	}
	for _, name := range []string{"q2", "q3"} {
		e := engineOf(t, qs[name], cat)
		for k, a := range appends {
			for table, rows := range a {
				header := map[string]string{"matches": matches, "match_players": players}[table]
				tt, err := exec.ReadCSV(strings.NewReader(header+rows), 0)
				if err != nil {
					t.Fatal(err)
				}
				if err := e.Append(table, tt); err != nil {
					t.Fatal(err)
				}
			}
			d, err := e.Commit()
			if err != nil {
				t.Fatal(err)
			}
			if got := string(d.Result().CSV()); got != want[name][k] {
				t.Errorf("%s, epoch %d: change %q, want %q", name, k+1, got, want[name][k])
			}
		}
	}
}
