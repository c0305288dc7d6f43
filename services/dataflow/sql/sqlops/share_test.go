package sqlops_test

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// sharedQueries are inner joins of the players to their matches, each
// with conditions of its own on either side (NULL ratings and averages
// among them), a condition over both sides above the join, computed
// columns, a derived table, a join of a join, a join on two keys (which
// shares the join on one of them, the other's equality kept after it),
// and outer joins, LEFT, RIGHT and FULL, with conditions on the side
// they keep: physical.Build makes the joins of the parsed inputs one
// shared join (share.go), a FULL one; the outer join whose padded side
// is filtered (outer) and the self-join stay joins of their own.
var sharedQueries = map[string]string{
	"rated":   "SELECT p.civ, COUNT(*) AS n, MAX(m.average_rating) AS top FROM match_players AS p JOIN matches AS m ON m.token = p.match WHERE p.rating > 1500 GROUP BY 1 ORDER BY 1",
	"ladder":  "SELECT m.ladder, p.color, COUNT(*) AS n FROM matches AS m JOIN match_players AS p ON p.match = m.token WHERE m.ladder = 'RM_1v1' AND p.civ <> '' GROUP BY 1, 2 ORDER BY 1, 2",
	"above":   "SELECT UPPER(m.map) AS map, p.rating - m.average_rating AS over FROM match_players AS p JOIN matches AS m ON m.token = p.match WHERE p.rating > m.average_rating AND m.map LIKE 'a%' ORDER BY 1, 2 LIMIT 50",
	"all":     "SELECT COUNT(*) AS n, COUNT(p.rating) AS rated, SUM(CASE WHEN p.winner THEN 1 ELSE 0 END) AS wins FROM match_players AS p JOIN matches AS m ON m.token = p.match",
	"team":    "SELECT t.map, COUNT(*) AS n FROM match_players AS p JOIN (SELECT token AS match, map FROM matches WHERE ladder = 'RM_TEAM') AS t USING (match) GROUP BY 1 ORDER BY 1",
	"pairs":   "SELECT a.civ, b.civ AS other, COUNT(*) AS n FROM matches AS m JOIN match_players AS a ON a.match = m.token JOIN match_players AS b ON b.match = m.token WHERE m.ladder = 'RM_1v1' AND a.civ < b.civ GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 20",
	"outer":   "SELECT m.ladder, COUNT(p.match) AS players FROM matches AS m LEFT JOIN (SELECT match FROM match_players WHERE rating > 2000) AS p ON p.match = m.token GROUP BY 1 ORDER BY 1",
	"seen":    "SELECT m.ladder, COUNT(*) AS n, COUNT(p.match) AS players, COUNT(*) FILTER (WHERE p.rating IS NULL) AS unrated FROM matches AS m LEFT JOIN match_players AS p ON p.match = m.token WHERE m.map <> 'arena' GROUP BY 1 ORDER BY 1",
	"orphans": "SELECT p.civ, COUNT(*) AS n, COUNT(m.token) AS matched FROM matches AS m RIGHT JOIN match_players AS p ON p.match = m.token WHERE p.winner GROUP BY 1 ORDER BY 1",
	"padded":  "SELECT p.match, COUNT(*) AS n FROM matches AS m LEFT JOIN match_players AS p ON p.match = m.token GROUP BY p.match ORDER BY 2 DESC, 1 LIMIT 5",
	"winners": "SELECT m.ladder, COUNT(*) AS n, COUNT(*) FILTER (WHERE p.winner) AS flagged FROM match_players AS p JOIN matches AS m ON m.token = p.match AND m.winning_team = p.team GROUP BY 1 ORDER BY 1",
	"full":    "SELECT COALESCE(m.ladder, '-') AS ladder, COUNT(*) AS n, COUNT(m.token) AS m, COUNT(p.match) AS p, COUNT(*) FILTER (WHERE p.match IS NULL) AS alone FROM matches AS m FULL JOIN match_players AS p ON p.match = m.token GROUP BY 1 ORDER BY 1",
}

// TestSharedJoinAnswersAsItsQueriesAlone: a job of queries whose inner
// joins of the players to their matches are one shared join gives each
// query the file that query gives alone (its join its own), byte for
// byte, on one shard and three; spilling past a small budget, and with
// its operators restarted from their snapshots, the same again. The plan
// holds one join serving the eleven queries whose joins read parsed inputs
// (pairs's first), and outer's join and pairs's second are their own.
func TestSharedJoinAnswersAsItsQueriesAlone(t *testing.T) {
	_, _, tables := generated(t, 1500, 21)
	names := make([]string, 0, len(sharedQueries))
	for name := range sharedQueries {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, shards := range []int{1, 3} {
		p := planOf(t, sharedQueries, names, tables, shards)
		var shared []*physical.Op
		joins := 0
		for _, o := range p.Ops {
			if o.Kind == plan.Join {
				joins++
				if len(o.Queries) > 1 {
					shared = append(shared, o)
				}
			}
		}
		if len(shared) != 1 || len(shared[0].Queries) != 11 || joins != 3 || shared[0].Node.JoinType != plan.JoinFull {
			t.Fatalf("%d shards: %d joins, shared %v: want 3, one FULL join of eleven queries\n%s", shards, joins, shared, p)
		}
		all, err := sqlops.RunBudget(p, tables, sqlops.Budget{})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			alone, err := sqlops.RunBudget(planOf(t, sharedQueries, []string{name}, tables, shards), tables, sqlops.Budget{})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(all.Files[name], alone.Files[name]) {
				t.Errorf("%d shards: %s: in the job\n%s\nalone\n%s", shards, name, all.Files[name], alone.Files[name])
			}
			if strings.Count(string(alone.Files[name]), "\n") < 2 {
				t.Errorf("%s: %q: too few rows to compare", name, alone.Files[name])
			}
		}
	}
	j := &spillJob{p: planOf(t, sharedQueries, names, tables, 2), tables: tables, names: names}
	var err error
	if j.want, err = sqlops.RunBudget(j.p, tables, sqlops.Budget{}); err != nil {
		t.Fatal(err)
	}
	j.spills(t, 100_000, "join of above, all, full, ladder, orphans, padded, pairs, rated, seen, team, winners")
}

// TestSharedJoinTablesAlone: without a second query of the same tables
// and keys, a join is its own (nothing to share).
func TestSharedJoinTablesAlone(t *testing.T) {
	_, _, tables := generated(t, 50, 3)
	p := planOf(t, sharedQueries, []string{"rated"}, tables, 2)
	for _, o := range p.Ops {
		if o.Kind == plan.Join && (len(o.Queries) != 1 || o.Node.LeftKey.String() != "match#0") {
			t.Errorf("a join alone: %v, %s", o.Queries, o.Node.LeftKey)
		}
	}
}

// TestSharedJoinsOfRandomJobs: jobs of the generator's random joins over
// the same two tables (inner, LEFT, RIGHT and FULL, on one key or two,
// USING, self-joins, three tables, conditions on either side), planned
// together, share what they can (physical's share.go); each query's
// file is the file it gives alone, byte for byte, on 1, 2 and 3 shards.
// (TestSharedJoinAnswersAsItsQueriesAlone spills a shared FULL join.)
func TestSharedJoinsOfRandomJobs(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 20
	}
	sharing, outer := 0, 0
	for seed := range uint64(seeds) {
		g := gen{rand.New(rand.NewPCG(seed, 43))}
		tables := g.tables(t)
		texts, names := g.queriesOf(8, gen.joinQuery)
		shards := 1 + int(seed%3)
		p := planOf(t, texts, names, tables, shards)
		for _, o := range p.Ops {
			if o.Kind == plan.Join && len(o.Queries) > 1 {
				sharing++
				if o.Node.JoinType.Outer() {
					outer++
				}
			}
		}
		all, err := sqlops.RunBudget(p, tables, sqlops.Budget{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, name := range names {
			alone, err := sqlops.RunBudget(planOf(t, texts, []string{name}, tables, shards), tables, sqlops.Budget{})
			if err != nil {
				t.Fatalf("seed %d: %s alone: %v", seed, name, err)
			}
			if !bytes.Equal(all.Files[name], alone.Files[name]) {
				t.Errorf("seed %d, %d shards: %s (%s): in the job\n%s\nalone\n%s", seed, shards, name, texts[name], all.Files[name], alone.Files[name])
			}
		}
	}
	t.Logf("%d shared joins, %d of them outer, in %d jobs", sharing, outer, seeds)
	if sharing < seeds/2 || outer == 0 {
		t.Errorf("%d shared joins (%d outer) in %d jobs: the test checks little", sharing, outer, seeds)
	}
}
