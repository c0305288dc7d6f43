package main

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"

	wsql "github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// The differential test of the SQL engine (issue 25, item 8): random
// queries of the subset over generated tables (services/dataflow/sql/sqlgen),
// each run by Wololo's engine (Compile, then the oracle's Execute,
// services/dataflow/sql/sqlgen/oracle) and by DuckDB over
// the same CSV files, the rows compared.
//
// DuckDB reads each file with every column VARCHAR and the columns are
// then typed by the contract's rules with macros.sql's macros, each column
// as the kind Wololo's binder inferred for it (the plan's scans name them):
// a number is wl_number's text cast to the narrowest DECIMAL that
// holds the column's numbers (decimalType); a duration wl_duration_exact's
// seconds, typed the same way (DURATION_SECONDS is then a macro that
// returns its argument); a boolean wl_bool; a text is
// its bytes, never NULL (coalesce: read_csv makes an empty field NULL).
//
// The files are read as Latin-1: DuckDB rejects a row that is not UTF-8,
// where the contract keeps its bytes. Latin-1 maps each byte to the code
// point of its value, so the bytes survive; UTF-8 keeps code point order,
// so DuckDB's text order and equality are the bytes' (as ours are); the
// query's text literals are read the same way (latin1Text), and the
// results' texts are mapped back to bytes (latin1Bytes).
//
// Rows are compared in order: both sides order them totally (the query's
// ORDER BY keys, then every column ascending, NULL last: sqlgen's
// queries end so, and DuckDB sorts NULL last by default, as newDiffer
// sets it). Numbers are compared by value, both
// written as the engine writes a group key (value.Dec.Normal): a DuckDB
// DECIMAL has one scale per column where ours keeps each value's, which
// the property test of services/dataflow/sql/sqlgen/oracle checks against sqlgen's
// evaluator.
//
// A query is counted, not compared, where DuckDB's numbers end: its
// DECIMAL holds 38 digits, so a product may overflow (an error), and a
// CASE or sum whose operands need more gets a DECIMAL(38, s) that rounds
// them (beyondScale). Ours holds 38 digits too (docs/sql.md "Numbers"),
// but makes a result past them NULL where DuckDB fails. Any other error
// or difference fails the test.
//
// SQLDIFF_QUERIES (default 500) and SQLDIFF_SEED (default 0) choose the
// cases: the seeds SQLDIFF_SEED, SQLDIFF_SEED+1, ...

// TestSQLAgainstDuckDB runs the seeded random cases.
func TestSQLAgainstDuckDB(t *testing.T) {
	n, first := envUint(t, "SQLDIFF_QUERIES", 500), envUint(t, "SQLDIFF_SEED", 0)
	d := newDiffer(t)
	var stats diffStats
	for seed := first; seed < first+n; seed++ {
		c := sqlgen.Generate(seed)
		d.check(t, fmt.Sprintf("seed %d", seed), c.Tables, c.Query, &stats)
	}
	t.Logf("%d queries from seed %d: %d compared (%d returned rows), %d beyond DuckDB's DECIMAL(38) (an overflow, or a result it rounded to fit)", n, first, stats.compared, stats.nonEmpty, stats.overflow)
	// The comparison must prove something: a good share of the queries
	// return rows, and few go beyond DuckDB's numbers.
	if stats.nonEmpty < stats.compared/3 {
		t.Errorf("only %d of %d compared queries returned rows", stats.nonEmpty, stats.compared)
	}
	if uint64(stats.overflow) > n/5 {
		t.Errorf("%d of %d queries overflowed DuckDB's DECIMAL(38): the generator's numbers are too wide for the comparison", stats.overflow, n)
	}
}

// TestSQLSubqueriesAgainstDuckDB runs the seeded random cases that read
// t through a subquery in FROM or a CTE (sqlgen's Options.Subqueries):
// WITH, CTEs reading earlier ones, column lists, a CTE read twice. Those
// of the seeds that hold neither are TestSQLAgainstDuckDB's kinds, and
// skipped.
func TestSQLSubqueriesAgainstDuckDB(t *testing.T) {
	n, first, stats := checkGenerated(t, sqlgen.Options{Subqueries: true}, "subqueries", func(c sqlgen.Case) bool { return c.Subquery })
	t.Logf("%d seeds from %d: %d queries with subqueries compared (%d returned rows), %d beyond DuckDB's DECIMAL(38)", n, first, stats.compared, stats.nonEmpty, stats.overflow)
	if stats.compared < int(n)/2 || stats.nonEmpty < stats.compared/4 {
		t.Errorf("%d compared, %d with rows, of %d seeds: too few to test the subqueries", stats.compared, stats.nonEmpty, n)
	}
}

// checkGenerated compares the seeded random cases of o (SQLDIFF_QUERIES
// from SQLDIFF_SEED) that keep holds, each named by its seed and what;
// it returns the seeds' number, the first, and the counts.
func checkGenerated(t *testing.T, o sqlgen.Options, what string, keep func(sqlgen.Case) bool) (n, first uint64, stats diffStats) {
	t.Helper()
	n, first = envUint(t, "SQLDIFF_QUERIES", 500), envUint(t, "SQLDIFF_SEED", 0)
	d := newDiffer(t)
	for seed := first; seed < first+n; seed++ {
		if c := sqlgen.GenerateWith(seed, o); keep(c) {
			d.check(t, fmt.Sprintf("seed %d (%s)", seed, what), c.Tables, c.Query, &stats)
		}
	}
	return n, first, stats
}

// checkConstructs runs the seeded random cases of o that hold the
// constructs what (keep; the other seeds' queries are
// TestSQLAgainstDuckDB's kinds, and skipped), and fails when fewer than
// one seed in share was compared, or fewer than a quarter of those
// returned rows: too few to test them.
func checkConstructs(t *testing.T, o sqlgen.Options, what string, keep func(sqlgen.Case) bool, share int) {
	t.Helper()
	n, first, stats := checkGenerated(t, o, what, keep)
	t.Logf("%d seeds from %d: %d queries of %s compared (%d returned rows), %d beyond DuckDB's DECIMAL(38)", n, first, stats.compared, what, stats.nonEmpty, stats.overflow)
	if stats.compared < int(n)/share || stats.nonEmpty < stats.compared/4 {
		t.Errorf("%d compared, %d with rows, of %d seeds: too few to test the %s", stats.compared, stats.nonEmpty, n, what)
	}
}

// keptCases are the mismatches the random runs found, kept whatever the
// generator becomes: each says which side was wrong, and want pins our
// rows.
var keptCases = []struct {
	name   string
	tables []sqlgen.Table
	query  string // one text, run by both
	want   []string
}{
	{
		// DuckDB's side (this test's typing): the column n was a
		// DECIMAL(38, 0), and DuckDB typed the CASE of it and 0.5 as a
		// DECIMAL(38, 0) too, rounding 0.5 to 1 (4 for 3.5). Columns are
		// now the narrowest DECIMAL that holds them (decimalType).
		name:   "a CASE of a decimal literal and a whole-number column (seed 901)",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "n", "b", "s"}, CSV: "k,n,b,s\na,-3,0,x\n"}},
		query:  "SELECT t.n, (CASE WHEN t.n IN (1, 2.5, -3) THEN 0.5 ELSE t.n END - CASE WHEN (t.k >= 'a') THEN t.n ELSE 2 END), t.b FROM t WHERE t.b OR NOT t.b ORDER BY 1, 2, 3",
		want:   []string{`"-3","3.5","false"`},
	},
	{
		// DuckDB's side (its typing of a literal): 100000000000000000000
		// is a HUGEINT, which a CASE beside a DECIMAL(23, 3) widens to a
		// DECIMAL(38, 0), rounding 24691357802469135.782 to scale 1
		// (seed 13421 of 20000). The queries write it as a decimal,
		// 100000000000000000000.0 (sqlgen's wideInt).
		name: "a CASE of an integer literal wider than a BIGINT and a decimal",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "n", "b", "s"},
			CSV: "k,n,b,s\na,12345678901234567.891,0,x\na,1,1,x\n"}},
		query: "SELECT t.n, CASE WHEN t.b THEN (100000000000000000000.0 - 0.5) ELSE (t.n + t.n) END FROM t ORDER BY 1, 2",
		want:  []string{`"1","99999999999999999999.5"`, `"12345678901234567.891","24691357802469135.782"`},
	},
	{
		// DuckDB's side (macros.sql): wl_duration, the baseline's, saturates
		// a day count of more than 12 digits (no query's bound comes near),
		// where the contract reads any number of days exactly. Typed by
		// wl_duration_exact, exact up to 33 digits of days.
		name: "a duration of more days than wl_duration counts",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "n", "b", "s", "d"},
			CSV: "k,n,b,s,d\na,1,1,x,\"123456789012345678 days, 0:00:01\"\na,1,1,x,\"1 day, 2:03:04\"\n"}},
		query: "SELECT DURATION_SECONDS(t.d) FROM t ORDER BY 1",
		want:  []string{`"93784"`, `"10666666570666666579201"`},
	},
	{
		// Neither side: DuckDB's DECIMAL holds 38 digits. It types
		// d * d as a DECIMAL(38, 0), and the CASE of it and n (a
		// DECIMAL(19, 3)) as a DECIMAL(38, 0) too, rounding 7.25 to 7
		// (seed 216511). Ours makes the product NULL (past 38 digits);
		// the test counts such a query with the overflows (beyondScale)
		// instead of failing it.
		name: "a CASE of a decimal and a product of 38 digits",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "n", "b", "s", "d"},
			CSV: "k,n,b,s,d\na,7.25,0,x,\"123456789012345678 days, 0:00:01\"\n"}},
		query: "SELECT t.n, CASE WHEN t.n > 100 THEN DURATION_SECONDS(t.d) * DURATION_SECONDS(t.d) ELSE t.n END FROM t ORDER BY 1, 2",
		want:  []string{`"7.25","7.25"`},
	},
	{
		// Ours (issue 38): an AVG of 15-decimal values was written with
		// 19 decimals (the division rule) where DuckDB's AVG is a
		// DOUBLE; it is now the exact quotient rounded to the same
		// double, written as its shortest text (value.Avg): DuckDB's
		// text, which want pins. The 0.0/1.0 CASE is a win rate's.
		name: "an AVG of 15-decimal values, and of a CASE of 1.0 and 0.0",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "n", "b"},
			CSV: "k,n,b\na,0.123456789012345,1\na,0.200000000000000,0\nb,1,1\nb,2,1\nb,2,0\nc,1486.733035935001185500,1\n"}},
		query: "SELECT t.k, AVG(t.n), AVG(CASE WHEN t.b THEN 1.0 ELSE 0.0 END) FROM t GROUP BY t.k ORDER BY 1, 2, 3",
		want:  []string{`"a","0.1617283945061725","0.5"`, `"b","1.6666666666666667","0.6666666666666666"`, `"c","1486.7330359350012","1"`},
	},
	{
		// Issue 41: BETWEEN, a binder rewrite to x >= lo AND x <= hi, with
		// NULLs of x and of a bound (NOT BETWEEN of a NULL bound is true
		// where the other comparison is false).
		name: "BETWEEN and NOT BETWEEN, NULLs included",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "n", "b"},
			CSV: "k,n,b\na,1,1\nb,2.5,0\nc,,1\nd,7,0\n"}},
		query: "SELECT t.k, t.n BETWEEN 1 AND 2.5, t.n NOT BETWEEN 2 AND 8, t.n BETWEEN NULL AND 3, t.k NOT BETWEEN 'b' AND 'c' FROM t WHERE t.n BETWEEN -1 AND 7 OR t.n IS NULL ORDER BY 1",
		want: []string{`"a","true","true",` + nullWant + `,"true"`, `"b","true","false",` + nullWant + `,"false"`,
			`"c",` + nullWant + `,` + nullWant + `,` + nullWant + `,"false"`, `"d","false","false","false","true"`},
	},
	{
		// Issue 41: COALESCE and NULLIF (the arguments one type, as a CASE's).
		name: "COALESCE and NULLIF, NULLs included",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "n", "b"},
			CSV: "k,n,b\na,1,1\nb,2.5,0\nc,,1\nc,7,\n"}},
		query: "SELECT t.k, COALESCE(t.n, 0), COALESCE(NULL, t.b, t.n > 2), NULLIF(t.n, 2.50), NULLIF(t.k, 'c'), COALESCE(NULLIF(t.n, 1), -1) FROM t ORDER BY 1, 2",
		want: []string{`"a","1","true","1","a","-1"`, `"b","2.5","false",` + nullWant + `,"b","2.5"`,
			`"c","0","true",` + nullWant + `,` + nullWant + `,"-1"`, `"c","7","true","7",` + nullWant + `,"7"`},
	},
	{
		// Issue 41: LIKE, ILIKE (% and _) and STARTS_WITH. No backslash:
		// DuckDB's LIKE has no default escape (docs/sql.md). ASCII only:
		// the files are read as Latin-1, a byte a character there.
		name: "LIKE, ILIKE and STARTS_WITH, NULLs included",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "s"},
			CSV: "k,s\na,Bob\nb,\"a,b\"\nc,\nd,hee_x\ne,50%\n"}}, // c's s is '', not NULL
		query: "SELECT t.k, t.s LIKE 'B%', t.s ILIKE 'b_B', t.s NOT LIKE '%,%', t.s LIKE 'h%_x', t.s LIKE '%0%', STARTS_WITH(t.s, 'a,') FROM t WHERE t.s LIKE '%' OR t.s IS NULL ORDER BY 1",
		want: []string{`"a","true","true","true","false","false","false"`, `"b","false","false","false","false","false","true"`,
			`"c","false","false","true","false","false","false"`,
			`"d","false","false","true","true","false","false"`, `"e","false","false","true","false","true","false"`},
	},
	{
		// Issue 41: the string functions, NULLs included (SUBSTR's start
		// not below 0: docs/sql.md). ASCII only: the files are read as
		// Latin-1, a byte a character there.
		name: "LOWER, UPPER, LENGTH, TRIM, REPLACE, SUBSTR and ||",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "s", "n"},
			CSV: "k,s,n\na,Bob,1\nb, hEe x ,0\nc,,2\nd,\"a,b\",\n"}}, // c's s is '', not NULL
		query: "SELECT t.k, LOWER(t.s), UPPER(t.s), LENGTH(t.s), TRIM(t.s), REPLACE(t.s, 'e', 'e!'), SUBSTR(t.s, 2), SUBSTR(t.s, 0, 3), SUBSTR(t.s, 3, 1), t.s || '|' || t.k FROM t ORDER BY 1",
		want: []string{`"a","bob","BOB","3","Bob","Bob","ob","Bo","b","Bob|a"`,
			`"b"," hee x "," HEE X ","7","hEe x"," hEe! x ","hEe x "," h","E"," hEe x |b"`,
			`"c","","","0","","","","","","|c"`,
			`"d","a,b","A,B","3","a,b","a,b",",b","a,","b","a,b|d"`},
	},
	{
		// Issue 41: ABS, ROUND (half away from zero on a decimal), FLOOR
		// and CEIL, NULLs included.
		name: "ABS, ROUND, FLOOR and CEIL",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "n"},
			CSV: "k,n\na,2.5\nb,-2.45\nc,\nd,1250\ne,-0.4\n"}},
		query: "SELECT t.k, ABS(t.n), ROUND(t.n), ROUND(t.n, 1), ROUND(t.n, -2), ROUND(t.n, 3), FLOOR(t.n), CEIL(t.n) FROM t ORDER BY 1",
		want: []string{`"a","2.5","3","2.5","0","2.5","2","3"`, `"b","2.45","-2","-2.5","0","-2.45","-3","-2"`,
			`"c",` + nullWant + `,` + nullWant + `,` + nullWant + `,` + nullWant + `,` + nullWant + `,` + nullWant + `,` + nullWant,
			`"d","1250","1250","1250","1300","1250","1250","1250"`, `"e","0.4","0","-0.4","0","-0.4","-1","0"`},
	},
	{
		// Issue 41: GROUP BY a position and a SELECT alias (no input
		// column has its name), ORDER BY a position.
		name: "GROUP BY a position and an alias, ORDER BY a position",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "n", "b"},
			CSV: "k,n,b\na,1,1\nb,2.5,0\nc,,1\nc,7,\nd,9,0\n"}},
		query: "SELECT CASE WHEN t.n > 2 THEN 'big' ELSE 'small' END AS band, t.b, COUNT(*), SUM(t.n) FROM t GROUP BY band, 2 ORDER BY 3 DESC, 1, 2",
		want:  []string{`"big","0","2","11.5"`, `"small","1","2","1"`, `"big","","1","7"`},
	},
	{
		// Issue 41: WITH, a CTE read twice (a self-join) and a later CTE
		// reading it, with a column list renaming its columns.
		name: "WITH: a CTE read twice, and one reading it with a column list",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "n", "b"},
			CSV: "k,n,b\na,1,1\na,2.5,0\nb,,1\nc,7,0\n"}},
		query: "WITH w AS (SELECT t.k, t.n FROM t WHERE t.b), w2(key, total) AS (SELECT x.k, x.n + y.n FROM w x JOIN w y ON x.k = y.k) SELECT w2.key, w2.total FROM w2 ORDER BY 1, 2",
		want:  []string{`"a","2"`, `"b",` + nullWant},
	},
	{
		// Issue 41: a subquery in FROM, an aggregate of the table joined
		// with it (its own scan of the table, as a self-join's).
		name: "a subquery in FROM: an aggregate joined with its table",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "n"},
			CSV: "k,n\na,1\na,2.50\nb,3\nc,\n"}},
		query: "SELECT t.k, t.n, s.total FROM t JOIN (SELECT k, SUM(n) AS total, COUNT(*) AS c FROM t GROUP BY k) AS s ON t.k = s.k WHERE s.c > 1 ORDER BY 1, 2, 3",
		want:  []string{`"a","1","3.5"`, `"a","2.5","3.5"`},
	},
	{
		// Issue 41: a subquery in FROM ordered for its LIMIT and its
		// ROW_NUMBER, which the query reads as a table.
		name: "a subquery in FROM with ORDER BY, LIMIT and ROW_NUMBER",
		tables: []sqlgen.Table{{Name: "t", Columns: []string{"k", "n"},
			CSV: "k,n\na,5\nb,3\nc,10\nd,1\n"}}, // 10 first by value, not by text
		query: "SELECT s.r, s.k FROM (SELECT ROW_NUMBER() OVER (ORDER BY t.n DESC) AS r, t.k FROM t WHERE t.n > 0 ORDER BY t.n DESC LIMIT 3) AS s WHERE s.r > 1 ORDER BY 1, 2",
		want:  []string{`"2","a"`, `"3","b"`},
	},
}

// nullWant is a NULL field of a kept case's want: nullField, quoted
// as the rows' fields are.
var nullWant = strconv.Quote(nullField)

// TestSQLKeptCases runs the kept cases.
func TestSQLKeptCases(t *testing.T) {
	d := newDiffer(t)
	for _, c := range keptCases {
		ours := d.check(t, c.name, c.tables, c.query, &diffStats{})
		if !slices.Equal(ours, c.want) {
			t.Errorf("%s: ours %q, want %q", c.name, ours, c.want)
		}
	}
}

// TestSQLStddevSampAgainstDuckDB compares STDDEV_SAMP (docs/sql.md: exact,
// rounded to the values' largest scale + 4) with DuckDB's DOUBLE, to our
// last digit: a group of one value and one of none are NULL on both
// sides, NULLs are skipped, scales mix, and a CASE inside makes it
// conditional. sqlgen's random queries call it too.
func TestSQLStddevSampAgainstDuckDB(t *testing.T) {
	d := newDiffer(t)
	tables := []sqlgen.Table{{Name: "t", Columns: []string{"k", "n", "b", "s", "d"},
		CSV: "k,n,b,s,d\na,1,1,x,0:00:01\na,2,0,x,0:01:00\na,4,1,x,\nb,2.5,1,y,1:00:00\nb,,1,y,\nc,7.25,0,z,\nc,-3,1,z,\nc,0.001,1,z,\nc,12,0,z,\nd,,1,w,\n"}}
	query := "SELECT t.k, STDDEV_SAMP(t.n), STDDEV_SAMP(CASE WHEN t.b THEN t.n END), STDDEV_SAMP(DURATION_SECONDS(t.d)) FROM t GROUP BY t.k ORDER BY 1, 2, 3, 4"
	stats := &diffStats{}
	ours := d.check(t, "STDDEV_SAMP", tables, query, stats)
	if stats.compared != 1 {
		t.Fatalf("compared %d queries, want 1", stats.compared)
	}
	const null = nullField
	want := []string{
		row([]string{"a", "1.5275", "2.1213", "41.7193"}),
		row([]string{"b", null, null, null}),
		row([]string{"c", "6.8200379", "2.1220275", null}), // of 7.25, -3, 0.001, 12: scale 3 + 4
		row([]string{"d", null, null, null}),
	}
	if !slices.Equal(ours, want) {
		t.Errorf("ours %q, want %q", ours, want)
	}
}

func envUint(t *testing.T, name string, def uint64) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return v
}

type diffStats struct{ compared, nonEmpty, overflow int }

// differ holds one DuckDB connection with the contract's macros, and a
// directory for the cases' files.
type differ struct {
	conn *sql.Conn
	dir  string
}

func newDiffer(t *testing.T) *differ {
	t.Helper()
	dir := t.TempDir()
	conn, closeDB, err := open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeDB)
	if err := valueRules(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	// NULL sorts last, ascending or descending, as ours does (DuckDB's
	// default too, said here so that no setting of DuckDB's changes it).
	if _, err := conn.ExecContext(context.Background(), "SET default_null_order = 'nulls_last'"); err != nil {
		t.Fatal(err)
	}
	// Our functions in DuckDB: a duration column's view already holds
	// its seconds; PERCENT is docs/sql.md's double arithmetic, written
	// with four decimals.
	if _, err := conn.ExecContext(context.Background(), `CREATE MACRO duration_seconds(x) AS x;
CREATE MACRO percent(p, w) AS CASE WHEN w <> 0 THEN printf('%.4f', CAST(100 * p AS DOUBLE) / CAST(w AS DOUBLE)) END;`); err != nil {
		t.Fatal(err)
	}
	return &differ{conn: conn, dir: dir}
}

// check runs query with Wololo's engine and with DuckDB (the same text,
// untranslated) over the tables and fails the test, naming the case,
// when their rows differ. It returns our rows.
func (d *differ) check(t *testing.T, name string, tables []sqlgen.Table, query string, stats *diffStats) []string {
	t.Helper()
	ctx := context.Background()
	root, ours := runOurs(t, name, tables, query)
	for _, tab := range tables {
		if err := d.load(ctx, tab, scanKinds(root)[tab.Name]); err != nil {
			t.Fatalf("%s: loading %s into DuckDB: %v", name, tab.Name, err)
		}
	}
	theirs, capped, err := d.runDuckDB(ctx, latin1Text(query), root.Output)
	if err != nil {
		if isOverflow(err) {
			stats.overflow++
			return ours
		}
		t.Fatalf("%s: DuckDB: %v\n%s", name, err, describe(tables, query))
	}
	if !sameRows(ours, theirs) && beyondScale(ours, capped) {
		stats.overflow++
		return ours
	}
	stats.compared++
	if len(ours) > 0 {
		stats.nonEmpty++
	}
	if !sameRows(ours, theirs) {
		t.Errorf("%s: the rows differ\n%s\n ours:   %q\n duckdb: %q\nplan:\n%s", name, describe(tables, query), ours, theirs, root)
	}
	return ours
}

func describe(tables []sqlgen.Table, query string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "query: %s\n", query)
	for _, tab := range tables {
		if len(tab.CSV) > 2000 { // a generated dataset (the examples')
			fmt.Fprintf(&b, "%s: %q... (%d bytes)\n", tab.Name, tab.CSV[:2000], len(tab.CSV))
			continue
		}
		fmt.Fprintf(&b, "%s: %q\n", tab.Name, tab.CSV)
	}
	return b.String()
}

// runOurs compiles and executes query over the tables and returns its plan
// and its rows, each written by row().
func runOurs(t *testing.T, name string, tables []sqlgen.Table, query string) (*plan.Node, []string) {
	t.Helper()
	cat := wsql.Catalog{}
	data := map[string]*exec.Table{}
	for _, tab := range tables {
		tt, err := exec.ReadCSV(strings.NewReader(tab.CSV), 0)
		if err != nil {
			t.Fatalf("%s: %s: %v", name, tab.Name, err)
		}
		cat[tab.Name], data[tab.Name] = tt.Columns, tt
	}
	root, err := wsql.Compile(query, cat)
	if err != nil {
		t.Fatalf("%s: Compile(%s): %v", name, query, err)
	}
	res, err := oracle.Execute(root, data)
	if err != nil {
		t.Fatalf("%s: Execute(%s): %v", name, query, err)
	}
	var rows []string
	fields := make([]string, len(res.Columns))
	for r := range res.Rows.N {
		for i, v := range res.Rows.Cols {
			switch {
			case v.IsNull(r):
				fields[i] = nullField
			case v.Type == plan.Number:
				fields[i] = v.Nums[r].Normal().String()
			case v.Type == plan.Bool:
				fields[i] = strconv.FormatBool(v.Bools[r])
			default:
				fields[i] = string(v.Text(r))
			}
		}
		rows = append(rows, row(fields))
	}
	return root, rows
}

// nullField stands for NULL in a compared row: no text holds it.
const nullField = "\x00NULL\x00"

// row joins a row's fields, each quoted, for comparison and messages.
func row(fields []string) string {
	quoted := make([]string, len(fields))
	for i, f := range fields {
		quoted[i] = strconv.Quote(f)
	}
	return strings.Join(quoted, ",")
}

// scanKinds is every column the plan's scans read (its type and read
// rule), per table.
func scanKinds(n *plan.Node) map[string]map[string]plan.Column {
	kinds := map[string]map[string]plan.Column{}
	var walk func(n *plan.Node)
	walk = func(n *plan.Node) {
		if n.Op == plan.Scan {
			if kinds[n.Table] == nil {
				kinds[n.Table] = map[string]plan.Column{}
			}
			for _, c := range n.Output {
				kinds[n.Table][c.Name] = c
			}
		}
		for _, in := range n.Input {
			walk(in)
		}
	}
	walk(n)
	return kinds
}

// load writes tab's file, reads it into raw_NAME (every column VARCHAR;
// a record of another field count, or broken quoting, skipped as our
// ReadCSV skips it) and makes the view NAME that types its columns as
// kinds says.
func (d *differ) load(ctx context.Context, tab sqlgen.Table, kinds map[string]plan.Column) error {
	path := filepath.Join(d.dir, tab.Name+".csv")
	if err := os.WriteFile(path, []byte(tab.CSV), 0o644); err != nil {
		return err
	}
	cols := make([]string, len(tab.Columns))
	for i := range cols {
		cols[i] = fmt.Sprintf("'c%d': 'VARCHAR'", i)
	}
	raw := "raw_" + tab.Name
	create := fmt.Sprintf(`CREATE OR REPLACE TABLE %s AS SELECT * FROM read_csv(%s, columns = {%s}, header = true,
    auto_detect = false, delim = ',', quote = '"', escape = '"', encoding = 'latin-1', ignore_errors = true)`,
		raw, sqlString(path), strings.Join(cols, ", "))
	if _, err := d.conn.ExecContext(ctx, create); err != nil {
		return err
	}
	exprs := make([]string, len(tab.Columns))
	for i, name := range tab.Columns {
		c := fmt.Sprintf("c%d", i)
		switch kinds[name].Type {
		case plan.Number:
			num := "wl_number(" + c + ")"
			if kinds[name].Read == plan.ReadDuration {
				num = "CAST(wl_duration_exact(" + c + ") AS VARCHAR)"
			}
			typ, err := d.decimalType(ctx, raw, num)
			if err != nil {
				return err
			}
			exprs[i] = fmt.Sprintf("CAST(%s AS %s)", num, typ)
		case plan.Bool:
			exprs[i] = fmt.Sprintf("wl_bool(%s)", c)
		default:
			exprs[i] = fmt.Sprintf("coalesce(%s, '')", c)
		}
		exprs[i] += " AS " + name
	}
	view := fmt.Sprintf("CREATE OR REPLACE VIEW %s AS SELECT %s FROM %s", tab.Name, strings.Join(exprs, ", "), raw)
	_, err := d.conn.ExecContext(ctx, view)
	return err
}

// decimalType is the narrowest DECIMAL that holds every number num (the
// text of a number of raw's column) reads: as many integer digits as its widest number has, as many fractional
// ones as its longest fraction. Not DECIMAL(38, s): DuckDB types a CASE
// or a sum of two DECIMALs by the larger integer part and the larger
// scale, capped at 38 digits, so a column of 38 would round another
// operand to its scale (CASE WHEN .. THEN 0.5 ELSE n END was 1 where n
// was a DECIMAL(38, 0)).
func (d *differ) decimalType(ctx context.Context, raw, num string) (string, error) {
	var whole, frac sql.NullInt64
	q := fmt.Sprintf(`SELECT max(length(ltrim(split_part(ltrim(%[1]s, '-'), '.', 1), '0'))),
    max(length(split_part(%[1]s, '.', 2))) FROM %[2]s`, num, raw)
	if err := d.conn.QueryRowContext(ctx, q).Scan(&whole, &frac); err != nil {
		return "", err
	}
	width := max(whole.Int64, 1) + frac.Int64
	if width > 38 {
		return "", fmt.Errorf("%s has a number of %d digits, more than DuckDB's DECIMAL holds", num, width)
	}
	return fmt.Sprintf("DECIMAL(%d, %d)", width, frac.Int64), nil
}

// runDuckDB runs query and writes its rows as runOurs does, each column
// as the plan's output types say. capped is, per output column, the scale
// s of a DECIMAL(38, s), -1 for any other type: DuckDB gives a CASE or a
// product that needs more than 38 digits a DECIMAL(38, s) and rounds its
// values to scale s, where ours are exact (CASE WHEN .. THEN d * d ELSE
// 7.25 END was 7 with d * d a DECIMAL(38, 0)).
func (d *differ) runDuckDB(ctx context.Context, query string, out []plan.Column) (rows []string, capped []int, err error) {
	rs, err := d.conn.QueryContext(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	types, err := rs.ColumnTypes()
	if err != nil {
		return nil, nil, err
	}
	for _, ct := range types {
		s := -1
		if _, err := fmt.Sscanf(ct.DatabaseTypeName(), "DECIMAL(38,%d)", &s); err != nil {
			s = -1
		}
		capped = append(capped, s)
	}
	vals := make([]any, len(out))
	ptrs := make([]any, len(out))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	fields := make([]string, len(out))
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		for i, v := range vals {
			if fields[i], err = duckField(v, out[i].Type); err != nil {
				return nil, nil, fmt.Errorf("column %d (%s): %w", i+1, out[i].Name, err)
			}
		}
		rows = append(rows, row(fields))
	}
	return rows, capped, rs.Err()
}

// approxMark starts a field of a DuckDB DOUBLE (its AVG or STDDEV_SAMP of
// a DECIMAL), which sameRows compares with our number to its last digit.
const approxMark = "\x00~"

// sameRows reports whether our rows equal DuckDB's: field by field, a
// DOUBLE of theirs (approxMark) equal to ours when they differ by at most
// one unit of our number's last digit (our STDDEV_SAMP is exact, rounded
// to its scale; our AVG is the double's shortest text, DuckDB's to the
// last digit but where the two round the quotient differently; theirs is
// a double).
func sameRows(ours, theirs []string) bool {
	if len(ours) != len(theirs) {
		return false
	}
	for i := range ours {
		if ours[i] == theirs[i] {
			continue
		}
		a, b := splitRow(ours[i]), splitRow(theirs[i])
		if len(a) != len(b) {
			return false
		}
		for j := range a {
			if a[j] != b[j] && !closeTo(a[j], b[j]) {
				return false
			}
		}
	}
	return true
}

// closeTo reports whether theirs, a DOUBLE (approxMark), is within one
// unit of the last digit of ours, a number.
func closeTo(ours, theirs string) bool {
	d, ok := strings.CutPrefix(theirs, approxMark)
	if !ok {
		return false
	}
	x, err1 := strconv.ParseFloat(ours, 64)
	y, err2 := strconv.ParseFloat(d, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	unit := 1.0
	if _, frac, ok := strings.Cut(ours, "."); ok {
		unit = math.Pow(10, -float64(len(frac)))
	}
	return math.Abs(x-y) <= unit
}

// beyondScale reports whether one of our rows has a number with more
// fractional digits than DuckDB's capped DECIMAL(38, s) of its column
// keeps: a difference DuckDB's 38 digits make, not a wrong answer.
func beyondScale(ours []string, capped []int) bool {
	for _, r := range ours {
		for i, f := range splitRow(r) {
			if _, frac, ok := strings.Cut(f, "."); ok && capped[i] >= 0 && len(frac) > capped[i] {
				return true
			}
		}
	}
	return false
}

// splitRow is the fields row joined.
func splitRow(r string) []string {
	var fields []string
	for r != "" {
		q, err := strconv.QuotedPrefix(r)
		if err != nil {
			panic(fmt.Sprintf("splitRow(%q): %v", r, err)) // row quoted every field
		}
		f, _ := strconv.Unquote(q)
		fields = append(fields, f)
		r = strings.TrimPrefix(r[len(q):], ",")
	}
	return fields
}

// duckField writes a DuckDB value of a column of type t as runOurs writes
// ours.
func duckField(v any, t plan.Type) (string, error) {
	if v == nil {
		return nullField, nil
	}
	var text string
	switch x := v.(type) {
	case string:
		switch t {
		case plan.Text:
			return latin1Bytes(x)
		case plan.Number: // PERCENT's text
			text = x
		default:
			return "", fmt.Errorf("text %q for a %s column", x, t)
		}
	case float64: // AVG's or STDDEV_SAMP's DOUBLE: compared with ours to its last digit (sameRows)
		if t != plan.Number {
			return "", fmt.Errorf("double %v for a %s column", x, t)
		}
		return approxMark + strconv.FormatFloat(x, 'g', -1, 64), nil
	case bool:
		if t != plan.Bool {
			return "", fmt.Errorf("boolean %v for a %s column", x, t)
		}
		return strconv.FormatBool(x), nil
	case duckdb.Decimal:
		text = decimalText(x)
	case *big.Int:
		text = x.String()
	case int64, int32, int16, int8, uint64, uint32, uint16, uint8:
		text = fmt.Sprint(x)
	default:
		return "", fmt.Errorf("unexpected value %v (%T)", v, v)
	}
	if t != plan.Number {
		return "", fmt.Errorf("number %s for a %s column", text, t)
	}
	dec, ok := value.ReadNumber([]byte(text))
	if !ok {
		return "", fmt.Errorf("DuckDB's number %q does not read as one", text)
	}
	return dec.Normal().String(), nil
}

// latin1Text is the text DuckDB reads from bytes as Latin-1: a query's
// literals must be compared with the tables' texts read the same way.
func latin1Text(b string) string {
	r := make([]rune, len(b))
	for i := range len(b) {
		r[i] = rune(b[i])
	}
	return string(r)
}

// latin1Bytes maps a text read as Latin-1 back to its bytes.
func latin1Bytes(s string) (string, error) {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return "", fmt.Errorf("%q is not Latin-1 text", s)
		}
		b = append(b, byte(r))
	}
	return string(b), nil
}

// isOverflow reports a number beyond DuckDB's: its DECIMAL holds 38
// digits, where ours has no bound ("Out of Range Error: Overflow in
// multiplication of DECIMAL(38) ..."). Nothing else is let through.
func isOverflow(err error) bool {
	return strings.Contains(err.Error(), "Out of Range Error: Overflow in ")
}
