package parse

import (
	"strings"
	"testing"
)

// TestParse: the forms of the grammar parse into the tree, rendered back.
func TestParse(t *testing.T) {
	cases := []struct{ query, where string }{
		{"select match from match_players where civ = 'Huns'", "civ = 'Huns'"},
		{`SELECT "civ" FROM t WHERE "civ" = 'it''s' AND CIV <> ''`, "civ = 'it''s' and civ <> ''"},
		{"select a from t where not a and b or c", "not a and b or c"},
		{"select a from t where (a or b) and c", "(a or b) and c"},
		{"select a from t where a + b * c - (d - e) > -f", "a + b * c - (d - e) > -f"},
		{"select a from t where a is not null and b isnull", "a is not null and b is null"},
		{"select a from t where x::numeric > cast(y as numeric(10,2))", "x::numeric > y::numeric(10,2)"},
		{"select a from t where a not in (1, 2) and b in (select c from u)", "a not in (1, 2) and b in (select c from u)"},
		{"select a from t where a between 1 and 2 and b not like 'x%'", "a between 1 and 2 and b not like 'x%'"},
		{"select a from t where case when a then 1 else 0 end = 1", "case when a then 1 else 0 end = 1"},
		{"select a from t where count(*) filter (where a) > 1", "count(*) filter (where a) > 1"},
		{"select a from t where a || 'x' = 'y' -- comment\n", "a || 'x' = 'y'"},
		{"select a from t where /* a /* nested */ comment */ a != b", "a <> b"},
		{"select a from t where rank = server and map = \"Select\"", `rank = server and map = "Select"`},
	}
	for _, c := range cases {
		s, err := Parse(c.query, 128)
		if err != nil {
			t.Errorf("%q: %v", c.query, err)
			continue
		}
		if got := String(s.Where); got != c.where {
			t.Errorf("%q: WHERE %q, want %q", c.query, got, c.where)
		}
	}
}

// TestClauses: a SELECT's clauses, joins and windows.
func TestClauses(t *testing.T) {
	q := "SELECT DISTINCT m.map AS \"Map\", count(*) n, row_number() over (partition by m.map order by count(*) desc) " +
		"FROM matches m JOIN match_players AS p ON p.match = m.token LEFT OUTER JOIN x USING (a) " +
		"WHERE m.mirror GROUP BY m.map HAVING count(*) > 1 ORDER BY 2 DESC NULLS LAST, 1 OFFSET 2 LIMIT 5;"
	s, err := Parse(q, 128)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Distinct || len(s.Items) != 3 || s.Items[0].Alias != "Map" || s.Items[1].Alias != "n" {
		t.Errorf("items: %+v", s.Items)
	}
	if got := String(s.Items[2].Expr); got != "row_number() over (partition by m.map order by count(*) desc)" {
		t.Errorf("window: %s", got)
	}
	j, ok := s.From[0].(*Join)
	if !ok || j.Kind != "LEFT JOIN" || len(j.Using) != 1 {
		t.Fatalf("from: %#v", s.From[0])
	}
	inner := j.Left.(*Join)
	if inner.Kind != "JOIN" || String(inner.On) != "p.match = m.token" || inner.Right.(*TableName).Alias != "p" {
		t.Errorf("join: %#v", inner)
	}
	if len(s.OrderBy) != 2 || !s.OrderBy[0].Desc || s.OrderBy[0].Nulls != "last" || String(s.Limit) != "5" || String(s.Offset) != "2" {
		t.Errorf("order, limit: %+v %v %v", s.OrderBy, s.Limit, s.Offset)
	}
}

// TestFetch: the SQL standard's FETCH {FIRST | NEXT} [n] {ROW | ROWS}
// ONLY is a LIMIT (n 1 when left out), before or after OFFSET.
func TestFetch(t *testing.T) {
	for q, want := range map[string]string{
		"select a from t fetch first 3 rows only":                       "3 <nil>",
		"select a from t order by a nulls first fetch next row only":    "1 <nil>",
		"select a from t offset 2 rows fetch first 10 rows only":        "10 2",
		"select a from t fetch first 5 row only offset 1":               "5 1",
		"select a from t order by a desc fetch first (2 + 1) rows only": "2 + 1 <nil>",
	} {
		s, err := Parse(q, 128)
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		offset := "<nil>"
		if s.Offset != nil {
			offset = String(s.Offset)
		}
		if got := String(s.Limit) + " " + offset; got != want {
			t.Errorf("%q: LIMIT, OFFSET %q, want %q", q, got, want)
		}
	}
}

// TestWith: WITH's CTEs (column lists, MATERIALIZED read and dropped)
// and subqueries in FROM with their aliases' column lists, where a
// SELECT may stand: the statement, a CTE, a subquery.
func TestWith(t *testing.T) {
	q := "WITH a(x, y) AS MATERIALIZED (SELECT 1, 2 FROM t), b AS NOT MATERIALIZED (WITH c AS (SELECT z FROM a) SELECT z FROM c) " +
		"SELECT s.p FROM (SELECT x FROM a) AS s(p) JOIN (SELECT z FROM b) q ON s.p = q.z WHERE s.p IN (WITH d AS (SELECT 1 FROM t) SELECT 1 FROM d)"
	s, err := Parse(q, 128)
	if err != nil {
		t.Fatal(err)
	}
	if s.Pos != 0 || s.With == nil || len(s.With.CTEs) != 2 {
		t.Fatalf("with: %+v", s.With)
	}
	a, b := s.With.CTEs[0], s.With.CTEs[1]
	if a.Name != "a" || strings.Join(a.Columns, ",") != "x,y" || a.ColPos != 6 || a.Pos != 5 || len(a.Select.Items) != 2 {
		t.Errorf("a: %+v", a)
	}
	if b.Name != "b" || b.Columns != nil || b.ColPos != -1 || b.Select.With == nil || b.Select.With.CTEs[0].Name != "c" {
		t.Errorf("b: %+v", b)
	}
	j := s.From[0].(*Join)
	l, r := j.Left.(*Derived), j.Right.(*Derived)
	if l.Alias != "s" || strings.Join(l.Columns, ",") != "p" || r.Alias != "q" || r.Columns != nil || r.ColPos != -1 {
		t.Errorf("derived: %+v %+v", l, r)
	}
	if in := s.Where.(*In); in.Sub == nil || in.Sub.With == nil {
		t.Errorf("IN (WITH ...): %+v", s.Where)
	}
}

// TestErrors: a syntax error names the token and where it is; a
// construct outside the subset, or MySQL's spelling, is named.
func TestErrors(t *testing.T) {
	cases := []struct {
		query, construct, msg string
		pos                   int
	}{
		{"select a from t where", "syntax", "syntax error at end of input", 21},
		{"select a from t order by", "syntax", "end of input", 24},
		{"select a, from t", "syntax", `syntax error at or near "from"`, 10},
		{"select `match` from t", "backquote", `write "match"`, 7},
		{"select a from t where a = 'x", "syntax", "unterminated", 26},
		{"select order from t", "syntax", `quote it: "order"`, 7},
		{"(select a from t limit 1) order by a", "ORDER", "parenthesized", 26},
		{"select a from t order by a union select a from t", "syntax", `"union"`, 27},
		{"with q as (insert into t values (1)) select a from q", "INSERT statement", "a common table expression is a SELECT", 11},
		{"with recursive r(n) as (select 1 union all select n + 1 from r) select n from r", "WITH RECURSIVE", "recursive common table expressions are not supported", 5},
		{"with q as select a from t select a from q", "syntax", `syntax error at or near "select": expected "("`, 10},
		{"insert into t values (1)", "INSERT statement", "only SELECT", 0},
		{"select extract(year d) from t", "syntax", `expected FROM`, 20},
		{"select position('_' in a) from t", "function POSITION", "not supported", 7},
		{"select a from t fetch first 2 rows with ties", "FETCH ... WITH TIES", "not supported", 35},
		{"select a from t limit 1 fetch first 2 rows only", "FETCH", "one LIMIT or FETCH", 24},
		{"select a from t fetch first 2 only", "syntax", "expected ROW or ROWS", 30},
		{"select a from t fetch 2 rows only", "syntax", "expected FIRST or NEXT", 22},
		{"select a from t where a = any (select b from u)", "ANY/ALL", "", 26},
		{"select 1x from t", "number 1x", "trailing junk", 7},
		{"select a from t where d < current_date", "function CURRENT_DATE", "not supported", 26},
		{"select a from t where a = $1", "$", "parameters", 26},
		{"select sum(a) over (order by a rows between 1 preceding and current row) from t", "window frame", "", 31},
		{"select " + strings.Repeat("(", 1000) + "a" + strings.Repeat(")", 1000) + " from t", "expression depth", "128", 0},
		{"select a from " + strings.Repeat("(", 1000) + "t" + strings.Repeat(")", 1000), "expression depth", "128", 0},
	}
	for _, c := range cases {
		_, err := Parse(c.query, 128)
		if err == nil {
			t.Errorf("%q: parsed", c.query)
			continue
		}
		if err.Construct != c.construct || !strings.Contains(err.Message, c.msg) || c.construct != "expression depth" && err.Pos != c.pos {
			t.Errorf("%q: %v; want %s at %d saying %q", c.query, err, c.construct, c.pos, c.msg)
		}
	}
}

// BenchmarkParse: a 150-byte query and a 2 KB one.
func BenchmarkParse(b *testing.B) {
	for name, q := range benchQueries() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Parse(q, 128); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchQueries() map[string]string {
	q150 := "SELECT match, civ, COUNT(*) AS n FROM match_players WHERE \"civ\" = 'Huns' AND rating > 1200 GROUP BY match, civ ORDER BY n DESC LIMIT 10"
	var b strings.Builder
	b.WriteString("SELECT m.match, p.civ, COUNT(*) AS n, AVG(p.rating) AS r FROM matches m JOIN match_players p ON m.token = p.match WHERE ")
	for b.Len() < 2000 {
		b.WriteString("(p.rating > 1000 AND p.civ IN ('Huns', 'Franks', 'Mayans')) OR ")
	}
	b.WriteString("true GROUP BY m.match, p.civ HAVING COUNT(*) > 3 ORDER BY n DESC LIMIT 10")
	return map[string]string{"150B": q150, "2KB": b.String()}
}

// TestReservedWords: PostgreSQL's reserved words are names only quoted;
// every other word, the match, rank, server and map among them,
// is a plain name, as a column, a table and an alias.
func TestReservedWords(t *testing.T) {
	for w := range reserved {
		// (SELECT DISTINCT and SELECT ALL parse, and true, false and null
		// are values.)
		if _, err := Parse("select "+w+" from t", 128); err == nil && !strings.Contains(" distinct all true false null ", " "+w+" ") {
			t.Errorf("%s: a column unquoted", w)
		}
		if _, err := Parse(`select "`+w+`" from t`, 128); err != nil {
			t.Errorf("%s quoted: %v", w, err)
		}
	}
	for w := range typeFunc { // names of functions, not of columns
		if _, err := Parse("select "+w+" from t", 128); err == nil {
			t.Errorf("%s: a column unquoted", w)
		}
	}
	if _, err := Parse("select left(a, 2) from t", 128); err != nil {
		t.Errorf("left(...): %v", err)
	}
	for _, w := range []string{"match", "rank", "server", "map", "year", "text", "value", "first", "last", "filter", "over", "partition"} {
		q := "select " + w + ", t." + w + " as " + w + " from " + w + " t where " + w + " = 1 group by " + w + " order by " + w
		s, err := Parse(q, 128)
		if err != nil {
			t.Errorf("%s: %v", w, err)
			continue
		}
		if c, ok := s.Items[0].Expr.(*Column); !ok || c.Name != w {
			t.Errorf("%s: item %#v", w, s.Items[0].Expr)
		}
	}
}
