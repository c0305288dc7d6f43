package sql_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
)

// TestSetOpPlans: the plans set operations bind to, and their columns
// (the first operand's names, the kinds both agree on).
func TestSetOpPlans(t *testing.T) {
	cases := []struct{ query, plan string }{
		{"select token as t from matches union all select match from match_players order by t",
			"sort by #0, all columns -> (t text)\n  unionall -> (t text)\n"},
		{"select average_rating from matches union select rating from match_players limit 2 offset 1",
			"limit 2 offset 1 -> (average_rating number)\n  sort by all columns -> (average_rating number)\n    distinct -> (average_rating number)\n      unionall -> (average_rating number)\n"},
		{"select map from matches intersect select civ from match_players",
			"sort by all columns -> (map text)\n  project map#0 -> (map text)\n    filter (min(side)#1 < max(side)#2) -> (map text, min(side) number, max(side) number)\n      aggregate by [map#0] computing [min(side#1), max(side#1)] -> (map text, min(side) number, max(side) number)\n        unionall -> (map text, side number)\n"},
		{"select map from matches except select civ from match_players",
			"filter (max(side)#2 = 1)"},
	}
	for _, c := range cases {
		root, err := sql.Compile(c.query, catalog)
		if err != nil {
			t.Errorf("%s: %v", c.query, err)
			continue
		}
		if got := root.String(); !containsLines(got, c.plan) {
			t.Errorf("%s:\n%s\nwant it to hold\n%s", c.query, got, c.plan)
		}
	}
}

// TestSetOpRefused: what PostgreSQL refuses, and the ALL forms of
// INTERSECT and EXCEPT, at the construct's line:column.
func TestSetOpRefused(t *testing.T) {
	cases := []struct {
		query, construct string
		col              int
	}{
		{"select token, map from matches union select match from match_players", "UNION", 32},
		{"select token from matches union select rating from match_players", "UNION column 1", 27},
		{"select token from matches intersect all select match from match_players", "INTERSECT ALL", 27},
		{"select token from matches except all select match from match_players", "EXCEPT ALL", 27},
		{"select token from matches union select match from match_players order by length(token)", "ORDER BY", 74},
		{"select token from matches union select match from match_players order by 2", "ORDER BY position", 74},
		{"select token from matches union select nope from match_players", "column nope", 40},
	}
	for _, c := range cases {
		_, err := sql.Compile(c.query, catalog)
		var e *sql.Error
		if !errors.As(err, &e) || e.Construct != c.construct || e.Line != 1 || e.Col != c.col {
			t.Errorf("%s: %v, want %s at 1:%d", c.query, err, c.construct, c.col)
		}
	}
}

// containsLines reports whether want is a run of whole lines of got.
func containsLines(got, want string) bool {
	return strings.Contains("\n"+got, "\n"+want) || strings.Contains(got, want) && !strings.HasSuffix(want, "\n")
}
