package oracle_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
)

// TestSubqueriesStanding: a standing query (services/dataflow/sql/incr)
// of a subquery in FROM or a CTE is either refused by incr.Check, or
// maintained exactly: after each epoch of appended rows its answer is
// Execute's over every row so far. Their plans are ordinary nodes (a
// join over an aggregate, a LIMIT below a join), which Check takes.
func TestSubqueriesStanding(t *testing.T) {
	runs := 120
	if testing.Short() {
		runs = 60
	}
	maintained, refused := 0, 0
	for seed := range uint64(runs) {
		c := sqlgen.GenerateWith(seed, sqlgen.Options{Subqueries: true})
		if !c.Subquery {
			// Its tables, with a subquery whose rows an epoch changes
			// (sqlgen's only filter): an aggregate, a LIMIT.
			c.Query = nonMonotone[seed%uint64(len(nonMonotone))]
		}
		root, _ := load(t, c)
		if err := incr.Check(root); err != nil {
			if !errors.Is(err, incr.ErrUnsupported) {
				t.Fatalf("seed %d: %s: %v", seed, c.Query, err)
			}
			refused++
			continue
		}
		maintained++
		checkStanding(t, seed, c, root)
	}
	t.Logf("%d queries with subqueries maintained, %d refused by incr.Check", maintained, refused)
	if maintained < runs/2 {
		t.Errorf("only %d queries with subqueries maintained", maintained)
	}
}

// checkStanding runs c's query as a standing query over its tables cut
// into random epochs, and fails unless each epoch's answer is Execute's
// over every row so far.
func checkStanding(t *testing.T, seed uint64, c sqlgen.Case, root *plan.Node) {
	t.Helper()
	e, err := incr.New(root)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	r := rand.New(rand.NewPCG(seed, 41))
	epochs := 1 + r.IntN(4)
	parts := splitTables(c.Tables, epochs, r)
	for k := range epochs {
		for _, tab := range c.Tables {
			if err := e.Append(tab.Name, readCSV(t, parts[k][tab.Name])); err != nil {
				t.Fatalf("seed %d: epoch %d: %v", seed, k+1, err)
			}
		}
		if _, err := e.Commit(); err != nil {
			t.Fatalf("seed %d: epoch %d: %v", seed, k+1, err)
		}
		got, err := e.Answer()
		if err != nil {
			t.Fatal(err)
		}
		so := map[string]*exec.Table{}
		for _, tab := range c.Tables {
			so[tab.Name] = readCSV(t, prefixCSV(parts, tab.Name, k+1))
		}
		want, err := oracle.Execute(root, so)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.CSV(), want.CSV()) {
			t.Fatalf("seed %d: epoch %d of %d: %s\n%s\n got %q\nwant %q", seed, k+1, epochs, c.Query, root, got.CSV(), want.CSV())
		}
	}
}

// nonMonotone are queries over sqlgen's tables whose subqueries' rows
// an epoch retracts: an aggregate joined or grouped again, an ordered
// LIMIT and its ROW_NUMBER, a CTE of an aggregate read twice.
var nonMonotone = []string{
	"SELECT t.k, t.n, s.total FROM t JOIN (SELECT k, SUM(n) AS total, COUNT(*) AS c FROM t GROUP BY k) AS s ON t.k = s.k WHERE s.c > 1 ORDER BY 1, 2, 3",
	"SELECT s.r, s.k FROM (SELECT ROW_NUMBER() OVER (ORDER BY t.n DESC, t.k) AS r, t.k, t.n FROM t WHERE t.n > 0 ORDER BY t.n DESC, t.k LIMIT 3) AS s WHERE s.r > 1 ORDER BY 1, 2",
	"WITH w AS (SELECT k, COUNT(*) AS c FROM u GROUP BY k) SELECT t.k, w.c FROM t JOIN w ON t.k = w.k WHERE t.k IN (SELECT k FROM w WHERE c > 1) ORDER BY 1, 2",
	"SELECT g.c, COUNT(*) FROM (SELECT k, COUNT(*) AS c FROM t GROUP BY k) AS g GROUP BY g.c ORDER BY 1, 2",
}

// splitTables cuts each table's records into epochs parts at random,
// in order, each part the CSV text of a table of its own, the header
// first.
func splitTables(tables []sqlgen.Table, epochs int, r *rand.Rand) []map[string]string {
	parts := make([]map[string]string, epochs)
	for k := range parts {
		parts[k] = map[string]string{}
	}
	for _, tab := range tables {
		header, body, _ := strings.Cut(tab.CSV, "\n")
		for k := range epochs {
			parts[k][tab.Name] = header + "\n"
		}
		for _, l := range strings.SplitAfter(body, "\n") {
			if l != "" {
				k := r.IntN(epochs)
				parts[k][tab.Name] += l
			}
		}
	}
	return parts
}

// prefixCSV is the CSV text of table name's rows of the first k parts.
func prefixCSV(parts []map[string]string, name string, k int) string {
	header, _, _ := strings.Cut(parts[0][name], "\n")
	var b strings.Builder
	b.WriteString(header + "\n")
	for _, p := range parts[:k] {
		_, body, _ := strings.Cut(p[name], "\n")
		b.WriteString(body)
	}
	return b.String()
}

func readCSV(t *testing.T, text string) *exec.Table {
	t.Helper()
	tt, err := exec.ReadCSV(strings.NewReader(text), 0)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}
