package sqlops_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/respell"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// finishQueries are aggregates under a HAVING that bounds a count from
// above (q2's, and its kinds: <, <=, a bound on the left, COUNT of a
// column, a group of many rows), and one whose HAVING bounds none.
var finishQueries = map[string]string{
	"q2":    defaultTexts()["q2"],
	"less":  "SELECT match, COUNT(*) AS n, MIN(civ) AS c FROM match_players GROUP BY match HAVING COUNT(*) < 3 ORDER BY match",
	"left":  "SELECT match, MAX(rating) AS m FROM match_players GROUP BY match HAVING 2 >= COUNT(*) AND MAX(rating) > 1500 ORDER BY match",
	"count": "SELECT match FROM match_players GROUP BY match HAVING COUNT(rating) = 1 ORDER BY match",
	"civs":  "SELECT civ, COUNT(*) AS n FROM match_players GROUP BY civ HAVING COUNT(*) <= 30 ORDER BY civ",
	"more":  "SELECT match, COUNT(*) AS n FROM match_players GROUP BY match HAVING COUNT(*) > 2 ORDER BY match",
}

// TestFinishedGroupsLetGo: aggregates under a HAVING that bounds a count
// from above drop the groups that can never pass it (aggfinish.go) and
// give the answers they give keeping every group, byte for byte: with
// every group looked at as soon as one more came and dropped at once, on
// one shard and on three, with their operators restarted from their
// snapshots as they go (the done keys in the snapshot), and spilling
// past a small budget. And q2, whose groups are many times a budget,
// runs within it, where keeping every group it fails.
func TestFinishedGroupsLetGo(t *testing.T) {
	_, _, ordered := generated(t, 3000, 9)
	// The players shuffled: a match's rows come apart, some after its
	// group was dropped (looked at once 300 groups came after it).
	r := rand.New(rand.NewPCG(9, 1))
	rows, _ := respell.Rows(ordered["match_players"], nil, r)
	respell.Shuffle(rows, r)
	shuffled := map[string]*exec.Table{"matches": ordered["matches"], "match_players": respell.Table(ordered["match_players"].Columns, rows, 100)}
	names := []string{"civs", "count", "left", "less", "more", "q2"}
	for _, c := range []struct {
		label  string
		tables map[string]*exec.Table
		lag    int
	}{{"in order", ordered, 1}, {"shuffled", shuffled, 300}} {
		for _, shards := range []int{1, 3} {
			finishedGroupsLetGo(t, fmt.Sprintf("%s, %d shards", c.label, shards), planOf(t, finishQueries, names, c.tables, shards), c.tables, names, c.lag)
		}
	}
	t.Run("within a budget", func(t *testing.T) {
		_, _, tables := generated(t, 20_000, 4)
		p := planOf(t, finishQueries, []string{"q2"}, tables, 1)
		const state = 1_800_000
		keepAll := sqlops.SetFinishSteps(1<<30, 0)
		_, err := sqlops.RunBudget(p, tables, sqlops.Budget{StateBytes: state})
		keepAll()
		var over *sqlops.OverBudget
		if !errors.As(err, &over) {
			t.Fatalf("keeping every group: %v, want the job over %d bytes of state", err, state)
		}
		defer sqlops.SetFinishSteps(2048, 0)()
		if _, err := sqlops.RunBudget(p, tables, sqlops.Budget{StateBytes: state}); err != nil {
			t.Fatal(fmt.Errorf("dropping finished groups: %w", err))
		}
	})
}

// finishedGroupsLetGo runs p over tables keeping every group, then with
// groups looked at lag groups after they came and dropped at once (no
// slack): plainly, restarted and spilling; the answers must not change.
func finishedGroupsLetGo(t *testing.T, label string, p *physical.Plan, tables map[string]*exec.Table, names []string, lag int) {
	t.Helper()
	keepAll := sqlops.SetFinishSteps(1<<30, 0)
	want, err := sqlops.RunBudget(p, tables, sqlops.Budget{})
	keepAll()
	if err != nil {
		t.Fatal(err)
	}
	defer sqlops.SetFinishSteps(lag, -1<<30)()
	check := func(how string, res *sqlops.Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s, %s: %v", label, how, err)
		}
		for _, name := range names {
			if string(res.Files[name]) != string(want.Files[name]) {
				t.Errorf("%s, %s: %s differs from its answer keeping every group", label, how, name)
			}
		}
	}
	res, err := sqlops.RunBudget(p, tables, sqlops.Budget{})
	check("dropped", res, err)
	n := 0
	res, err = sqlops.RunSpilling(p, tables, sqlops.Budget{}, func(int, int) bool { n++; return n%3 == 0 })
	check("restarted", res, err)
	res, err = sqlops.RunSpilling(p, tables, sqlops.Budget{StateBytes: 400_000, SpillDir: t.TempDir()}, nil)
	check("spilled", res, err)
}
