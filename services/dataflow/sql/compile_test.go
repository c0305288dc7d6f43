package sql_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

var catalog = sql.Catalog{
	"matches":       {"token", "ladder", "mirror", "average_rating", "map", "server", "duration"},
	"match_players": {"token", "match", "rating", "civ", "winner"},
	"dup":           {"a", "a", "b"},
}

// TestRefused: every construct outside the subset, and every unknown name,
// is an *Error naming the construct and where it starts.
func TestRefused(t *testing.T) {
	cases := []struct {
		query, construct string
		line, col        int
	}{
		{"insert into matches values (1)", "INSERT statement", 1, 1},
		{"select token from nope", "table nope", 1, 19},
		{"select nope from matches", "column nope", 1, 8},
		{"select token\nfrom matches\nwhere  bogus = 1", "column bogus", 3, 8},
		{"select m.token from matches as t", "column m.token", 1, 8},
		{"select m.token from matches m left join match_players p on m.token = p.match and p.rating > 5", "LEFT JOIN condition", 1, 82},
		{"select m.token from matches m full join match_players p on m.token = p.match or m.token = p.civ", "FULL JOIN condition", 1, 60},
		{"select m.token from matches m, match_players p join matches n on p.match = n.token", "comma join", 1, 48},
		{"select m.token from matches m natural join match_players p", "NATURAL JOIN", 1, 31},
		{"select token from matches m join match_players p using (nope)", "USING nope", 1, 29},
		{"select token from matches m join matches n using (token, token)", "USING token", 1, 29},
		{"select token from matches m full join matches n using (token) group by m.token", "column token", 1, 8},
		{"select m.token from matches m join match_players p on m.token < p.match", "JOIN condition", 1, 52},
		{"select md5(token) from matches", "function MD5", 1, 8},
		{"select token from matches where mirror is true", "IS TRUE/FALSE", 1, 40},
		{"select count(distinct token), count(distinct map) from matches", "COUNT(DISTINCT ...)", 1, 31},
		{"select count(distinct token), avg(average_rating) from matches", "AVG", 1, 31},
		{"select map, count(*) filter (where average_rating) from matches group by map", "FILTER (WHERE ...)", 1, 36},
		{"select token from matches limit 1 offset 'x'", "OFFSET", 1, 35},
		// WITH and subqueries in FROM: what PostgreSQL refuses, and RECURSIVE.
		{"with recursive q as (select token from matches) select token from q", "WITH RECURSIVE", 1, 6},
		{"with q(a, b) as (select token from matches) select a from q", "common table expression q", 1, 7},
		{"with q as (select token from matches), q as (select map from matches) select token from q", "WITH q", 1, 40},
		{"with q as (select token from matches)\nselect token from (select nope from q) x", "column nope", 2, 27},
		{"with q as (select nope from matches) select token from matches", "column nope", 1, 19}, // checked though unused
		{"with a as (select token from b), b as (select token from matches) select token from a", "table b", 1, 30},
		{"with a as (select token from a) select token from a", "table a", 1, 30}, // not recursive: a is not in scope in its body
		{"select token from (select token, map from matches) as x(a, b, c)", "subquery x", 1, 56},
		{"select token from (select token, map from matches) as x(a, a)", "subquery x", 1, 56},
		{"select a from (select token as a, map as a from matches) x", "column a", 1, 8},
		{"select x.token from (select token from matches) x join (select token from matches) x on x.token = x.token", "table x", 1, 56},
		{"select token from matches m where exists (select 1 from match_players p where p.match = m.token)", "correlated subquery", 1, 89},
		{"select token from matches where token = (select token, map from matches)", "subquery", 1, 42},
		{"select token from matches m where m.map not in (select p.civ from match_players p where p.civ = m.map)", "correlated subquery", 1, 97},
		{"select m.token from matches m join match_players p on m.token = p.match and p.rating > (select avg(rating) from match_players)", "JOIN condition", 1, 77},
		{"select token, count(*) from matches", "column token", 1, 8},
		{"select token from matches where count(*) > 1", "aggregate COUNT", 1, 33},
		{"select token from matches where average_rating > 1 and average_rating = 'x'", "comparison =", 1, 71},
		{"select token from matches where mirror and mirror > 1", "comparison >", 1, 51},
		{"select a from dup", "column a", 1, 8},
		{"select token from matches where average_rating > 1e3", "literal 1e3", 1, 50},
		{"select token from matches where average_rating > 1" + strings.Repeat("0", 38), "number", 1, 50}, // 39 digits: past the bound
		{"select token from matches where average_rating > 0." + strings.Repeat("0", 38) + "1", "number", 1, 50},
		{"select token from\n  matches order by", "syntax", 2, 19},
		// Window functions: in the SELECT list and ORDER BY only, not
		// nested, of the subset's functions.
		{"select token from matches where rank() over (order by token) = 1", "RANK() OVER (...)", 1, 33},
		{"select ntile(2) over (order by token) from matches", "NTILE() OVER (...)", 1, 8},
		{"select lag(token, -1) over (order by token) from matches", "LAG() OVER (...)", 1, 19},
		{"select lead(token, 1, map) over (order by token) from matches", "LEAD() OVER (...)", 1, 23},
		{"select lead(average_rating, 1, 'x') over (order by token) from matches", "LEAD() OVER (...)", 1, 32},
		{"select sum(count(*) over ()) from matches", "COUNT() OVER (...)", 1, 12},
		{"select rank() over (order by row_number() over ()) from matches", "ROW_NUMBER() OVER (...)", 1, 30},
		{"select count(distinct token) over () from matches", "COUNT() OVER (...)", 1, 8},
		{"select rank(token) over () from matches", "RANK() OVER (...)", 1, 8},
		{"select sum(token) over () from matches", "SUM", 1, 8},
		{"select token from matches group by rank() over ()", "RANK() OVER (...)", 1, 36},
		{"select token from matches where token & 1", "operator &", 1, 39},
		{"select duration_seconds(token || 'x') from matches", "DURATION_SECONDS", 1, 8},
		{"select distinct token from matches order by ladder", "ORDER BY", 1, 45},
		{"select 1", "SELECT without FROM", 1, 1},
		{"set````", "backquote", 1, 4}, // MySQL's quotes
		{"select civ from match_players where match in (select nope from matches)", "column nope", 1, 54},
		{"select civ from match_players where match in (select token, map from matches)", "subquery", 1, 47},
		{"select civ from match_players where rating > 5 and rating in (select mirror from matches where mirror)", "IN (SELECT ...)", 1, 59},
		// GROUP BY 2 is a position (the DuckDB differential test found it
		// read as one group of the constant 2): the item's expression.
		{"select 2, count(*) from match_players group by 2", "aggregate COUNT", 1, 11},
		{"select civ, count(*) from match_players group by 3", "GROUP BY position", 1, 50},
		{"select civ, count(*) from match_players group by 0", "GROUP BY position", 1, 50},
		{"select *, 1 from match_players group by 2", "*", 1, 8},
		// A GROUP BY name is an input column, else a SELECT alias.
		{"select civ as c, count(*) as n from match_players group by n", "aggregate COUNT", 1, 18},
		{"select civ as b, rating as b from match_players group by b", "GROUP BY b", 1, 58},
		{"select civ as c from match_players group by band", "column band", 1, 45},
		{"select civ as rating, count(*) from match_players group by rating", "column civ", 1, 8}, // the input column wins
		// PostgreSQL's dialect: MySQL's spellings named, casts that convert refused.
		{`select token from matches where map = "arabia"`, "column arabia", 1, 39},
		{"select token from matches where average_rating::float > 1", "CAST to FLOAT", 1, 33},
		{"select token from matches where average_rating::numeric(40, 2) > 1", "CAST to NUMERIC(40,2)", 1, 33},
		{"select token from matches where average_rating::decimal(3, 4) > 1", "CAST to DECIMAL(3,4)", 1, 33},
		{"select mirror::int from matches", "CAST", 1, 8},
		{"select token from matches where average_rating::numeric > 1 and average_rating::text = 'x'", "CAST", 1, 65},
		{"select token from matches where average_rating between symmetric 1 and 2", "BETWEEN SYMMETRIC", 1, 56},
		{"select token from matches where average_rating between 1 and 'x'", "comparison <=", 1, 48},
		{"select order from matches", "syntax", 1, 8},
		{"select coalesce(average_rating, 'x') from matches where average_rating > 1", "COALESCE", 1, 33},
		{"select coalesce() from matches", "COALESCE", 1, 8},
		{"select nullif(map) from matches", "NULLIF", 1, 8},
		{"select nullif(map, 1, 2) from matches", "NULLIF", 1, 8},
		{"select token from matches where average_rating + 1 like '1%'", "LIKE", 1, 52},
		{"select token from matches where map not ilike map", "NOT ILIKE", 1, 47},
		{"select token from matches where map like 'a\\'", "LIKE", 1, 42},
		{"select starts_with(map) from matches", "STARTS_WITH", 1, 8},
		{"select map || 1 from matches", "operator ||", 1, 12},
		{"select substr(map) from matches", "SUBSTR", 1, 8},
		{"select substr(map, 'x') from matches", "SUBSTR", 1, 20},
		{"select length(map, 1) from matches", "LENGTH", 1, 8},
		{"select round(average_rating + 1, map) from matches", "ROUND", 1, 34},
		{"select round(average_rating + 1, 1.5) from matches", "ROUND", 1, 34},
		{"select round(average_rating + 1, 39) from matches", "ROUND", 1, 34},
		{"select abs(map || 'x') from matches", "ABS", 1, 12},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			root, err := sql.Compile(c.query, catalog)
			var e *sql.Error
			if !errors.As(err, &e) {
				t.Fatalf("Compile = %v, %v; want an *Error\n%v", err, err, root)
			}
			if e.Construct != c.construct || e.Line != c.line || e.Col != c.col {
				t.Errorf("got %q at %d:%d (%s), want %q at %d:%d", e.Construct, e.Line, e.Col, e.Message, c.construct, c.line, c.col)
			}
			if !strings.HasPrefix(e.Error(), "") || e.Message == "" {
				t.Errorf("no message: %+v", e)
			}
		})
	}
}

// TestAccepted compiles the forms of the subset and checks the kinds the
// columns are read as.
func TestAccepted(t *testing.T) {
	cases := []struct {
		query string
		scans string // the scans' output columns, in plan order
	}{
		{"select token from matches", "token text"},
		{"select * from matches where average_rating >= 2000.5", "token text,ladder text,mirror bool,average_rating number,map text,server text,duration duration"},
		{"select token, duration_seconds(duration) / 60 as minutes from matches where not mirror or mirror is null", "token text,mirror bool,duration duration"},
		{"select m.map, count(*), avg(p.rating) from matches m join match_players p on p.match = m.token group by m.map having min(p.civ) <> 'x' order by 2 desc limit 3", "token text,map text|match text,rating number,civ text"},
		{"select civ, sum(case winner when true then 1 else 0 end) from match_players where civ in ('a', 'b') and -rating < 5 group by civ", "rating number,civ text,winner bool"},
		{"select distinct ladder from matches where token in (select match from match_players where winner) order by ladder", "token text,ladder text|match text,winner bool"},
		// PostgreSQL's dialect: match a plain name, "name" a name, names
		// folded to lower case, casts stating a column's kind.
		{"select match, count(*) from match_players group by match", "match text"},
		// GROUP BY positions and SELECT aliases (not input columns' names).
		{"select civ, count(*) from match_players group by 1 order by 2 desc", "civ text"},
		{"select case when rating > 1 then 'hi' else 'lo' end as band, count(*) from match_players group by band order by band", "rating number"},
		{`SELECT "civ" FROM match_players WHERE "civ" = 'Huns' AND CIV <> ''`, "civ text"},
		{"select civ from match_players where rating::numeric > 1 and cast(winner as boolean) and civ::text <> '' and rating > '2'::numeric", "rating number,civ text,winner bool"},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			root, err := sql.Compile(c.query, catalog)
			if err != nil {
				t.Fatal(err)
			}
			if got := scanColumns(root); got != c.scans {
				t.Errorf("scans %q, want %q\n%s", got, c.scans, root)
			}
			// A plan is data: it survives JSON unchanged.
			js, err := plan.Encode(root)
			if err != nil {
				t.Fatal(err)
			}
			back, err := plan.Decode(js)
			if err != nil {
				t.Fatal(err)
			}
			if back.String() != root.String() {
				t.Errorf("JSON round trip changed the plan:\n%s\n%s", root, back)
			}
		})
	}
}

// FuzzParse: any text compiles to a plan or to an *Error, never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"select token from matches",
		"select civ, count(*) from match_players where match in (select token from matches where not mirror) group by civ having count(*) > 1 order by 2 desc limit 5",
		"select row_number() over (order by count(*) desc, civ) as rank, civ, count(*) as players from match_players group by civ order by players desc, civ limit 5",
		"select case when rating > 1 then rating / 3 else -rating end from match_players",
		"select m.token from matches m join match_players p on m.token = p.match",
		"select percent(sum(rating), count(*)) from match_players",
		"with a(t) as (select token from matches), b as (select t from a where t in (select t from a)) select x.t from b x join (select t, count(*) as n from a group by t) y on x.t = y.t",
		"select",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		root, err := sql.Compile(q, catalog)
		if err == nil {
			if root == nil {
				t.Fatal("no plan and no error")
			}
			_ = root.String()
			return
		}
		var e *sql.Error
		if !errors.As(err, &e) {
			t.Fatalf("%q: error %v is not an *Error", q, err)
		}
		if e.Line < 1 || e.Col < 1 {
			t.Fatalf("%q: position %d:%d", q, e.Line, e.Col)
		}
	})
}

// TestExprLimits: a query at MaxExprDepth and MaxExprNodes compiles; one
// level or one node more is refused, naming the limit and where.
func TestExprLimits(t *testing.T) {
	const where = "select token from match_players where " // 38 bytes
	repeat := strings.Repeat
	parens := func(d int) string { return where + repeat("(", d) + "rating" + repeat(")", d) + " > 1" }
	// The comparison, d minus signs, the column: d+2 levels.
	neg := func(d int) string { return where + repeat("-(", d) + "rating" + repeat(")", d) + " > 1" }
	// The comparison, d additions (left-deep), the column: d+2.
	chain := func(d int) string { return where + "rating" + repeat(" + 1", d) + " > 1" }
	// d NOTs, the column: d+1.
	not := func(d int) string { return where + repeat("not ", d) + "winner" }
	// The select item, the comparison, its column, the tuple and its d
	// values: d+4 nodes.
	in := func(d int) string {
		vals := make([]string, d)
		for i := range vals {
			vals[i] = strconv.Itoa(i)
		}
		return where + "rating in (" + strings.Join(vals, ", ") + ")"
	}
	cases := []struct {
		name, query string
		construct   string // "" when accepted
		line, col   int
	}{
		{"parentheses at the limit", parens(sql.MaxExprDepth), "", 0, 0},
		{"parentheses past it", parens(sql.MaxExprDepth + 1), "expression depth", 1, 39 + sql.MaxExprDepth},
		{"minus signs at the limit", neg(sql.MaxExprDepth - 2), "", 0, 0},
		{"minus signs past it", neg(sql.MaxExprDepth - 1), "expression depth", 1, 39 + 2*(sql.MaxExprDepth-1)}, // at the column
		{"a chain of additions at the limit", chain(sql.MaxExprDepth - 2), "", 0, 0},
		{"a chain of additions past it", chain(sql.MaxExprDepth - 1), "expression depth", 1, 39}, // at the column
		{"NOTs at the limit", not(sql.MaxExprDepth - 1), "", 0, 0},
		{"NOTs past it", not(sql.MaxExprDepth), "expression depth", 1, 39 + 4*sql.MaxExprDepth}, // at the column
		{"an IN list at the node limit", in(sql.MaxExprNodes - 4), "", 0, 0},
		{"an IN list past it", in(sql.MaxExprNodes - 3), "expression size", 1, strings.LastIndex(in(sql.MaxExprNodes-3), " ") + 2}, // at its last value
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, err := sql.Compile(c.query, catalog)
			if c.construct == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if root == nil {
					t.Fatal("no plan")
				}
				return
			}
			var e *sql.Error
			if !errors.As(err, &e) {
				t.Fatalf("Compile = %v; want an *Error", err)
			}
			limit := strconv.Itoa(sql.MaxExprDepth)
			if c.construct == "expression size" {
				limit = strconv.Itoa(sql.MaxExprNodes)
			}
			if e.Construct != c.construct || e.Line != c.line || e.Col != c.col || !strings.Contains(e.Message, limit) {
				t.Errorf("got %v, want %q at %d:%d naming %s", e, c.construct, c.line, c.col, limit)
			}
		})
	}
}

// TestColumnHints: an unknown column's error says what was meant: the
// column of another case (quote it), the closest name, a text written
// in double quotes.
func TestColumnHints(t *testing.T) {
	cat := sql.Catalog{"t": {"Civ", "rating", "winner"}}
	cases := []struct{ query, hint string }{
		{"select civ from t", `table t has Civ: unquoted names are lower case, quote it: "Civ"`},
		{"select ratng from t", "did you mean rating?"},
		{`select rating from t where winner = "yes"`, `a text is written in single quotes: 'yes'`},
		// A table's name: the catalog's, or a CTE's in scope.
		{"select civ from tt", "no such table; did you mean t?"},
		{"with players as (select rating from t) select rating from player", "no such table; did you mean players?"},
		{"select civ from elsewhere", "no such table"},
	}
	for _, c := range cases {
		_, err := sql.Compile(c.query, cat)
		var e *sql.Error
		if !errors.As(err, &e) || !strings.Contains(e.Message, c.hint) {
			t.Errorf("%q: %v; want a hint %q", c.query, err, c.hint)
		}
	}
}
