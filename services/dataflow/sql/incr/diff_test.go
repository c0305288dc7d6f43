package incr_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/incr/incrtest"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
)

// The helpers the tests of standing queries share (incrtest).
var (
	epochs   = incrtest.Epochs
	textCols = incrtest.TextColumns
	prefix   = incrtest.Prefix
	lines    = incrtest.Rows
)

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// addDiff adds a change to a multiset of rows (incrtest.AddChange).
func addDiff(t *testing.T, sum map[string]int64, d *incr.Diff) {
	t.Helper()
	if err := incrtest.AddChange(sum, d.Result().CSV()); err != nil {
		t.Fatal(err)
	}
}

// runEpochs feeds the epochs to an engine of root and checks every
// version: its CSV equal to oracle.Execute's over the prefix, its Stats
// too, and the sum of the changes so far equal to its rows. The engine
// is given copies of the epochs' rows, written over after each Commit.
func runEpochs(t *testing.T, label string, root *plan.Node, parts []map[string]*exec.Table) (versions int) {
	t.Helper()
	e, err := incr.New(root)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	sum := map[string]int64{}
	for k := range parts {
		var given []*exec.Table
		for _, name := range slices.Sorted(mapKeys(parts[k])) {
			p := parts[k][name]
			c := &exec.Table{Columns: p.Columns, Batches: []*exec.Batch{exec.Concat(textCols(p.Columns), p.Batches)}}
			given = append(given, c)
			if err := e.Append(name, c); err != nil {
				t.Fatalf("%s: epoch %d: %v", label, k+1, err)
			}
		}
		d, err := e.Commit()
		if err != nil {
			t.Fatalf("%s: epoch %d: %v", label, k+1, err)
		}
		// The engine keeps no pointer into the rows it was given: they
		// may be written over once Commit returns.
		for _, c := range given {
			for _, v := range c.Batches[0].Cols {
				for i := range v.Data {
					v.Data[i] = '#'
				}
			}
		}
		got, err := e.Answer()
		if err != nil {
			t.Fatal(err)
		}
		want, err := oracle.Execute(root, prefix(parts, k+1))
		if err != nil {
			t.Fatalf("%s: epoch %d: batch: %v", label, k+1, err)
		}
		if g, w := got.CSV(), want.CSV(); !bytes.Equal(g, w) {
			t.Fatalf("%s: epoch %d of %d:\n%s\n got %q\nwant %q", label, k+1, len(parts), root, g, w)
		}
		if !reflect.DeepEqual(got.Stats, want.Stats) {
			t.Fatalf("%s: epoch %d: stats %+v, want %+v", label, k+1, got.Stats, want.Stats)
		}
		addDiff(t, sum, d)
		if rows := lines(got.CSV()); !reflect.DeepEqual(rows, sum) {
			t.Fatalf("%s: epoch %d: the changes add up to %v, the answer is %v", label, k+1, sum, rows)
		}
		versions++
	}
	return versions
}

// sqlgenTables reads a case's tables, and their catalog.
func sqlgenTables(t testing.TB, c sqlgen.Case) (map[string]*exec.Table, sql.Catalog) {
	t.Helper()
	tables := map[string]*exec.Table{}
	cat := sql.Catalog{}
	for _, tab := range c.Tables {
		tt, err := exec.ReadCSV(strings.NewReader(tab.CSV), 0)
		if err != nil {
			t.Fatal(err)
		}
		tables[tab.Name], cat[tab.Name] = tt, tt.Columns
	}
	return tables, cat
}

// seedPlan is the plan of q (of sqlgen's query of the seed when q is
// "") over the seed's sqlgen tables, as Compile makes it for an even
// seed and as rewrite.Optimize rewrites it for an odd one; the tables,
// and the query.
func seedPlan(t testing.TB, seed uint64, q string) (*plan.Node, map[string]*exec.Table, string) {
	t.Helper()
	c := sqlgen.Generate(seed)
	if q == "" {
		q = c.Query
	}
	tables, cat := sqlgenTables(t, c)
	root, err := sql.Compile(q, cat)
	if err != nil {
		t.Fatalf("seed %d: %s: %v", seed, q, err)
	}
	if seed%2 == 1 {
		root = rewrite.Optimize(root)
	}
	return root, tables, q
}

// TestRandomQueriesEveryEpoch runs sqlgen's random queries over their
// tables split into random epochs (an epoch may be empty), the plan as
// Compile makes it and as rewrite.Optimize rewrites it: every version
// must be the batch answer over the epochs so far. Queries Check refuses
// are counted, and must be few.
func TestRandomQueriesEveryEpoch(t *testing.T) {
	runs := 1500
	if testing.Short() {
		runs = 300
	}
	refused := map[string]int{}
	nRefused, versions := 0, 0
	for seed := range uint64(runs) {
		root, tables, q := seedPlan(t, seed, "")
		if err := incr.Check(root); err != nil {
			if !errors.Is(err, incr.ErrUnsupported) {
				t.Fatalf("seed %d: %s: %v", seed, q, err)
			}
			refused[err.Error()]++
			nRefused++
			continue
		}
		r := rand.New(rand.NewPCG(seed, 40))
		parts := epochs(r, tables, 1+r.IntN(6))
		restore := func() {}
		if seed%2 == 1 { // as TestDefaultQueriesEveryEpoch's
			restore = incr.SetSmallSteps(3, 2)
		}
		versions += runEpochs(t, fmt.Sprintf("seed %d: %s", seed, q), root, parts)
		restore()
	}
	t.Logf("%d of %d random queries maintained (%d versions checked), %d refused: %v", runs-nRefused, runs, versions, nRefused, refused)
	if nRefused > runs/10 {
		t.Errorf("%d of %d random queries refused", nRefused, runs)
	}
}

// defaultQueries reads queries/q*.sql (the default queries; read as
// files, the SQL engine's packages import nothing outside it).
func defaultQueries(t testing.TB) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../../../queries/q*.sql")
	if err != nil || len(files) != 4 {
		t.Fatalf("the default queries: %v, %v", files, err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".sql")] = string(b)
	}
	return out
}

// engineOf is the engine of the query q over the tables of cat.
func engineOf(t testing.TB, q string, cat sql.Catalog) *incr.Engine {
	t.Helper()
	root, err := sql.Compile(q, cat)
	if err != nil {
		t.Fatal(err)
	}
	e, err := incr.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// dataset is a generated dataset as tables, and the catalog of them.
func dataset(t testing.TB, cfg datagen.Config) (map[string]*exec.Table, sql.Catalog) {
	t.Helper()
	var m, p bytes.Buffer
	if _, err := datagen.Generate(cfg, &m, &p); err != nil {
		t.Fatal(err)
	}
	tables := map[string]*exec.Table{}
	cat := sql.Catalog{}
	for name, b := range map[string]*bytes.Buffer{"matches": &m, "match_players": &p} {
		tt, err := exec.ReadCSV(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		tables[name], cat[name] = tt, tt.Columns
	}
	return tables, cat
}

// TestDefaultQueriesEveryEpoch runs the four default queries over
// generated datasets (duplicate tokens, players of matches that are not
// there or come epochs later) split into random epochs.
func TestDefaultQueriesEveryEpoch(t *testing.T) {
	qs := defaultQueries(t)
	for seed := range int64(6) {
		restore := func() {}
		if seed%2 == 0 {
			// An aggregate's rows at an epoch's end made a few groups at
			// a time, and its finished groups dropped mid-epoch, as
			// millions of them are at full scale.
			restore = incr.SetSmallSteps(7, 1)
		}
		tables, cat := dataset(t, datagen.Config{Matches: 2000, Seed: seed})
		r := rand.New(rand.NewPCG(uint64(seed), 40))
		n := []int{1, 2, 5, 17, 40, 100}[seed]
		parts := epochs(r, tables, n)
		for _, name := range slices.Sorted(mapKeys(qs)) {
			root, err := sql.Compile(qs[name], cat)
			if err != nil {
				t.Fatal(err)
			}
			runEpochs(t, fmt.Sprintf("%s, seed %d, %d epochs", name, seed, n), rewrite.Optimize(root), parts)
		}
		restore()
	}
}
