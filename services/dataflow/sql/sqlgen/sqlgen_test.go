package sqlgen

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestGenerateIsAFunctionOfItsSeed: a seed names one case, which a
// failing run's message can be reproduced from.
func TestGenerateIsAFunctionOfItsSeed(t *testing.T) {
	for seed := range uint64(50) {
		a, b := Generate(seed), Generate(seed)
		if a.Query != b.Query || a.Want != b.Want || a.Tables[0].CSV != b.Tables[0].CSV || a.Tables[1].CSV != b.Tables[1].CSV {
			t.Fatalf("seed %d made two cases:\n%+v\n%+v", seed, a, b)
		}
	}
}

// TestCasesCoverTheSubsetAndTheData: over a few hundred seeds the cases
// hold every construct and every kind of awkward value the generator is
// for, so that a comparison over them tests what it claims to.
func TestCasesCoverTheSubsetAndTheData(t *testing.T) {
	queries := map[string]bool{
		" JOIN u ON ": false, " IN (SELECT ": false, "GROUP BY": false, "HAVING": false, "DISTINCT": false,
		"ORDER BY": false, " DESC": false, "LIMIT": false, "CASE WHEN": false, "SUM(": false, "MIN(": false,
		"MAX(": false, "COUNT(": false, " NOT IN (": false, "-(": false, wideInt: false, "DURATION_SECONDS(": false, "PERCENT(": false,
		" BETWEEN ": false, " NOT BETWEEN ": false, "COALESCE(": false, "NULLIF(": false,
		"GROUP BY 1": false, "GROUP BY grp": false,
	}
	data := map[string]func(string) bool{
		"a missing value":           func(csv string) bool { return strings.Contains(csv, ",,") || strings.Contains(csv, ",\n") },
		"a value that is not UTF-8": func(csv string) bool { return !utf8.ValidString(csv) },
		"a number wider than a double": func(csv string) bool {
			return strings.Contains(csv, "99999999999999999999.5")
		},
		"a quoted text": func(csv string) bool { return strings.Contains(csv, `"q"""`) },
	}
	seen := map[string]bool{}
	for seed := range uint64(300) {
		c := Generate(seed)
		for k := range queries {
			if strings.Contains(c.Query, k) {
				queries[k] = true
			}
		}
		for name, has := range data {
			if has(c.Tables[0].CSV) {
				seen[name] = true
			}
		}
	}
	for k, ok := range queries {
		if !ok {
			t.Errorf("no query of 300 has %q", k)
		}
	}
	for name := range data {
		if !seen[name] {
			t.Errorf("no table of 300 has %s", name)
		}
	}
}

// TestSubqueryCases: GenerateWith(seed, Options{}) is Generate(seed), and
// with Options.Subqueries the cases hold every form of subquery in FROM
// and of WITH the generator writes.
func TestSubqueryCases(t *testing.T) {
	forms := map[string]bool{
		"FROM (SELECT * FROM t": false, ") AS t(k, n, b)": false, "WITH w AS (": false, "w(k, n, b, s, d) AS (": false,
		"FROM w0 AS t": false, "(SELECT k FROM v)": false, "(SELECT w.k FROM w)": false, " JOIN u ON ": false,
		"JOIN (SELECT k, COUNT(*) AS m FROM u GROUP BY k) AS u": false, "HAVING COUNT(*) > 1) AS u": false, "MAX(m) AS m FROM u": false,
	}
	for seed := range uint64(300) {
		if a, b := Generate(seed), GenerateWith(seed, Options{}); a.Query != b.Query || a.Want != b.Want {
			t.Fatalf("seed %d: Generate and GenerateWith without options differ:\n%s\n%s", seed, a.Query, b.Query)
		}
		c := GenerateWith(seed, Options{Subqueries: true})
		for f := range forms {
			if strings.Contains(c.Query, f) && c.Subquery {
				forms[f] = true
			}
		}
	}
	for f, ok := range forms {
		if !ok {
			t.Errorf("no query of 300 has %q", f)
		}
	}
}
