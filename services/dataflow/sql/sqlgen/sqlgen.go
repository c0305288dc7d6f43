package sqlgen

import (
	"bytes"
	"cmp"
	"fmt"
	"math/big"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Table is one generated table: its name, its columns and its CSV text
// (a header row, then the rows, each line ending in "\n").
type Table struct {
	Name    string
	Columns []string
	CSV     string
}

// Case is one generated test case.
type Case struct {
	Seed   uint64
	Tables []Table // t, then u
	// Query is the query, one text that Wololo and DuckDB both run: its
	// ORDER BY makes the order total as docs/sql.md defines it (the
	// random keys, then every output column ascending; NULL sorts last
	// in both), then its LIMIT.
	Query string
	// Want is the rows Query returns by the naive evaluator, as the
	// engine writes them (docs/sql.md "Output"), without the header row.
	Want string
	// Subquery says that Query reads t through a subquery in FROM or a
	// CTE (GenerateWith's Options.Subqueries).
	Subquery bool
	// SetOps says that Query holds a construct of Options.SetOps.
	SetOps bool
	// Windows says that Query holds window functions (Options.Windows).
	Windows bool
	// ExprSubquery says that Query holds a subquery of an expression
	// (Options.ExprSubqueries).
	ExprSubquery bool
	// Functions says that Query holds a construct of Options.Functions.
	Functions bool
}

// Generate makes the case of a seed: the same seed, the same case.
func Generate(seed uint64) Case { return GenerateWith(seed, Options{}) }

// val is a value of the naive evaluator.
type val struct {
	null  bool
	kind  byte // 't' text, 'n' number, 'b' bool
	text  string
	num   *big.Rat
	scale int
	b     bool
}

var numberRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

func readNum(s string) val {
	if !numberRE.MatchString(s) {
		return val{null: true, kind: 'n'}
	}
	r, _ := new(big.Rat).SetString(s)
	scale := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		scale = len(s) - i - 1
	}
	return bounded(val{kind: 'n', num: r, scale: scale})
}

// maxDigits is docs/sql.md's bound of a number: at most 38 digits, those
// after the point included.
const maxDigits = 38

// bounded is v, or NULL when v is a number of more than maxDigits digits
// at its scale (docs/sql.md "Numbers": a number read or computed past the
// bound is NULL).
func bounded(v val) val {
	if v.null || v.kind != 'n' {
		return v
	}
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(maxDigits), nil)
	unscaled := new(big.Rat).Mul(v.num, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(v.scale)), nil)))
	if v.scale > maxDigits || new(big.Int).Abs(unscaled.Num()).Cmp(limit) >= 0 {
		return val{null: true, kind: 'n'}
	}
	return v
}

func readBool(s string) val {
	switch strings.ToLower(s) {
	case "true", "1":
		return val{kind: 'b', b: true}
	case "false", "0":
		return val{kind: 'b'}
	}
	return val{null: true, kind: 'b'}
}

func (v val) format() string {
	switch {
	case v.null:
		return ""
	case v.kind == 'n':
		s := v.num.FloatString(v.scale)
		if strings.Trim(s, "-0.") == "" {
			s = strings.TrimPrefix(s, "-")
		}
		return s
	case v.kind == 'b':
		return fmt.Sprint(v.b)
	}
	return v.text
}

// key is the value's grouping identity: numbers by value.
func (v val) key() string {
	if v.null {
		return "\x00"
	}
	if v.kind == 'n' {
		return "n" + v.num.RatString()
	}
	return string(v.kind) + v.format()
}

// compareVals orders two values of one kind, NULL last.
func compareVals(a, b val) int {
	switch {
	case a.null && b.null:
		return 0
	case a.null:
		return 1
	case b.null:
		return -1
	case a.kind == 'n':
		return a.num.Cmp(b.num)
	case a.kind == 'b':
		return cmp.Compare(btoi(a.b), btoi(b.b))
	}
	return strings.Compare(a.text, b.text)
}

// compareScales orders equal values as they are written: numbers by
// their scale, the smaller first (1007 before 1007.0), so that rows equal
// by value are ordered whatever order they came in (docs/sql.md
// "Output").
func compareScales(a, b val) int {
	if a.null || a.kind != 'n' {
		return 0
	}
	return cmp.Compare(a.scale, b.scale)
}

// normalRow is row with its numbers written without trailing zeros, as
// a group key or a DISTINCT row is.
func normalRow(row []val) []val {
	out := slices.Clone(row)
	for i, v := range out {
		if v.kind == 'n' && !v.null {
			out[i].scale = minScale(v.num)
		}
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// expr is a generated expression: its SQL and its meaning over a row.
type expr struct {
	sql  string
	kind byte
	eval func(row map[string]val) val
}

// gen makes random queries over tables t(k, n, b, s) and u(k, m).
type gen struct {
	r    *rand.Rand
	opts Options
	with []string // the query's CTEs, for WITH
	// subquery: the query reads t through a subquery in FROM or a CTE
	subquery bool
	// setops: the query holds a construct of Options.SetOps
	setops bool
	// uRows are u's rows, which the subqueries of expressions read
	// (exprsubquery.go); exprSub: the query holds one.
	uRows   []map[string]val
	exprSub bool
	// joinItems are the columns the joins of Options.Joins add to the
	// SELECT list (join.go).
	joinItems []expr
	// windows: the query holds window functions (Options.Windows)
	windows bool
	// functions: the query holds a construct of Options.Functions
	functions bool
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

var tableT = []string{"k", "n", "b", "s", "d"}
var tableU = []string{"k", "m"}

var pools = map[string][]string{
	"k": {"a", "b", "c", "\xff\xfe", ""},
	"n": {"1", "2", "2.50", "-3", "0", "99999999999999999999.5", "", "x", "1e3", "7.25", "-0.00", "12345678901234567.891"},
	"b": {"true", "FALSE", "1", "0", "", "yes"},
	"d": {"0:01:02", "1 day, 2:03:04", "12 days, 10:00:00", "1:75:00", "", "bad", "12:00", "007 days, 0:00:01", "123456789012345678 days, 0:00:01"},
	"s": {"x", "y,z", `q"`, "", "x", "\xe9t\xe9", "été", "X"},
	"m": {"1", "2.0", "", "-1", "3"},
}

// column reads column c of alias a as its kind.
func column(a, c string) expr {
	kind := map[string]byte{"k": 't', "s": 't', "n": 'n', "m": 'n', "b": 'b'}[c]
	name := a + "." + c
	return expr{sql: name, kind: kind, eval: func(row map[string]val) val {
		if row[name].null { // an outer join's NULL (join.go)
			return val{null: true, kind: kind}
		}
		raw := row[name].text
		switch kind {
		case 'n':
			return readNum(raw)
		case 'b':
			return readBool(raw)
		}
		return val{kind: 't', text: raw}
	}}
}

var durationRE = regexp.MustCompile(`^(?:([0-9]+) days?, )?([0-9]{1,2}):([0-9]{2}):([0-9]{2})$`)

// duration is DURATION_SECONDS(name): the column read by the duration
// rule of docs/queries.md, in seconds, exactly however many the days.
func duration(name string) expr {
	return expr{sql: "DURATION_SECONDS(" + name + ")", kind: 'n', eval: func(row map[string]val) val {
		m := durationRE.FindStringSubmatch(row[name].text)
		if m == nil {
			return val{null: true, kind: 'n'}
		}
		secs := new(big.Int)
		for i, unit := range []int64{86400, 3600, 60, 1} {
			part, _ := new(big.Int).SetString("0"+m[i+1], 10)
			secs.Add(secs, part.Mul(part, big.NewInt(unit)))
		}
		return bounded(val{kind: 'n', num: new(big.Rat).SetInt(secs)})
	}}
}

// wideInt is an integer wider than an int64 (and a double's 53 bits).
// Written as an integer, DuckDB types it HUGEINT, which it widens to a
// DECIMAL(38, 0) in a CASE or beside a DECIMAL, rounding the other
// operand to scale 0; so the queries write it wideInt.0, which both
// engines read as a decimal of scale 1 (a DECIMAL(22, 1) in DuckDB).
const wideInt = "100000000000000000000"

// number is a number expression over t's columns.
func (g *gen) number(depth int) expr {
	if depth <= 0 || g.r.IntN(3) == 0 {
		if g.opts.ExprSubqueries && g.r.IntN(5) == 0 {
			return g.scalarSubquery()
		}
		if g.r.IntN(3) == 0 {
			lit := g.pick("2", "0.5", "10", "-1", wideInt+".0")
			v := readNum(strings.TrimPrefix(lit, "-"))
			if strings.HasPrefix(lit, "-") {
				v.num.Neg(v.num)
			}
			return expr{sql: lit, kind: 'n', eval: func(map[string]val) val { return v }}
		}
		if g.r.IntN(5) == 0 {
			return duration("t.d")
		}
		return column("t", "n")
	}
	if g.opts.Functions && g.r.IntN(4) == 0 {
		return g.functionNumber(depth - 1) // functions.go
	}
	switch g.r.IntN(7) {
	case 0: // CASE, with or without ELSE
		return g.caseNumber(depth - 1)
	case 5: // COALESCE of two or three
		args := []expr{g.number(depth - 1), g.number(depth - 1)}
		if g.r.IntN(3) == 0 {
			args = append(args, g.number(depth-1))
		}
		texts := make([]string, len(args))
		for i, a := range args {
			texts[i] = a.sql
		}
		return expr{sql: "COALESCE(" + strings.Join(texts, ", ") + ")", kind: 'n', eval: func(row map[string]val) val {
			for _, a := range args {
				if x := a.eval(row); !x.null {
					return x
				}
			}
			return val{null: true, kind: 'n'}
		}}
	case 6: // NULLIF: NULL where equal, else the first
		a, b := g.number(depth-1), g.number(depth-1)
		return expr{sql: "NULLIF(" + a.sql + ", " + b.sql + ")", kind: 'n', eval: func(row map[string]val) val {
			x, y := a.eval(row), b.eval(row)
			if !x.null && !y.null && x.num.Cmp(y.num) == 0 {
				return val{null: true, kind: 'n'}
			}
			return x
		}}
	case 1:
		a := g.number(depth - 1)
		return expr{sql: "-(" + a.sql + ")", kind: 'n', eval: func(row map[string]val) val {
			x := a.eval(row)
			if !x.null {
				x.num = new(big.Rat).Neg(x.num)
			}
			return x
		}}
	}
	a, b := g.number(depth-1), g.number(depth-1)
	op := g.pick("+", "-", "*")
	return expr{sql: "(" + a.sql + " " + op + " " + b.sql + ")", kind: 'n', eval: func(row map[string]val) val {
		x, y := a.eval(row), b.eval(row)
		if x.null || y.null {
			return val{null: true, kind: 'n'}
		}
		r := new(big.Rat)
		scale := max(x.scale, y.scale)
		switch op {
		case "+":
			r.Add(x.num, y.num)
		case "-":
			r.Sub(x.num, y.num)
		case "*":
			r.Mul(x.num, y.num)
			scale = x.scale + y.scale
		}
		return bounded(val{kind: 'n', num: r, scale: scale})
	}}
}

// caseNumber is CASE WHEN cond THEN a [ELSE b] END: a conditional value,
// a conditional aggregate inside SUM, MIN or MAX.
func (g *gen) caseNumber(depth int) expr {
	cond, a := g.pred(depth), g.number(depth)
	sqlText := "CASE WHEN " + cond.sql + " THEN " + a.sql
	var b *expr
	if g.r.IntN(3) > 0 {
		e := g.number(depth)
		b = &e
		sqlText += " ELSE " + b.sql
	}
	return expr{sql: sqlText + " END", kind: 'n', eval: func(row map[string]val) val {
		if c := cond.eval(row); !c.null && c.b {
			return a.eval(row)
		}
		if b != nil {
			return b.eval(row)
		}
		return val{null: true, kind: 'n'}
	}}
}

// pred is a condition over t's columns, in three-valued logic.
func (g *gen) pred(depth int) expr {
	boolean := func(sqlText string, f func(row map[string]val) val) expr {
		return expr{sql: sqlText, kind: 'b', eval: f}
	}
	if depth <= 0 || g.r.IntN(3) == 0 {
		if g.opts.ExprSubqueries && g.r.IntN(3) == 0 {
			return g.subqueryPred()
		}
		if g.opts.Functions && g.r.IntN(4) == 0 {
			return g.functionPred() // functions.go
		}
		switch g.r.IntN(7) {
		case 6: // [NOT] BETWEEN: x >= lo AND x <= hi, or NOT of it
			x, lo, hi := g.number(1), g.number(1), g.number(1)
			not := g.r.IntN(3) == 0
			word := map[bool]string{false: " BETWEEN ", true: " NOT BETWEEN "}[not]
			return boolean("("+x.sql+word+lo.sql+" AND "+hi.sql+")", func(row map[string]val) val {
				v, l, h := x.eval(row), lo.eval(row), hi.eval(row)
				ge, le := val{null: true, kind: 'b'}, val{null: true, kind: 'b'}
				if !v.null && !l.null {
					ge = val{kind: 'b', b: v.num.Cmp(l.num) >= 0}
				}
				if !v.null && !h.null {
					le = val{kind: 'b', b: v.num.Cmp(h.num) <= 0}
				}
				r := logic(true, ge, le)
				return val{null: r.null, kind: 'b', b: r.b != not}
			})
		case 0: // a boolean column, as it is or compared with TRUE/FALSE
			c := column("t", "b")
			switch g.r.IntN(3) {
			case 1:
				return boolean("(t.b = TRUE)", func(row map[string]val) val { return c.eval(row) })
			case 2:
				return boolean("(t.b <> FALSE)", func(row map[string]val) val { return c.eval(row) })
			}
			return c
		case 5: // [NOT] IN a list of texts
			c := column("t", g.pick("k", "s"))
			lits := []string{g.pick("a", "x", ""), g.pick("y,z", "\xe9t\xe9", "c")}
			not := g.r.IntN(2) == 0
			sqlText := c.sql + " IN ('" + strings.Join(lits, "', '") + "')"
			if not {
				sqlText = c.sql + " NOT IN ('" + strings.Join(lits, "', '") + "')"
			}
			return boolean(sqlText, func(row map[string]val) val {
				x := c.eval(row)
				if x.null { // an outer join's NULL
					return val{null: true, kind: 'b'}
				}
				return val{kind: 'b', b: slices.Contains(lits, x.text) != not}
			})
		case 1:
			a, b := g.number(1), g.number(1)
			op := g.pick("=", "<>", "<", "<=", ">", ">=")
			return boolean("("+a.sql+" "+op+" "+b.sql+")", func(row map[string]val) val {
				x, y := a.eval(row), b.eval(row)
				if x.null || y.null {
					return val{null: true, kind: 'b'}
				}
				c := x.num.Cmp(y.num)
				return val{kind: 'b', b: map[string]bool{"=": c == 0, "<>": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]}
			})
		case 2:
			c := column("t", g.pick("k", "s"))
			lit := g.pick("a", "x", "b", "")
			return boolean("("+c.sql+" >= '"+lit+"')", func(row map[string]val) val {
				x := c.eval(row)
				if x.null { // an outer join's NULL
					return val{null: true, kind: 'b'}
				}
				return val{kind: 'b', b: x.text >= lit}
			})
		case 3:
			c := column("t", g.pick("n", "b", "k"))
			not := g.r.IntN(2) == 0
			sqlText := c.sql + " IS NULL"
			if not {
				sqlText = c.sql + " IS NOT NULL"
			}
			return boolean(sqlText, func(row map[string]val) val { return val{kind: 'b', b: c.eval(row).null != not} })
		default:
			c := column("t", "n")
			not := g.r.IntN(3) == 0
			in := " IN (1, 2.5, -3)"
			if not {
				in = " NOT" + in
			}
			return boolean(c.sql+in, func(row map[string]val) val {
				x := c.eval(row)
				if x.null {
					return val{null: true, kind: 'b'}
				}
				for _, s := range []string{"1", "2.5", "-3"} {
					if x.num.Cmp(readNum(s).num) == 0 {
						return val{kind: 'b', b: !not}
					}
				}
				return val{kind: 'b', b: not}
			})
		}
	}
	a := g.pred(depth - 1)
	if g.r.IntN(4) == 0 {
		return boolean("NOT "+a.sql, func(row map[string]val) val {
			x := a.eval(row)
			return val{null: x.null, kind: 'b', b: !x.b}
		})
	}
	b := g.pred(depth - 1)
	and := g.r.IntN(2) == 0
	word := map[bool]string{true: " AND ", false: " OR "}[and]
	return boolean("("+a.sql+word+b.sql+")", func(row map[string]val) val { return logic(and, a.eval(row), b.eval(row)) })
}

// logic is x AND y (and), else x OR y, in three-valued logic.
func logic(and bool, x, y val) val {
	switch {
	case and && (!x.null && !x.b || !y.null && !y.b):
		return val{kind: 'b', b: false}
	case !and && (!x.null && x.b || !y.null && y.b):
		return val{kind: 'b', b: true}
	case x.null || y.null:
		return val{null: true, kind: 'b'}
	}
	return val{kind: 'b', b: and}
}

// table makes a random table's CSV text and its rows.
func (g *gen) table(alias string, cols []string) (string, []map[string]val) {
	var b strings.Builder
	b.WriteString(strings.Join(cols, ",") + "\n")
	var rows []map[string]val
	for range g.r.IntN(16) {
		row := map[string]val{}
		for i, c := range cols {
			v := pools[c][g.r.IntN(len(pools[c]))]
			row[alias+"."+c] = val{kind: 't', text: v}
			if i > 0 {
				b.WriteByte(',')
			}
			if strings.ContainsAny(v, ",\"") {
				v = `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
			}
			b.WriteString(v)
		}
		b.WriteByte('\n')
		rows = append(rows, row)
	}
	return b.String(), rows
}

// query makes one random query, its DuckDB form and its expected output.
func (g *gen) query(tRows, uRows []map[string]val) (query, want string) {
	if g.opts.SetOps && g.r.IntN(3) == 0 {
		return g.setOpQuery(tRows, uRows)
	}
	if g.opts.Windows && g.r.IntN(4) > 0 {
		return g.windowQuery(tRows) // window.go
	}
	joined := false
	src := g.tSource(tRows)
	tRows = src.rows
	from := src.from
	rows := tRows
	switch g.r.IntN(4) {
	case 0: // an inner join on k
		if g.opts.Functions && g.r.IntN(2) == 0 { // or a cross join (functions.go)
			from, rows = g.crossJoin(src, uRows)
			joined = true
			break
		}
		if g.opts.Joins { // or the joins of join.go
			from, rows = g.joins(src, uRows)
			joined = true
			break
		}
		u, uJoined := g.uSource(uRows)
		from = src.from + " JOIN " + u + " ON t.k = u.k"
		joined = true
		var joined []map[string]val
		for _, a := range tRows {
			for _, b := range uJoined {
				if a["t.k"].text == b["u.k"].text {
					row := map[string]val{}
					for k, v := range a {
						row[k] = v
					}
					for k, v := range b {
						row[k] = v
					}
					joined = append(joined, row)
				}
			}
		}
		rows = joined
	case 1: // a semi-join: each t row once
		inSet := map[string]bool{}
		for _, b := range uRows {
			if m := readNum(b["u.m"].text); !m.null && m.num.Sign() > 0 {
				inSet[b["u.k"].text] = true
			}
		}
		var kept []map[string]val
		for _, a := range tRows {
			if inSet[a["t.k"].text] {
				kept = append(kept, a)
			}
		}
		rows = kept
		from = src.from + " WHERE t.k IN (" + g.semiJoinSet(src) + ") AND"
	}
	if again := g.again(src); again != "" {
		if strings.HasSuffix(from, "AND") {
			from += " " + strings.TrimSuffix(again, " AND ") + " AND"
		} else {
			from += " WHERE " + strings.TrimSuffix(again, " ")
		}
	}
	where := g.pred(2)
	var filtered []map[string]val
	for _, r := range rows {
		if v := where.eval(r); !v.null && v.b {
			filtered = append(filtered, r)
		}
	}
	// A column's kind comes from its uses (docs/sql.md): this always-true
	// condition reads b as a boolean and n as a number in every query.
	typing := " AND (t.b IS NULL OR t.b OR NOT t.b) AND (t.n IS NULL OR t.n * 1 = t.n)"
	if joined { // u.m is selected or grouped by: read it as a number too
		typing += " AND (u.m IS NULL OR u.m * 1 = u.m)"
	}
	if strings.HasSuffix(from, "AND") {
		from += " " + where.sql + typing
	} else {
		from += " WHERE " + where.sql + typing
	}

	var out [][]val
	grouped := g.r.IntN(2) == 0
	if grouped {
		key := column("t", g.pick("k", "n", "b"))
		if joined && g.r.IntN(3) == 0 { // a key of the other side of the join
			key = column("u", "m")
		}
		// An expression as the key, but one of a column: DuckDB folds a
		// constant such as -(10) into a whole number and reads it as a
		// position, where PostgreSQL and ours group by its value (a
		// difference of the dialects, left out).
		if e := g.number(1); g.r.IntN(4) == 0 && strings.Contains(e.sql, "t.") {
			key = e
		}
		arg := g.number(1)
		over := func(e expr, f func(vs []val) val) func(rs []map[string]val) val {
			return func(rs []map[string]val) val {
				vs := make([]val, len(rs))
				for i, r := range rs {
					vs[i] = e.eval(r)
				}
				return f(vs)
			}
		}
		sum := sumVals
		text := column("t", g.pick("k", "s"))
		// STDDEV_SAMP's argument is arg where it is below a million in
		// size: DuckDB's is a DOUBLE, which the comparison holds to our
		// last digit, and a double holds about 16 digits.
		small := expr{sql: "CASE WHEN ((" + arg.sql + " > -1000000) AND (" + arg.sql + " < 1000000)) THEN " + arg.sql + " END", kind: 'n',
			eval: func(r map[string]val) val {
				if v := arg.eval(r); !v.null && new(big.Rat).Abs(v.num).Cmp(big.NewRat(1000000, 1)) < 0 {
					return v
				}
				return val{null: true, kind: 'n'}
			}}
		aggs := []aggGen{
			{"COUNT(*)", func(rs []map[string]val) val { return intVal(len(rs)) }},
			{"COUNT(" + arg.sql + ")", over(arg, func(vs []val) val {
				n := 0
				for _, v := range vs {
					if !v.null {
						n++
					}
				}
				return intVal(n)
			})},
			{"SUM(" + arg.sql + ")", over(arg, sum)},
			{"MIN(" + arg.sql + ")", over(arg, func(vs []val) val { return best(vs, -1) })},
			{"MAX(" + arg.sql + ")", over(arg, func(vs []val) val { return best(vs, 1) })},
			{"PERCENT(SUM(" + arg.sql + "), COUNT(*))", func(rs []map[string]val) val { return percent(over(arg, sum)(rs), len(rs)) }},
			{"MIN(" + text.sql + ")", over(text, func(vs []val) val { return bestText(vs, -1) })},
			{"MAX(" + text.sql + ")", over(text, func(vs []val) val { return bestText(vs, 1) })},
			{"STDDEV_SAMP(" + small.sql + ")", over(small, stddevSamp)},
		}
		if g.opts.SetOps {
			aggs = append(aggs, g.moreAggs(arg, text)...)
		}
		if g.opts.Functions {
			aggs = append(aggs, g.boolAggs()...) // functions.go
		}
		chosen := []int{0, 1 + g.r.IntN(len(aggs)-1)}
		if g.opts.Functions && g.r.IntN(5) == 0 { // BOOL_AND or BOOL_OR, the last two
			chosen[1] = len(aggs) - 1 - g.r.IntN(2)
		}
		groups := map[string][]map[string]val{}
		var order []string
		for _, r := range filtered {
			k := key.eval(r).key()
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], r)
		}
		// HAVING: none, or one of three conditions over the group.
		havings := []struct {
			sql  string
			keep func(rs []map[string]val) bool
		}{
			{"", func([]map[string]val) bool { return true }},
			{" HAVING COUNT(*) >= 2", func(rs []map[string]val) bool { return len(rs) >= 2 }},
			{" HAVING SUM(" + arg.sql + ") > 1", func(rs []map[string]val) bool {
				s := over(arg, sum)(rs)
				return !s.null && s.num.Cmp(big.NewRat(1, 1)) > 0
			}},
			{" HAVING MAX(" + arg.sql + ") IS NOT NULL", func(rs []map[string]val) bool { return !over(arg, func(vs []val) val { return best(vs, 1) })(rs).null }},
		}
		having := havings[0]
		if g.r.IntN(2) == 0 {
			having = havings[1+g.r.IntN(len(havings)-1)]
		}
		if c := aggs[chosen[1]].sql; strings.Contains(c, "FILTER (") || strings.Contains(c, "(DISTINCT ") {
			g.setops = true
		}
		if strings.HasPrefix(aggs[chosen[1]].sql, "BOOL_") {
			g.functions = true
		}
		if strings.Contains(aggs[chosen[1]].sql, "DISTINCT") && strings.Contains(having.sql, "SUM") {
			// A plain SUM beside a DISTINCT aggregate is NULL where a sum
			// per group and value passes 38 digits (docs/sql.md), which
			// this evaluator does not model: COUNT(*) instead.
			having = havings[1]
		}
		for _, k := range order {
			rs := groups[k]
			if !having.keep(rs) {
				continue
			}
			row := normalRow([]val{key.eval(rs[0])}) // a number key without trailing zeros
			for _, c := range chosen {
				row = append(row, aggs[c].f(rs))
			}
			out = append(out, row)
		}
		// The key named by its expression, its position or its alias.
		item, by := key.sql, key.sql
		switch g.r.IntN(4) {
		case 0:
			by = "1"
		case 1:
			item, by = key.sql+" AS grp", "grp"
		}
		sqlText := "SELECT " + item
		for _, c := range chosen {
			sqlText += ", " + aggs[c].sql
		}
		sqlText += " FROM " + from + " GROUP BY " + by
		sqlText += having.sql
		return g.finish(sqlText, 1+len(chosen), out)
	}
	items := []expr{column("t", g.pick("k", "s", "n")), g.number(2), column("t", "b")}
	if joined {
		items = append(items, column("u", "m"))
		items = append(items, g.joinItems...)
	}
	for _, r := range filtered {
		row := make([]val, len(items))
		for i, it := range items {
			row[i] = it.eval(r)
		}
		out = append(out, row)
	}
	distinct := g.r.IntN(3) == 0
	sqlText := "SELECT "
	if distinct {
		sqlText += "DISTINCT "
		seen := map[string]bool{}
		var kept [][]val
		for _, row := range out {
			k := ""
			for _, v := range row {
				k += v.key() + "\x01"
			}
			if !seen[k] {
				seen[k] = true
				kept = append(kept, normalRow(row))
			}
		}
		out = kept
	}
	for i, it := range items {
		if i > 0 {
			sqlText += ", "
		}
		sqlText += it.sql
	}
	return g.finish(sqlText+" FROM "+from, len(items), out)
}

// sumVals is SUM of vs: NULL when all are, of the largest scale.
func sumVals(vs []val) val {
	s := val{null: true, kind: 'n'}
	for _, v := range vs {
		if v.null {
			continue
		}
		if s.null {
			s = val{kind: 'n', num: new(big.Rat)}
		}
		s.num = new(big.Rat).Add(s.num, v.num)
		s.scale = max(s.scale, v.scale)
	}
	return bounded(s) // the total, whatever the running sum was
}

func intVal(n int) val { return val{kind: 'n', num: new(big.Rat).SetInt64(int64(n))} }

// best is MIN (want -1) or MAX (+1); of equal values the larger scale.
func best(vs []val, want int) val {
	b := val{null: true, kind: 'n'}
	for _, v := range vs {
		if v.null {
			continue
		}
		if b.null {
			b = v
			continue
		}
		c := v.num.Cmp(b.num)
		if c == want || c == 0 && v.scale > b.scale {
			b = v
		}
	}
	return b
}

// stddevSamp is STDDEV_SAMP as docs/sql.md defines it: the square root
// of the values' sample variance, exactly, rounded half away from zero to
// their largest scale + 4; NULL for fewer than two values, and when their
// sum, a square or the sum of the squares is past maxDigits digits.
func stddevSamp(vs []val) val {
	null := val{null: true, kind: 'n'}
	var xs []*big.Rat
	scale, sum, squares := 0, new(big.Rat), new(big.Rat)
	for _, v := range vs {
		if v.null {
			continue
		}
		sq := new(big.Rat).Mul(v.num, v.num)
		if bounded(val{kind: 'n', num: sq, scale: 2 * v.scale}).null {
			return null
		}
		xs = append(xs, v.num)
		scale = max(scale, v.scale)
		sum.Add(sum, v.num)
		squares.Add(squares, sq)
	}
	if len(xs) < 2 || bounded(val{kind: 'n', num: sum, scale: scale}).null || bounded(val{kind: 'n', num: squares, scale: 2 * scale}).null {
		return null
	}
	// The variance: the squared distances from the mean, over n - 1.
	mean := new(big.Rat).Quo(sum, big.NewRat(int64(len(xs)), 1))
	variance := new(big.Rat)
	for _, x := range xs {
		d := new(big.Rat).Sub(x, mean)
		variance.Add(variance, d.Mul(d, d))
	}
	variance.Quo(variance, big.NewRat(int64(len(xs)-1), 1))
	// The root at scale s, rounded half up (it is not negative): r =
	// ⌊√(variance × 100^s)⌋, one more when (r + ½)² is at most that.
	s := scale + 4
	x := new(big.Rat).Mul(variance, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(100), big.NewInt(int64(s)), nil)))
	r := new(big.Int).Sqrt(new(big.Int).Quo(x.Num(), x.Denom()))
	half := new(big.Rat).Add(new(big.Rat).SetInt(r), big.NewRat(1, 2))
	if half.Mul(half, half).Cmp(x) <= 0 {
		r.Add(r, big.NewInt(1))
	}
	root := new(big.Rat).SetFrac(r, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil))
	return bounded(val{kind: 'n', num: root, scale: s})
}

// percent is PERCENT(part, whole) as docs/sql.md defines it: 100 × part
// and whole each rounded to the nearest double, their quotient in double
// arithmetic written with four decimals; NULL when either is NULL or
// whole is 0.
func percent(part val, whole int) val {
	if part.null || whole == 0 {
		return val{null: true, kind: 'n'}
	}
	p, _ := new(big.Rat).Mul(part.num, big.NewRat(100, 1)).Float64()
	return readNum(strconv.FormatFloat(p/float64(whole), 'f', 4, 64))
}

// bestText is MIN (want -1) or MAX (+1) of texts, byte for byte.
func bestText(vs []val, want int) val {
	b := val{null: true, kind: 't'}
	for _, v := range vs {
		if !v.null && (b.null || strings.Compare(v.text, b.text) == want) {
			b = v
		}
	}
	return b
}

// minScale is the fewest decimals that write r exactly.
func minScale(r *big.Rat) int {
	for s := 0; ; s++ {
		x := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil)))
		if x.IsInt() {
			return s
		}
	}
}

// finish adds a random ORDER BY and LIMIT to a query of width output
// columns, the ORDER BY made total by every column after the random keys,
// orders the expected rows by them, and writes the expected CSV.
func (g *gen) finish(sqlText string, width int, out [][]val) (query, want string) {
	var keys []int
	var desc, nullsFirst []bool
	var order []string
	if g.r.IntN(2) == 0 {
		for range 1 + g.r.IntN(2) {
			k := g.r.IntN(2) // the first two output columns
			d := g.r.IntN(2) == 0
			keys, desc = append(keys, k), append(desc, d)
			key := fmt.Sprint(k + 1)
			if d {
				key += " DESC"
			}
			first := false
			if g.opts.Functions && g.r.IntN(3) == 0 { // NULLS FIRST, or LAST as written
				g.functions = true
				first = g.r.IntN(2) == 0
				key += map[bool]string{true: " NULLS FIRST", false: " NULLS LAST"}[first]
			}
			nullsFirst = append(nullsFirst, first)
			order = append(order, key)
		}
	}
	for i := range width {
		order = append(order, fmt.Sprint(i+1))
	}
	query = sqlText + " ORDER BY " + strings.Join(order, ", ")
	slices.SortStableFunc(out, func(a, b []val) int {
		for i, k := range keys {
			c := compareVals(a[k], b[k])
			if a[k].null || b[k].null {
				if nullsFirst[i] {
					c = -c
				}
			} else if desc[i] {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		for i := range width {
			if c := compareVals(a[i], b[i]); c != 0 {
				return c
			}
		}
		for i := range width {
			if c := compareScales(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	limit := -1
	if g.r.IntN(3) == 0 {
		limit = g.r.IntN(4)
		if g.opts.Functions && g.r.IntN(2) == 0 { // the standard's LIMIT
			g.functions = true
			query += fmt.Sprintf(" FETCH FIRST %d ROWS ONLY", limit)
		} else {
			query += fmt.Sprintf(" LIMIT %d", limit)
		}
	}
	if g.opts.SetOps && g.r.IntN(3) == 0 {
		g.setops = true
		off := g.r.IntN(4)
		query += fmt.Sprintf(" OFFSET %d", off)
		out = out[min(off, len(out)):]
	}
	if limit >= 0 {
		out = out[:min(limit, len(out))]
	}
	// The rows only, without the header row.
	var b bytes.Buffer
	for _, row := range out {
		for i, v := range row {
			if i > 0 {
				b.WriteByte(',')
			}
			f := v.format()
			if strings.ContainsAny(f, ",\"\n\r") {
				f = `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
			}
			b.WriteString(f)
		}
		b.WriteByte('\n')
	}
	return query, b.String()
}
