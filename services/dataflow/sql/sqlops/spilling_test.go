package sqlops_test

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// spillQueries are joins whose state is many times a small budget: an
// inner self-join on two keys (issue 42's teammate_civs), and the outer
// joins of two filtered copies of the players on their match, each with
// rows of both sides that match nothing.
var spillQueries = map[string]string{
	"inner":     "SELECT p.civ, q.civ AS teammate, COUNT(*) AS together FROM match_players AS p JOIN match_players AS q ON q.match = p.match AND q.team = p.team WHERE p.civ < q.civ GROUP BY 1, 2 ORDER BY together DESC, 1, 2",
	"rows":      "SELECT p.color, q.color AS other, COUNT(*) AS n, MIN(p.token) AS a, MAX(q.token) AS b FROM match_players AS p JOIN match_players AS q ON q.match = p.match GROUP BY 1, 2 ORDER BY 1, 2",
	"left":      outer("LEFT"),
	"right":     outer("RIGHT"),
	"full":      outer("FULL"),
	"unordered": "SELECT a.color, b.map, COUNT(*) AS n FROM match_players a FULL JOIN matches b ON a.match = b.token GROUP BY 1, 2",
}

// outer is an outer join of kind of two filtered copies of the players
// on their match: rows of both sides match nothing.
func outer(kind string) string {
	return "SELECT a.color, b.color AS other, COUNT(*) AS n, COUNT(a.token) AS l, COUNT(b.token) AS r, MIN(a.token) AS x, MAX(b.token) AS y " +
		"FROM (SELECT token, match, color FROM match_players WHERE rating > 1500) a " + kind +
		" JOIN (SELECT token, match, color FROM match_players WHERE rating < 1400) b ON a.match = b.match GROUP BY 1, 2 ORDER BY 1, 2"
}

// TestJoinSpillsPastItsBudget: a job whose joins hold many times its
// state budget spills them (Budget.SpillDir) and gives the answers it
// gives within the default budget, byte for byte (an unordered query's
// rows the same), outer joins' unmatched rows included; it says so once
// per join (Spilled), leaves no file behind, and, with its operators
// restarted from their snapshots as it goes, the same again (a join
// with spilled rows declines to snapshot). Without a SpillDir it fails
// past the budget, as before; past the spill files' own bound too.
func TestJoinSpillsPastItsBudget(t *testing.T) {
	j := newSpillJob(t, spillQueries, 600, 5)
	const state = 100_000
	j.spills(t, state, "join of")
	t.Run("no spill directory", func(t *testing.T) {
		_, err := sqlops.RunBudget(j.p, j.tables, sqlops.Budget{StateBytes: state})
		var over *sqlops.OverBudget
		if !errors.As(err, &over) || over.Flag != "--job-max-state-bytes" {
			t.Fatalf("%v: want the job over its state budget", err)
		}
	})
	t.Run("past the spill bound", func(t *testing.T) {
		dir := t.TempDir()
		_, err := sqlops.RunBudget(j.p, j.tables, sqlops.Budget{StateBytes: state, SpillDir: dir, SpillBytes: 50_000})
		var over *sqlops.OverBudget
		if !errors.As(err, &over) || over.Flag != "--job-max-spill-bytes" || !errors.Is(err, stage.ErrFailsJob) {
			t.Fatalf("%v: want the job over its spill budget", err)
		}
		t.Log(err)
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Fatalf("left behind in the spill directory: %v", left)
		}
	})
}

// spillJob is a job of queries over generated tables, and its answers
// within the default budget.
type spillJob struct {
	p      *physical.Plan
	tables map[string]*exec.Table
	names  []string
	want   *sqlops.Result
}

func newSpillJob(t *testing.T, queries map[string]string, matches, seed int64) *spillJob {
	t.Helper()
	_, _, tables := generated(t, matches, seed)
	names := make([]string, 0, len(queries))
	for name := range queries {
		names = append(names, name)
	}
	slices.Sort(names)
	p := planOf(t, queries, names, tables, 2)
	want, err := sqlops.RunBudget(p, tables, sqlops.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	return &spillJob{p: p, tables: tables, names: names, want: want}
}

// spills runs the job past a budget of state bytes, spilling, and again
// with its operators restarted from their snapshots as it goes (a
// budget half as much again: restored operators' key tables hold a
// little more): its answers are the job's within the default budget
// (the query "unordered"'s rows the same), operators of kind (Spilled's
// "join of", "aggregate of") spilled, and no file is left behind.
func (j *spillJob) spills(t *testing.T, state int64, kind string) {
	run := func(t *testing.T, b sqlops.Budget, restart func(op, instance int) bool) {
		t.Helper()
		var mu sync.Mutex
		var spilled []string
		b.SpillDir = t.TempDir()
		b.Spilled = func(where string, _ int64) {
			mu.Lock()
			defer mu.Unlock()
			spilled = append(spilled, where)
		}
		res, err := sqlops.RunSpilling(j.p, j.tables, b, restart)
		if err != nil {
			t.Fatal(err)
		}
		j.same(t, res)
		if !slices.ContainsFunc(spilled, func(s string) bool { return strings.Contains(s, kind) }) {
			t.Fatalf("no %s spilled: %q", kind, spilled)
		}
		t.Logf("spilled: %q", spilled)
		if left, _ := os.ReadDir(b.SpillDir); len(left) != 0 {
			t.Fatalf("left behind in the spill directory: %v", left)
		}
	}
	t.Run("spilled", func(t *testing.T) { run(t, sqlops.Budget{StateBytes: state}, nil) })
	t.Run("restarted", func(t *testing.T) {
		var n int
		run(t, sqlops.Budget{StateBytes: state * 3 / 2}, func(op, instance int) bool {
			n++
			return n%3 == 0
		})
	})
}

// same checks that res has the job's answers within the default budget
// (the query "unordered"'s rows the same).
func (j *spillJob) same(t *testing.T, res *sqlops.Result) {
	t.Helper()
	for _, name := range j.names {
		got, w := res.Files[name], j.want.Files[name]
		if name == "unordered" {
			got, w = sortedLines(got), sortedLines(w)
		}
		if !bytes.Equal(got, w) {
			t.Errorf("%s: %d bytes spilled, %d not", name, len(got), len(w))
		}
	}
}

func sortedLines(b []byte) []byte {
	lines := strings.Split(string(b), "\n")
	slices.Sort(lines)
	return []byte(strings.Join(lines, "\n"))
}

// aggSpillQueries are aggregates of many groups, each group's state
// larger than its key: of a match and a team, of a match (COUNT
// DISTINCT, whose distinct rows are an aggregate's groups too), with a
// HAVING, and one whose order is not defined.
var aggSpillQueries = map[string]string{
	"teams":     "SELECT match, team, COUNT(*) AS n, AVG(rating) AS r, SUM(rating) AS s, MIN(civ) AS c, MAX(token) AS t, MIN(color) AS k FROM match_players GROUP BY 1, 2 ORDER BY 1, 2",
	"distinct":  "SELECT match, COUNT(DISTINCT civ) AS civs, MIN(DISTINCT civ) AS c FROM match_players GROUP BY 1 ORDER BY 1",
	"having":    "SELECT civ, match, COUNT(*) AS n, MIN(token) AS t, MAX(rating) AS m FROM match_players GROUP BY 1, 2 HAVING COUNT(*) > 1 ORDER BY 1, 2",
	"unordered": "SELECT token, MIN(civ) AS c, MAX(color) AS k, AVG(rating) AS r, COUNT(rating) AS n FROM match_players GROUP BY 1",
}

// TestAggregateSpillsPastItsBudget: a job whose aggregates (complete,
// partial and final) hold many times its state budget spills their
// groups and gives the answers it gives within the default budget, byte
// for byte (an unordered query's rows the same), HAVING and COUNT
// DISTINCT included; it leaves no file behind; with its operators
// restarted from their snapshots as it goes, the same again.
func TestAggregateSpillsPastItsBudget(t *testing.T) {
	j := newSpillJob(t, aggSpillQueries, 3000, 7)
	// Within the keys of their tables (which stay), short of their
	// groups' state.
	j.spills(t, 1_500_000, "aggregate of")
}

// TestSpilledAggregateStopsGrowingItsTable: an aggregate of more groups
// than its budget holds, most of its state its keys, finishes within
// the budget, its answer byte for byte the job's within the default
// one: once a partition of its groups is on disk, the keys of that
// partition's later rows go to disk with them and not into the table
// it shares (keyUse.out), so the table ends with fewer keys than there
// are groups (without that, every key, and a table that only grows).
func TestSpilledAggregateStopsGrowingItsTable(t *testing.T) {
	j := newSpillJob(t, map[string]string{"matches": "SELECT match, COUNT(*) AS n FROM match_players GROUP BY 1 HAVING COUNT(*) > 7 ORDER BY 1"}, 20_000, 11)
	_, all, err := sqlops.RunSpillingKeys(j.p, j.tables, sqlops.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	const state = 500_000
	res, keys, err := sqlops.RunSpillingKeys(j.p, j.tables, sqlops.Budget{StateBytes: state, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatalf("within %d bytes of state: %v", state, err)
	}
	if !bytes.Equal(res.Files["matches"], j.want.Files["matches"]) {
		t.Fatalf("spilled: %d bytes, not the %d of the default budget", len(res.Files["matches"]), len(j.want.Files["matches"]))
	}
	if keys >= all {
		t.Fatalf("%d keys in the tables spilling, of %d without: the table grew with the spilled groups' keys", keys, all)
	}
	t.Logf("%d keys in the tables spilling, of %d", keys, all)
}

// TestJoinEndSpillsWhatItFeeds: a join emits the rows it held for its
// right input's end in one step, and those of its spilled partitions at
// its end in another; the aggregate they go to, alone in its table (by
// map and player token: the players' COUNT(DISTINCT) per map) spills
// between the chunks (meter.between), its table's keys with its groups
// (exec.KeyTable.Compact), and the job finishes within a budget that the
// aggregate's keys alone pass many times, its answer byte for byte the
// default budget's. Without either, the step's own check finds the
// aggregate past the budget and fails the job. (A check every 512 rows
// here, where a job's is every 65536: these tables are small.)
func TestJoinEndSpillsWhatItFeeds(t *testing.T) {
	defer sqlops.SetBetweenRows(512)()
	j := newSpillJob(t, map[string]string{"tokens": "SELECT m.map, COUNT(DISTINCT p.token) AS players FROM matches m JOIN match_players p ON p.match = m.token GROUP BY 1 ORDER BY 1"}, 4000, 13)
	j.spills(t, 250_000, "aggregate of")
}

// TestJobSpillsPastItsShareOfTheProcess: a job's aggregates spill past
// its share of the process's state (Budget.Pool, --memory-budget) when
// that is less than its own budget, and give the answers they give
// within the default budget; the share is the pool over the jobs it
// counts, each once, and all of it again once they have left; while
// the others hold less than theirs, a holder may hold what they leave.
func TestJobSpillsPastItsShareOfTheProcess(t *testing.T) {
	const total = 3_000_000
	pool := sqlops.NewStatePool(total)
	pool.Join("a")
	pool.Join("b")
	pool.Join("b")
	if got := pool.Share("a/x"); got != total {
		t.Fatalf("share of two jobs, neither holding any: %d, want all %d", got, total)
	}
	pool.Hold("b", "b/shard-0", total/2+1)
	if got := pool.Share("a/x"); got != total/2 {
		t.Fatalf("share of two jobs, the other holding its half: %d, want %d", got, total/2)
	}
	j := newSpillJob(t, aggSpillQueries, 3000, 7)
	var spilled atomic.Bool
	b := sqlops.Budget{Pool: pool, PoolJob: "a", SpillDir: t.TempDir(), Spilled: func(string, int64) { spilled.Store(true) }}
	res, err := sqlops.RunSpilling(j.p, j.tables, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !spilled.Load() {
		t.Fatalf("nothing spilled past a share of %d bytes", pool.Share("a/x"))
	}
	j.same(t, res)
	pool.Leave("a")
	pool.Leave("b")
	pool.Leave("b")
	if got := pool.Share("a/x"); got != total {
		t.Fatalf("share of no job: %d, want %d", got, total)
	}
}

// TestStatePoolLends: a holder's share is the pool's total over its jobs,
// or what the other holders leave of the total when that is more (the
// holder's own holding not counted); a job that leaves takes its
// holders' holdings with it.
func TestStatePoolLends(t *testing.T) {
	pool := sqlops.NewStatePool(900)
	for _, job := range []string{"a", "b", "c"} {
		pool.Join(job)
	}
	steps := []struct {
		do     func()
		holder string
		want   int64
	}{
		{func() {}, "a/0", 900},
		{func() { pool.Hold("a", "a/0", 500) }, "a/0", 900},
		{func() {}, "b/0", 400},
		{func() { pool.Hold("b", "b/0", 100); pool.Hold("b", "b/1", 100) }, "c/0", 300},
		{func() {}, "a/0", 700},
		{func() { pool.Hold("c", "c/0", 800) }, "a/0", 300},
		{func() { pool.Leave("c") }, "a/0", 700},
		{func() { pool.Leave("c") }, "b/0", 450},
	}
	for i, s := range steps {
		s.do()
		if got := pool.Share(s.holder); got != s.want {
			t.Errorf("step %d: %s's share %d, want %d", i, s.holder, got, s.want)
		}
	}
}
