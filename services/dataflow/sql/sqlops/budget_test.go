package sqlops_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// TestJobOverItsBudgetFails: a job that makes an instance hold or make
// more than its budget fails with an OverBudget that names the budget
// and its flag, and that fails the job where it is met
// (stage.ErrFailsJob), for each bound: a self-join on a key of few
// values (the attack of issue 37's W4: the square of its input) or a
// CROSS JOIN (the product of its inputs), its
// rows of one batch, and players held before their matches (F8) or a
// join's right rows. The same jobs within the default budget give their
// answers.
func TestJobOverItsBudgetFails(t *testing.T) {
	_, _, tables := generated(t, 400, 3)
	texts := map[string]string{
		"square": "SELECT a.token, b.token AS other FROM match_players a JOIN match_players b ON a.civ = b.civ ORDER BY a.token, other LIMIT 10",
		"cross":  "SELECT p.token, m.token AS other FROM match_players p CROSS JOIN matches m ORDER BY p.token, other LIMIT 10",
		"joined": "SELECT m.map, COUNT(*) AS n FROM match_players p JOIN matches m ON p.match = m.token GROUP BY m.map ORDER BY m.map",
	}
	for _, c := range []struct {
		name, query string
		budget      sqlops.Budget
		order       []string
		flag        string // "": within the budget
	}{
		{"join rows", "square", sqlops.Budget{JoinRows: 5_000}, nil, "--job-max-join-rows"},
		{"a cross join's rows", "cross", sqlops.Budget{JoinRows: 5_000}, nil, "--job-max-join-rows"},
		{"one batch's rows", "square", sqlops.Budget{StepBytes: 1 << 20}, nil, "--job-max-step-bytes"},
		{"players held before their matches", "joined", sqlops.Budget{StateBytes: 20_000}, []string{"match_players", "matches"}, "--job-max-state-bytes"},
		{"the right rows", "joined", sqlops.Budget{StateBytes: 5_000}, []string{"matches", "match_players"}, "--job-max-state-bytes"},
		{"square within the defaults", "square", sqlops.Budget{}, nil, ""},
		{"cross within the defaults", "cross", sqlops.Budget{}, nil, ""},
		{"joined within the defaults", "joined", sqlops.Budget{}, []string{"match_players", "matches"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := planOf(t, texts, []string{c.query}, tables, 2)
			res, err := sqlops.RunBudget(p, tables, c.budget, c.order...)
			if c.flag == "" {
				if err != nil || len(res.Files[c.query]) == 0 {
					t.Fatalf("within the default budget: %v", err)
				}
				return
			}
			var over *sqlops.OverBudget
			switch {
			case err == nil:
				t.Fatalf("no error; want the job over its budget (%s)", c.flag)
			case !errors.As(err, &over) || !errors.Is(err, stage.ErrFailsJob):
				t.Fatalf("%v: want an OverBudget that fails the job", err)
			case over.Flag != c.flag || !strings.Contains(err.Error(), c.flag):
				t.Fatalf("%v: want the budget of %s", err, c.flag)
			case over.Spent <= over.Limit:
				t.Fatalf("%v: spent %d of %d", err, over.Spent, over.Limit)
			}
			t.Log(err)
		})
	}
}
