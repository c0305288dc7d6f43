package sqlops_test

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
)

// restarting runs p straight, then with its ready instances taken in a
// random order and every instance of an operator with state restarted
// from its snapshot before about one arrival in four (the runner checks
// that a restored operator writes the same snapshot again), and fails
// unless the outputs are the same: byte for byte for an ordered query,
// as sets of rows otherwise. It returns the kinds of operators restarted.
func restarting(t *testing.T, p *physical.Plan, tables map[string]*exec.Table, ordered map[string]bool, seed uint64) map[plan.Op]bool {
	t.Helper()
	straight, err := sqlops.Run(p, tables)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 3))
	kinds := map[plan.Op]bool{}
	got, err := sqlops.RunShuffled(p, tables, r, func(op, _ int) bool {
		if r.IntN(4) != 0 {
			return false
		}
		kinds[p.Ops[op].Kind] = true
		return true
	})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	for name, want := range straight.Files {
		g, w := string(got.Files[name]), string(want)
		if !ordered[name] {
			g, w = sorted(got.Files[name]), sorted(want)
		}
		if g != w {
			t.Errorf("seed %d: %s shuffled and restarted differs:\n got %.400q\nwant %.400q", seed, name, g, w)
		}
	}
	if fmt.Sprint(got.Stats) != fmt.Sprint(straight.Stats) {
		t.Errorf("seed %d: stats restarted %v, straight %v", seed, got.Stats, straight.Stats)
	}
	return kinds
}

// TestRestartsMatchAStraightRun restarts every operator with state of
// the four default queries, and of random ones, at random points.
func TestRestartsMatchAStraightRun(t *testing.T) {
	_, _, tables := generated(t, 20000, 7)
	restarted := map[plan.Op]bool{}
	ordered := map[string]bool{}
	for _, n := range queries.Names {
		ordered[n] = true
	}
	for shards := range 4 {
		p := planOf(t, defaultTexts(), queries.Names, tables, shards)
		for seed := range uint64(3) {
			maps.Copy(restarted, restarting(t, p, tables, ordered, seed))
		}
	}
	for _, k := range []plan.Op{plan.Scan, plan.Distinct, plan.Aggregate, plan.SemiJoin, physical.PartialAggregate, physical.FinalAggregate, plan.Sort, plan.Limit, plan.RowNumber, physical.Sink} {
		if !restarted[k] {
			t.Errorf("no %s of the default queries was restarted", k)
		}
	}
	for seed := range uint64(100) {
		g := gen{rand.New(rand.NewPCG(seed, 26))}
		tables := g.tables(t)
		qs := map[string]string{}
		ordered := map[string]bool{}
		var names []string
		for i := range 4 {
			q, inOrder := g.query()
			name := fmt.Sprint("r", i)
			qs[name], ordered[name], names = q, inOrder, append(names, name)
		}
		maps.Copy(restarted, restarting(t, planOf(t, qs, names, tables, int(seed%4)), tables, ordered, seed))
	}
	for _, k := range []plan.Op{plan.Join, physical.PartialDistinct} {
		if !restarted[k] {
			t.Errorf("no %s of the random queries was restarted", k)
		}
	}
}

// snapshotter is stage.Snapshotter, as the operators here implement it.
type snapshotter interface {
	AppendSnapshot([]byte) ([]byte, error)
	Restore([]byte) error
}

// stateful is one operator with state of a plan: how to make a fresh one,
// and the snapshot of one that was fed a batch of each input.
type stateful struct {
	what string
	mk   func() sqlops.Operator
	snap []byte
}

// statefulOps are the operators with state of plans covering every kind
// that has state, each fed a batch of each of its inputs.
func statefulOps(t testing.TB) []stateful {
	tt, err := exec.ReadCSV(bytes.NewReader([]byte("k,n\na,1\nb,2.5\na,\n")), 0)
	if err != nil {
		t.Fatal(err)
	}
	ut, err := exec.ReadCSV(bytes.NewReader([]byte("k,m,c\na,1,x\nb,,y\n")), 0)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]*exec.Table{"t": tt, "u": ut}
	texts := map[string]string{
		"agg":      "SELECT k, SUM(n), MAX(n) FROM t GROUP BY k ORDER BY k LIMIT 1",
		"join":     "SELECT t.k, u.c FROM t JOIN u ON t.k = u.k",
		"distinct": "SELECT DISTINCT u.c FROM t JOIN u ON t.k = u.k",
		"partial":  "SELECT u.c, AVG(t.n), MIN(t.n) FROM t JOIN u ON t.k = u.k GROUP BY u.c",
		"semi":     "SELECT k FROM t WHERE k IN (SELECT k FROM u)",
		"rank":     "SELECT ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, k) AS r, k FROM t GROUP BY k ORDER BY COUNT(*) DESC, k LIMIT 2",
		"full":     "SELECT t.k, u.c FROM t FULL JOIN u ON t.k = u.k AND t.n = u.m",
	}
	names := []string{"agg", "join", "distinct", "partial", "semi", "rank", "full"}
	p := planOf(t, texts, names, tables, 2)
	var out []stateful
	for _, o := range p.Ops {
		if o.Kind == physical.Exchange {
			continue
		}
		cols, err := sqlops.InputColumns(p, o)
		if err != nil {
			t.Fatal(err)
		}
		var table []string
		if o.Kind == plan.Scan {
			table = tables[o.Node.Table].Columns
		}
		mk := func() sqlops.Operator {
			op, err := sqlops.New(o, cols, table, nil)
			if err != nil {
				t.Fatal(err)
			}
			return op
		}
		op := mk()
		s, ok := op.(snapshotter)
		if !ok {
			continue
		}
		for k := range cols {
			in := testBatch(t, cols[k])
			if o.Kind == plan.Scan {
				in = tables[o.Node.Table].Batches[0]
			}
			if err := op.Apply(k, in, func(*exec.Batch) {}); err != nil {
				t.Fatalf("#%d %s: %v", o.ID, o.Kind, err)
			}
		}
		snap, err := s.AppendSnapshot(nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, stateful{fmt.Sprintf("#%d %s", o.ID, o.Kind), mk, snap})
	}
	return out
}

// TestRestoreRefusesCorruptSnapshots: a snapshot cut short, of another
// version, or with bytes after its end is refused, and no restore panics.
func TestRestoreRefusesCorruptSnapshots(t *testing.T) {
	ops := statefulOps(t)
	kinds := map[string]bool{}
	for _, o := range ops {
		kinds[strings.Fields(o.what)[1]] = true
		if err := o.mk().(snapshotter).Restore(o.snap); err != nil {
			t.Errorf("%s: its own snapshot: %v", o.what, err)
		}
		bad := [][]byte{append([]byte{9}, o.snap[1:]...), append(bytes.Clone(o.snap), 0)}
		for i := range len(o.snap) {
			bad = append(bad, o.snap[:i])
		}
		for _, b := range bad {
			if err := o.mk().(snapshotter).Restore(b); err == nil {
				t.Errorf("%s: restored %q (of %q)", o.what, b, o.snap)
			}
		}
	}
	for _, k := range []plan.Op{plan.Scan, plan.Aggregate, plan.Join, plan.SemiJoin, plan.Distinct, physical.PartialDistinct, physical.PartialAggregate, physical.FinalAggregate, plan.Sort, plan.Limit, plan.RowNumber, physical.Sink} {
		if !kinds[string(k)] {
			t.Errorf("no %s among the operators checked", k)
		}
	}
}

// FuzzRestore restores arbitrary bytes into every kind of operator with
// state. It must never panic: it refuses them, or the operator restored
// writes a snapshot and finishes.
//
//	go test -run='^$' -fuzz=FuzzRestore -fuzztime=30s ./services/dataflow/sql/sqlops
func FuzzRestore(f *testing.F) {
	ops := statefulOps(f)
	for i, o := range ops {
		f.Add(uint8(i), o.snap)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		o := ops[int(which)%len(ops)]
		op := o.mk()
		if err := op.(snapshotter).Restore(data); err != nil {
			return
		}
		if _, err := op.(snapshotter).AppendSnapshot(nil); err != nil {
			t.Fatalf("%s: restored, no snapshot: %v", o.what, err)
		}
		_ = op.Finish(func(*exec.Batch) {})
	})
}

// testBatch is a batch of two rows of the given columns, made through
// their wire form.
func testBatch(t testing.TB, cols []plan.Column) *exec.Batch {
	var b batch.ColumnBuilder
	for i := range 2 {
		row := make([][]byte, len(cols))
		for c, col := range cols {
			switch col.Type {
			case plan.Number:
				row[c] = []byte(fmt.Sprint(i + 1))
			case plan.Bool:
				row[c] = []byte("true")
			default:
				row[c] = []byte{'a' + byte(i)}
			}
		}
		b.Add(row, nil)
	}
	out, err := wire.FromRows(b.Build(), cols)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
