package incr_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// TestWindowsEveryEpoch: standing queries of window functions (ranks,
// running aggregates, over rows and over groups, in a subquery under a
// WHERE on their value, without PARTITION BY) are maintained exactly,
// each partition an epoch touches computed again: every version equals
// the oracle's answer over the epochs so far, and the changes add up to
// it (runEpochs). sqlgen's random window queries too.
func TestWindowsEveryEpoch(t *testing.T) {
	runs := 300
	if testing.Short() {
		runs = 100
	}
	r := rand.New(rand.NewPCG(3, 45))
	tables, cat := dataset(t, datagen.Config{Matches: 300, Seed: 5})
	for i, q := range []string{
		"SELECT civ, rating, RANK() OVER (PARTITION BY civ ORDER BY rating DESC) AS r, SUM(rating) OVER (PARTITION BY civ ORDER BY rating) AS s FROM match_players WHERE rating > 1900",
		"SELECT civ, COUNT(*) AS n, RANK() OVER (ORDER BY COUNT(*) DESC) AS r, SUM(COUNT(*)) OVER () AS total FROM match_players GROUP BY civ",
		"SELECT civ, match, rn FROM (SELECT civ, match, ROW_NUMBER() OVER (PARTITION BY civ ORDER BY rating DESC, match) AS rn FROM match_players) x WHERE rn <= 2",
		"SELECT m.map, p.civ, DENSE_RANK() OVER (PARTITION BY m.map ORDER BY p.rating) AS d, MIN(p.civ) OVER (PARTITION BY m.map) AS lo FROM matches m JOIN match_players p ON p.match = m.token WHERE p.rating > 2000",
	} {
		root, err := sql.Compile(q, cat)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if err := incr.Check(root); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		runEpochs(t, fmt.Sprint("window ", i, ": ", q), rewrite.Optimize(root), epochs(r, tables, 2+r.IntN(5)))
	}
	maintained := 0
	for seed := range uint64(runs) {
		c := sqlgen.GenerateWith(seed, sqlgen.Options{Windows: true})
		if !c.Windows {
			continue
		}
		tabs, cat := sqlgenTables(t, c)
		root, err := sql.Compile(c.Query, cat)
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, c.Query, err)
		}
		if err := incr.Check(root); err != nil {
			t.Fatalf("seed %d: %s: %v", seed, c.Query, err)
		}
		if seed%2 == 1 {
			root = rewrite.Optimize(root)
		}
		rs := rand.New(rand.NewPCG(seed, 46))
		runEpochs(t, fmt.Sprintf("seed %d: %s", seed, c.Query), root, epochs(rs, tabs, 1+rs.IntN(6)))
		maintained++
	}
	if maintained < runs/2 {
		t.Errorf("only %d of %d seeds held window functions", maintained, runs)
	}
}
