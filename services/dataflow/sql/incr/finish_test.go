package incr_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
)

// TestFinishedGroupsDropped: an aggregate whose HAVING bounds a count
// from above (q2's COUNT(*) = 2) drops the state of the groups that can
// never pass it again, keeping their keys done, and its versions stay
// those of oracle.Execute, epoch after epoch, restored from snapshots
// too; one whose HAVING does not bound a count drops none. Here every
// epoch drops what finished (a slack below any count); and again with
// the groups new in an epoch looked at and dropped mid-epoch as soon as
// one more came after them (dropNew).
func TestFinishedGroupsDropped(t *testing.T) {
	defer incr.SetDropSlack(-1 << 30)()
	for _, lag := range []int{1 << 16, 1} {
		t.Run(fmt.Sprintf("lag %d", lag), func(t *testing.T) {
			defer incr.SetNewGroupsLag(lag)()
			finishedGroupsDropped(t)
		})
	}
}

func finishedGroupsDropped(t *testing.T) {
	qs := defaultQueries(t)
	cases := []struct {
		q     string
		drops bool
	}{
		{qs["q2"], true},
		{"SELECT match, COUNT(*) FROM match_players GROUP BY match HAVING COUNT(*) < 3 ORDER BY match", true},
		{"SELECT match, MAX(rating) FROM match_players GROUP BY match HAVING 2 >= COUNT(*) AND MAX(rating) > 1500 ORDER BY match", true},
		{"SELECT match FROM match_players GROUP BY match HAVING COUNT(rating) = 1 ORDER BY match", true},
		{"SELECT civ, COUNT(*) FROM match_players GROUP BY civ HAVING COUNT(*) <= 30 ORDER BY civ", true},
		{"SELECT match FROM match_players GROUP BY match HAVING COUNT(*) > 2 ORDER BY match", false},
		{"SELECT match FROM match_players GROUP BY match HAVING COUNT(*) = 2 OR MAX(rating) > 2000 ORDER BY match", false},
		{"SELECT match FROM match_players GROUP BY match HAVING COUNT(*) <> 2 ORDER BY match", false},
	}
	for seed := range int64(3) {
		tables, cat := dataset(t, datagen.Config{Matches: 1500, Seed: seed})
		r := rand.New(rand.NewPCG(uint64(seed), 43))
		n := []int{2, 9, 40}[seed]
		parts := epochs(r, tables, n)
		for _, c := range cases {
			root, err := sql.Compile(c.q, cat)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []*plan.Node{root, rewrite.Optimize(root)} {
				label := fmt.Sprintf("seed %d, %d epochs: %s", seed, n, c.q)
				runEpochs(t, label, p, parts)
				checkRestores(t, label, r, p, parts)
				e, err := incr.New(p)
				if err != nil {
					t.Fatal(err)
				}
				for _, part := range parts {
					commitEpoch(t, e, part)
				}
				held, dropped := incr.HeldGroups(e)
				if c.drops && dropped == 0 || !c.drops && dropped != 0 {
					t.Errorf("%s: %d groups held, %d dropped", label, held, dropped)
				}
			}
		}
	}
}
