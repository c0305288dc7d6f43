package physical_test

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// TestSubqueryCrossProductsStayOnTheShards: the cross product of a
// scalar subquery, of EXISTS and of NOT IN's counts runs on the shards
// where the query's rows are, the subquery's one row broadcast to every
// instance: no channel is keyed by a constant (which would send every
// row to one shard), and the players' rows are shuffled by a key of
// theirs. Check refuses the plan if the broadcast is a plain gather.
func TestSubqueryCrossProductsStayOnTheShards(t *testing.T) {
	three, err := deploy.Default().WithReplicas(map[string]int{"shard": 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT civ, COUNT(*) FROM match_players WHERE rating > (SELECT AVG(rating) FROM match_players) GROUP BY civ ORDER BY 1",
		"SELECT civ, rating FROM match_players WHERE EXISTS (SELECT 1 FROM matches WHERE map = 'arabia') ORDER BY 1, 2",
		"SELECT civ, COUNT(*) FROM match_players WHERE match NOT IN (SELECT token FROM matches WHERE map = 'arabia') GROUP BY civ ORDER BY 1",
		"SELECT civ, COUNT(*) FROM match_players GROUP BY civ HAVING COUNT(*) > (SELECT COUNT(*) FROM matches) / 100 ORDER BY 1",
	} {
		root, err := sql.Compile(q, catalog())
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		p, err := physical.Build([]physical.Logical{{Name: "q", Plan: root}}, shape(t, three))
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if err := physical.Check(p); err != nil {
			t.Fatalf("%s: %v\n%s", q, err, p)
		}
		broadcasts := 0
		for _, c := range p.Channels {
			for _, k := range c.Key {
				if c.Exprs[k].Kind == plan.Const {
					t.Errorf("%s: channel %s is keyed by the constant %s\n%s", q, c.Name, c.Exprs[k], p)
				}
			}
			if c.Broadcast {
				broadcasts++
				c.Broadcast = false
				if err := physical.Check(p); err == nil || !strings.Contains(err.Error(), "not on every instance") {
					t.Errorf("%s: Check of %s gathered = %v, want it refused", q, c.Name, err)
				}
				c.Broadcast = true
			}
		}
		if broadcasts == 0 {
			t.Errorf("%s: no broadcast\n%s", q, p)
		}
	}
}
