package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// TestSQLJoinsAgainstDuckDB runs the seeded random cases whose join is
// one of sqlgen's Options.Joins: INNER, LEFT, RIGHT and FULL joins on one
// key or two (a number's equal by value), USING (k), an inner join's
// other ON condition, and a third table joined on another key. Those of
// the seeds that join nothing are TestSQLAgainstDuckDB's kinds, and
// skipped.
func TestSQLJoinsAgainstDuckDB(t *testing.T) {
	n, first := envUint(t, "SQLDIFF_QUERIES", 500), envUint(t, "SQLDIFF_SEED", 0)
	d := newDiffer(t)
	var stats diffStats
	outer := 0
	for seed := first; seed < first+n; seed++ {
		c := sqlgen.GenerateWith(seed, sqlgen.Options{Joins: true})
		if !strings.Contains(c.Query, " JOIN ") {
			continue
		}
		if strings.Contains(c.Query, "LEFT ") || strings.Contains(c.Query, "RIGHT ") || strings.Contains(c.Query, "FULL ") {
			outer++
		}
		d.check(t, fmt.Sprintf("seed %d (joins)", seed), c.Tables, c.Query, &stats)
	}
	t.Logf("%d seeds from %d: %d joins compared (%d outer, %d returned rows), %d beyond DuckDB's DECIMAL(38)", n, first, stats.compared, outer, stats.nonEmpty, stats.overflow)
	if stats.compared < int(n)/8 || outer < int(n)/10 || stats.nonEmpty < stats.compared/4 {
		t.Errorf("%d compared, %d outer, %d with rows, of %d seeds: too few to test the joins", stats.compared, outer, stats.nonEmpty, n)
	}
}

// keptJoinCases are hand-written joins of issue 41, run as keptCases
// are (TestSQLKeptCases): outer joins, USING, three tables, a self-join.
var keptJoinCases = []struct {
	name   string
	tables []sqlgen.Table
	query  string
	want   []string
}{
	{
		// A WHERE condition on the NULL-padded side stays above the
		// LEFT join: b's padded row passes u.m IS NULL, a's 10 fails.
		name:   "LEFT JOIN, WHERE on the right side",
		tables: joinTables,
		query:  "SELECT t.k, t.n, u.m FROM t LEFT JOIN u ON t.k = u.k WHERE u.m IS NULL OR u.m > 10 ORDER BY 1, 2, 3",
		want:   []string{`"a","1","11"`, `"a","3","11"`, `"b","2",` + nullWant},
	},
	{
		// USING's column once, FULL's the first of the sides not NULL.
		name:   "FULL JOIN USING",
		tables: joinTables,
		query:  "SELECT * FROM t FULL JOIN u USING (k) ORDER BY 1, 2, 3",
		want:   []string{`"a","1","10"`, `"a","1","11"`, `"a","3","10"`, `"a","3","11"`, `"b","2",` + nullWant, `"c",` + nullWant + `,"5"`},
	},
	{
		// Three tables, the second join on two keys (a number equal by
		// value, 10 and 10.0), RIGHT: v's unmatched rows padded.
		name:   "a join of three tables, RIGHT on two keys",
		tables: joinTables,
		query:  "SELECT t.k, u.m, v.c FROM t JOIN u ON t.k = u.k RIGHT JOIN v ON v.m = u.m AND v.k = u.k WHERE u.m IS NULL OR u.m * 1 = u.m ORDER BY 1, 2, 3",
		want:   []string{`"a","10","p"`, `"a","10","p"`, nullWant + "," + nullWant + `,"q"`, nullWant + "," + nullWant + `,"r"`},
	},
	{
		// A self-join whose ON has a condition besides its key: a
		// filter of the inner join.
		name:   "a self-join with a condition in ON",
		tables: joinTables,
		query:  "SELECT a.k, a.n, b.n FROM t a JOIN t b ON a.k = b.k AND a.n < b.n ORDER BY 1, 2, 3",
		want:   []string{`"a","1","3"`},
	},
	{
		// LEFT then FULL, grouped by the padded side's key.
		name:   "LEFT then FULL JOIN, grouped",
		tables: joinTables,
		query:  "SELECT v.c, COUNT(*), COUNT(t.k), SUM(u.m) FROM t LEFT JOIN u ON t.k = u.k FULL JOIN v ON v.k = t.k GROUP BY v.c ORDER BY 1, 2, 3, 4",
		want:   []string{`"p","4","4","42"`, `"q","4","4","42"`, `"r","1","0",` + nullWant, nullWant + `,"1","1",` + nullWant},
	},
}

// joinTables are keptJoinCases' tables: t's b and u's c match nothing,
// the key a matches twice.
var joinTables = []sqlgen.Table{
	{Name: "t", Columns: []string{"k", "n"}, CSV: "k,n\na,1\na,3\nb,2\n"},
	{Name: "u", Columns: []string{"k", "m"}, CSV: "k,m\na,10\na,11\nc,5\n"},
	{Name: "v", Columns: []string{"k", "m", "c"}, CSV: "k,m,c\na,10.0,p\na,12,q\nc,5,r\n"},
}

func init() { keptCases = append(keptCases, keptJoinCases...) }

// generatedJoins are joins of the two input files as an analyst writes
// them: an outer join grouped by a key of each side, a FULL join, and a
// join of three tables whose LEFT join is on two keys.
var generatedJoins = []struct{ name, query string }{
	{"left_per_map_civ", "SELECT m.map, p.civ, COUNT(*) AS n, COUNT(p.match) AS players, MAX(p.rating) AS best FROM matches m LEFT JOIN match_players p ON p.match = m.token GROUP BY m.map, p.civ ORDER BY 1, 2"},
	{"full_per_map", "SELECT m.map, COUNT(*) AS n, COUNT(m.token) AS matched, COUNT(p.civ) AS civs FROM matches m FULL JOIN match_players p ON p.match = m.token GROUP BY m.map ORDER BY 1"},
	{"teammates", "SELECT p.civ, q.civ AS mate, COUNT(*) AS n FROM matches m JOIN match_players p ON p.match = m.token LEFT JOIN match_players q ON q.match = p.match AND q.winner = p.winner WHERE m.ladder = 'RM_TEAM' AND p.civ < q.civ GROUP BY p.civ, q.civ ORDER BY 3 DESC, 1, 2 LIMIT 40"},
	{"unmatched", "SELECT p.civ, COUNT(*) AS n FROM match_players p LEFT JOIN matches m ON m.token = p.match WHERE m.token IS NULL GROUP BY p.civ ORDER BY 1"},
}

// TestSQLJoinsOnGeneratedAgainstDuckDB runs generatedJoins over the
// generated input files (malformed records, missing and invalid values)
// with our engine and with DuckDB: the same rows, and some.
func TestSQLJoinsOnGeneratedAgainstDuckDB(t *testing.T) {
	tables, d := generatedTables(t)
	dir := t.TempDir()
	for _, j := range generatedJoins {
		f := filepath.Join(dir, j.name+".sql")
		if err := os.WriteFile(f, []byte(j.query+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		rows := checkFile(t, d, tables, f)
		t.Logf("%s: %d rows", j.name, len(rows))
	}
}
