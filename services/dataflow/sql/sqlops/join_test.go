package sqlops_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// joinQuery is a random query of the joins of docs/sql.md over t and u:
// inner, left, right and full, on one key or two, USING, three tables
// (one join by k, the next by another key: a shuffle from shard to
// shard), a self-join, an inner join's other ON condition, and WHERE
// conditions on either side of an outer join, which must stay above it.
func (g gen) joinQuery() (string, bool) {
	kind := g.pick("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT OUTER JOIN", "FULL OUTER JOIN")
	where := g.pick("", " WHERE u.m > 1", " WHERE t.n > 1", " WHERE u.c IS NULL", " WHERE t.k IS NULL", " WHERE "+g.pred())
	switch g.r.IntN(8) {
	case 6: // a subquery's groups joined, by two keys
		return "SELECT t.k, t.s, s.n FROM t " + kind + " (SELECT c, k, COUNT(*) AS n FROM u GROUP BY c, k) AS s ON s.k = t.k AND s.c = t.s", false
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

// TestJoinRestartsMatchAStraightRun restarts the operators of random
// joins from their snapshots at random points (a right or full join's
// marks of its matched right rows among its state), on 0 to 3 shards:
// the output is a straight run's.
func TestJoinRestartsMatchAStraightRun(t *testing.T) {
	seeds := 80
	if testing.Short() {
		seeds = 30
	}
	restartedJoins := 0
	for seed := range uint64(seeds) {
		g := gen{rand.New(rand.NewPCG(seed, 27))}
		tables := g.tables(t)
		qs := map[string]string{}
		ordered := map[string]bool{}
		var names []string
		for i := range 3 {
			q, inOrder := g.joinQuery()
			name := fmt.Sprint("j", i)
			qs[name], ordered[name], names = q, inOrder, append(names, name)
		}
		if restarting(t, planOf(t, qs, names, tables, int(seed%4)), tables, ordered, seed)[plan.Join] {
			restartedJoins++
		}
	}
	if restartedJoins < seeds/2 {
		t.Errorf("joins restarted in %d of %d seeds", restartedJoins, seeds)
	}
}

// TestCheckStandingRefusesOuterJoins: a standing job of an outer join
// is refused when it is created, with an error wrapping
// incr.ErrUnsupported that names the join; one of inner joins on two
// keys and of three tables passes.
func TestCheckStandingRefusesOuterJoins(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(1, 28))}
	tables := g.tables(t)
	for _, c := range []struct{ q, says string }{
		{"SELECT t.k, u.c FROM t LEFT JOIN u ON t.k = u.k", "LEFT JOIN"},
		{"SELECT t.k, u.c FROM t RIGHT OUTER JOIN u ON t.k = u.k AND t.s = u.c", "RIGHT JOIN"},
		{"SELECT k, COUNT(*) FROM t FULL JOIN u USING (k) GROUP BY k", "FULL JOIN"},
		{"SELECT t.k, v.c FROM t JOIN u ON t.k = u.k AND t.s = u.c JOIN u AS v ON v.c = u.c", ""},
	} {
		err := sqlops.CheckStanding(planOf(t, map[string]string{"q": c.q}, []string{"q"}, tables, 3))
		switch {
		case c.says == "" && err != nil:
			t.Errorf("%s: %v", c.q, err)
		case c.says != "" && (!errors.Is(err, incr.ErrUnsupported) || !strings.Contains(err.Error(), c.says)):
			t.Errorf("%s: %v, want an error wrapping incr.ErrUnsupported naming %s", c.q, err, c.says)
		}
	}
}

// TestJoinOutputNeverDependsOnArrivalOrder is
// TestOutputNeverDependsOnArrivalOrder's check of the joins: outer joins
// of the generated dataset on a number written two ways (1500 finds
// 1500.0; an unmatched row padded whichever shard it is on), sqlgen's
// random joins (Options.Joins) and this package's; respelled, in two
// orders, on 1 and 3 shards and by the oracle: byte-equal outputs.
func TestJoinOutputNeverDependsOnArrivalOrder(t *testing.T) {
	cases, seeds := 300, 60
	if testing.Short() {
		cases, seeds = 100, 20
	}
	var c arrivalCounts
	_, _, tables := generated(t, 1500, 3)
	for i, q := range []string{
		"SELECT p.rating, m.average_rating, m.map FROM match_players AS p LEFT JOIN matches AS m ON p.rating = m.average_rating WHERE p.rating > 2200",
		"SELECT m.map, COUNT(*), COUNT(p.civ), MAX(p.rating) FROM matches AS m FULL JOIN match_players AS p ON p.match = m.token AND p.rating = m.average_rating GROUP BY m.map",
		"SELECT match, p.civ, q.rating FROM match_players AS p RIGHT JOIN match_players AS q USING (match, civ) JOIN matches AS m ON m.token = match WHERE q.rating > 2000 ORDER BY q.rating DESC LIMIT 20",
	} {
		c.check(t, fmt.Sprint("join", i), q, tables, uint64(i))
	}
	for seed := range uint64(cases) {
		sc := sqlgen.GenerateWith(seed, sqlgen.Options{Joins: true})
		if !strings.Contains(sc.Query, " JOIN ") {
			continue
		}
		c.check(t, fmt.Sprint("sqlgen seed ", seed), sc.Query, caseTables(t, sc), seed)
	}
	for seed := range uint64(seeds) {
		g := gen{rand.New(rand.NewPCG(seed, 29))}
		tabs := g.tables(t)
		q, _ := g.joinQuery()
		c.check(t, fmt.Sprint("random seed ", seed), q, tabs, seed)
	}
	t.Logf("%d queries, %d runs compared; %d answers with rows, %d over a number written two ways",
		c.queries, c.runs, c.nonEmpty, c.respelled)
	if c.nonEmpty < c.queries/3 {
		t.Errorf("only %d of %d answers have rows: the test checks little", c.nonEmpty, c.queries)
	}
}
