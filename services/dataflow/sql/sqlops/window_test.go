package sqlops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// windowQueries are window functions over the generated dataset whose
// order has many ties (ratings, counts, a number written two ways):
// ROW_NUMBER among peers, ranks, running aggregates whose peers share
// their value, partitions shuffled to the shards and one at the gateway.
var windowQueries = []string{
	"SELECT civ, rating, ROW_NUMBER() OVER (PARTITION BY civ ORDER BY rating DESC) AS rn, RANK() OVER (PARTITION BY civ ORDER BY rating DESC) AS r FROM match_players WHERE rating > 1800",
	"SELECT match, civ, SUM(rating) OVER (PARTITION BY match ORDER BY civ) AS s, AVG(rating) OVER (PARTITION BY match) AS a, MIN(civ) OVER (PARTITION BY match ORDER BY rating) AS lo FROM match_players WHERE rating > 2000",
	"SELECT m.map, COUNT(*) AS n, DENSE_RANK() OVER (ORDER BY COUNT(*) DESC) AS d, SUM(COUNT(*)) OVER () AS total FROM matches m JOIN match_players p ON p.match = m.token GROUP BY m.map",
	"SELECT m.map, p.civ, COUNT(*) AS n, ROW_NUMBER() OVER (PARTITION BY m.map ORDER BY COUNT(*) DESC) AS rn FROM matches m JOIN match_players p ON p.match = m.token GROUP BY m.map, p.civ ORDER BY rn, m.map LIMIT 40",
	"SELECT average_rating, COUNT(average_rating) OVER (PARTITION BY average_rating) AS c, MAX(map) OVER (PARTITION BY average_rating ORDER BY ladder) AS mx FROM matches WHERE average_rating > 1500",
}

// TestWindowOutputNeverDependsOnArrivalOrder is
// TestOutputNeverDependsOnArrivalOrder's check of the window functions:
// respelled, in two orders, on 1 and 3 shards and by the oracle,
// byte-equal outputs.
func TestWindowOutputNeverDependsOnArrivalOrder(t *testing.T) {
	var c arrivalCounts
	_, _, tables := generated(t, 1500, 3)
	for i, q := range windowQueries {
		c.check(t, fmt.Sprint("window", i), q, tables, uint64(i))
	}
	if c.nonEmpty < c.queries {
		t.Errorf("only %d of %d answers have rows", c.nonEmpty, c.queries)
	}
}

// TestWindowsStanding: a standing job of the window queries, each
// partition an epoch touches computed again (incr's window.go), on 1 and
// 3 shards: every version equals the oracle's answer over the epochs so
// far, its changes adding up to it (checkEpochs).
func TestWindowsStanding(t *testing.T) {
	_, _, tables := generated(t, 400, 4)
	texts := map[string]string{}
	var names []string
	for i, q := range windowQueries {
		name := fmt.Sprint("w", i)
		texts[name], names = q, append(names, name)
	}
	j := newJob(t, texts, names, tables)
	for _, shards := range []int{1, 3} {
		parts := splitEpochs(rand.New(rand.NewPCG(uint64(shards), 47)), tables, 4)
		checkEpochs(t, "windows", j, tables, parts, shards)
	}
}

// TestWindowRestartsMatchAStraightRun restarts the window operators (and
// every other operator with state) of the window queries from their
// snapshots at random points, on 0 to 3 shards: the outputs are the
// straight run's, byte for byte.
func TestWindowRestartsMatchAStraightRun(t *testing.T) {
	_, _, tables := generated(t, 2000, 8)
	texts, ordered := map[string]string{}, map[string]bool{}
	var names []string
	for i, q := range windowQueries {
		name := fmt.Sprint("w", i)
		texts[name], ordered[name], names = q, true, append(names, name)
	}
	restarted := 0
	for shards := range 4 {
		p := planOf(t, texts, names, tables, shards)
		for seed := range uint64(2) {
			if restarting(t, p, tables, ordered, seed)[plan.Window] {
				restarted++
			}
		}
	}
	if restarted < 6 {
		t.Errorf("window operators restarted in %d runs of 8", restarted)
	}
}
