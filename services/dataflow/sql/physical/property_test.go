package physical_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
)

// randomQuery writes a random query of the subset over the default
// tables: one table or a join, filters, IN subqueries (plain, grouped or
// limited), groups with aggregates and HAVING, DISTINCT, ORDER BY and
// LIMIT. It only needs to reach the planner's cases; the SQL engine's own
// tests check what queries mean. (To move onto the shared generator,
// services/dataflow/sql/sqlgen, once it lands.)
type randomQuery struct{ r *rand.Rand }

func (g randomQuery) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

var (
	// The files' other columns are text (docs/sql.md "Kinds"): read as
	// numbers by a cast, which makes a column of the scan of its own.
	numbers = map[string][]string{"m": {"average_rating", "num_players::numeric", "winning_team::numeric"}, "p": {"rating", "team::numeric"}}
	texts   = map[string][]string{"m": {"token", "ladder", "map", "server"}, "p": {"match", "civ", "color", "token"}}
	bools   = map[string][]string{"m": {"mirror"}, "p": {"winner"}}
	tables  = map[string]string{"m": "matches", "p": "match_players"}
)

// col is a column of alias a's table, qualified when q is.
func (g randomQuery) col(a string, kinds map[string][]string, q bool) string {
	c := g.pick(kinds[a]...)
	if c == "match" {
		c = "match"
	}
	if q {
		return a + "." + c
	}
	return c
}

func (g randomQuery) pred(aliases []string, q bool) string {
	a := aliases[g.r.IntN(len(aliases))]
	var p string
	switch g.r.IntN(6) {
	case 0:
		p = g.col(a, numbers, q) + g.pick(" > ", " <= ", " = ") + fmt.Sprint(g.r.IntN(3000))
	case 1:
		p = g.col(a, texts, q) + g.pick(" = 'x'", " <> ''", " IN ('a', 'b')")
	case 2:
		p = g.pick("", "NOT ") + g.col(a, bools, q)
	case 3:
		p = g.col(a, numbers, q) + g.pick(" IS NULL", " IS NOT NULL")
	case 4:
		p = "(" + g.pred(aliases, q) + " OR " + g.pred(aliases, q) + ")"
	default:
		p = g.col(a, numbers, q) + " * 2 > " + g.col(aliases[0], numbers, q)
	}
	if g.r.IntN(3) == 0 {
		p += " AND " + g.pred(aliases, q)
	}
	return p
}

// subquery is an IN (SELECT ...) over a table, selecting a column of kind.
func (g randomQuery) subquery(kind map[string][]string) string {
	a := g.pick("m", "p")
	c := g.col(a, kind, false)
	s := "SELECT " + c + " FROM " + tables[a]
	if g.r.IntN(2) == 0 {
		s += " WHERE " + g.pred([]string{a}, false)
	}
	switch g.r.IntN(4) {
	case 0:
		s += " GROUP BY " + c + " HAVING COUNT(*) > " + fmt.Sprint(g.r.IntN(3))
	case 1:
		s += " ORDER BY " + c + " LIMIT " + fmt.Sprint(1+g.r.IntN(50))
	}
	return s
}

func (g randomQuery) query() string {
	aliases, from, q := []string{g.pick("m", "p")}, "", false
	from = tables[aliases[0]]
	if g.r.IntN(3) == 0 {
		aliases, q = []string{"m", "p"}, true
		from = "matches m JOIN match_players p ON " + g.pick("m.token = p.match", "p.match = m.token", "m.map = p.civ")
	}
	var where []string
	if g.r.IntN(3) > 0 {
		where = append(where, g.pred(aliases, q))
	}
	for range g.r.IntN(3) {
		a := aliases[g.r.IntN(len(aliases))]
		kind := g.pick("t", "t", "n")
		if kind == "n" {
			where = append(where, g.col(a, numbers, q)+" IN ("+g.subquery(numbers)+")")
		} else {
			where = append(where, g.col(a, texts, q)+" IN ("+g.subquery(texts)+")")
		}
	}
	var sel, tail []string
	distinct := ""
	switch g.r.IntN(3) {
	case 0: // grouped, maybe globally
		keys := []string{}
		for range g.r.IntN(3) {
			keys = append(keys, g.col(aliases[g.r.IntN(len(aliases))], texts, q))
		}
		sel = append(sel, keys...)
		a := aliases[g.r.IntN(len(aliases))]
		sel = append(sel, "COUNT(*) AS n", g.pick("SUM", "AVG", "MIN", "MAX")+"("+g.col(a, numbers, q)+") AS v",
			"COUNT(CASE WHEN "+g.col(a, bools, q)+" THEN 1 END) AS c")
		if len(keys) > 0 {
			tail = append(tail, "GROUP BY "+strings.Join(keys, ", "))
		}
		if g.r.IntN(2) == 0 {
			tail = append(tail, "HAVING COUNT(*) > "+fmt.Sprint(g.r.IntN(5)))
		}
	default:
		if g.r.IntN(2) == 0 {
			distinct = "DISTINCT "
		}
		for range 1 + g.r.IntN(3) {
			a := aliases[g.r.IntN(len(aliases))]
			sel = append(sel, g.pick(g.col(a, texts, q), g.col(a, numbers, q), g.col(a, numbers, q)+" + 1"))
		}
	}
	if g.r.IntN(2) == 0 {
		tail = append(tail, "ORDER BY 1"+g.pick("", " DESC"))
		if g.r.IntN(2) == 0 {
			tail = append(tail, "LIMIT "+fmt.Sprint(1+g.r.IntN(20)))
		}
	}
	s := "SELECT " + distinct + strings.Join(sel, ", ") + " FROM " + from
	if len(where) > 0 {
		s += " WHERE " + strings.Join(where, " AND ")
	}
	return strings.Join(append([]string{s}, tail...), " ")
}

// TestRandomJobsKeepTheInvariants plans jobs of random queries on
// several shapes and checks every plan with Check (every input produced,
// every shuffle's key a column its producer emits, nothing keyed before
// its shuffle) and that it survives Encode and Decode.
func TestRandomJobsKeepTheInvariants(t *testing.T) {
	g := randomQuery{rand.New(rand.NewPCG(25, 5))}
	var shapes []physical.Shape
	for _, n := range []int{1, 2, 3} {
		top, err := deploy.Default().WithReplicas(map[string]int{"shard": n})
		if err != nil {
			t.Fatal(err)
		}
		shapes = append(shapes, shape(t, top))
	}
	shapes = append(shapes, shape(t, deploy.Default().Alone()))
	jobs, compiled, refused := 300, 0, 0
	if testing.Short() {
		jobs = 60
	}
	for j := range jobs {
		var job []physical.Logical
		var texts []string
		for i := range 1 + g.r.IntN(6) {
			text := g.query()
			root, err := sql.Compile(text, catalog())
			if err != nil {
				refused++
				continue
			}
			compiled++
			job = append(job, physical.Logical{Name: fmt.Sprintf("u%d", i), Plan: root})
			texts = append(texts, text)
		}
		if len(job) == 0 {
			continue
		}
		sh := shapes[j%len(shapes)]
		p, err := physical.Build(job, sh)
		if err != nil {
			t.Fatalf("job %d on %v/%v: %v\n%s", j, sh.Gateway, sh.Shard, err, strings.Join(texts, "\n"))
		}
		if err := physical.Check(p); err != nil {
			t.Fatalf("job %d on %v/%v: %v\n%s\n%s", j, sh.Gateway, sh.Shard, err, strings.Join(texts, "\n"), p)
		}
		b, err := physical.Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		back, err := physical.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if back.String() != p.String() {
			t.Fatalf("job %d changed through Encode and Decode:\n%s\n%s", j, p, back)
		}
		if err := physical.Check(back); err != nil {
			t.Fatalf("job %d decoded: %v", j, err)
		}
	}
	t.Logf("%d queries planned, %d refused by the compiler", compiled, refused)
	// The generator must mostly write queries the engine takes, or this
	// test checks little.
	if compiled < 4*refused || compiled < jobs {
		t.Errorf("%d queries compiled, %d refused", compiled, refused)
	}
}

func shape(t *testing.T, top deploy.Topology) physical.Shape {
	t.Helper()
	s, err := physical.ShapeOf(top)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
