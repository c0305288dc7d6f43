package sqlops_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
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
	}
	names := []string{"agg", "join", "distinct", "partial", "semi", "rank"}
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
	out, err := sqlops.FromRows(b.Build(), cols)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFromRowsRefuses: a batch of another kind, width, or whose values do
// not read as their columns' types is refused as a bad batch.
func TestFromRowsRefuses(t *testing.T) {
	cols := []plan.Column{{Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}}
	var b batch.ColumnBuilder
	b.Add([][]byte{[]byte("1.50"), []byte("true")}, nil)
	good := b.Build()
	if got, err := sqlops.FromRows(good, cols); err != nil || got.N != 1 || got.Cols[0].Nums[0].String() != "1.50" {
		t.Fatalf("FromRows = %v, %v", got, err)
	}
	b.Add([][]byte{[]byte("1e3"), []byte("true")}, nil)
	notNumber := b.Build()
	b.Add([][]byte{[]byte("1"), []byte("TRUE")}, nil)
	notBool := b.Build()
	var tb batch.TokenBuilder
	tb.Add([]byte("x"))
	for _, rb := range []*wololov1.RowBatch{notNumber, notBool, tb.Build()} {
		if _, err := sqlops.FromRows(rb, cols); !errors.Is(err, batch.ErrBadBatch) {
			t.Errorf("FromRows(%v) = %v, want ErrBadBatch", rb, err)
		}
	}
	if _, err := sqlops.FromRows(good, cols[:1]); !errors.Is(err, batch.ErrBadBatch) {
		t.Errorf("a batch of 2 columns read as 1: %v", err)
	}
}

// randomColumn is a column of n values of type typ as text ("" NULL):
// numbers of one scale or of mixed ones, some too wide for an int64,
// negative ones and zeros with their trailing zeros.
func randomColumn(r *rand.Rand, typ plan.Type, n int) []string {
	out := make([]string, n)
	oneScale := r.IntN(2) == 0
	scale := r.IntN(4)
	// Text of every length, of one length, or with values past 255
	// bytes: each compact form of a text column's offsets, and ends.
	textKind := r.IntN(3)
	for i := range out {
		if r.IntN(5) == 0 {
			continue // NULL
		}
		switch typ {
		case plan.Text:
			switch textKind {
			case 0:
				out[i] = fmt.Sprint("t", r.IntN(1000))
			case 1:
				out[i] = fmt.Sprintf("t%04d", r.IntN(10000))
			default:
				out[i] = strings.Repeat("x", 1+r.IntN(400))
			}
		case plan.Bool:
			out[i] = fmt.Sprint(r.IntN(2) == 0)
		default:
			s := scale
			if !oneScale {
				s = r.IntN(8)
			}
			digits := 1 + r.IntN(5)
			if r.IntN(8) == 0 {
				digits = 19 + r.IntN(10) // wide
			}
			var b strings.Builder
			if r.IntN(3) == 0 {
				b.WriteByte('-')
			}
			for d := range digits + s {
				if d == digits {
					b.WriteByte('.')
				}
				b.WriteByte(byte('0' + r.IntN(10)))
			}
			out[i] = b.String()
		}
	}
	return out
}

// TestRowsRoundTrip: a batch of every type's columns, NULLs, numbers of
// one scale and of mixed scales, wide numbers among them, read back from
// its marshalled ColumnBatch is the same, value for value, trailing zeros
// included; its number and boolean columns travel typed, not as text.
// So do some of its rows: a run of them, and rows picked.
func TestRowsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cols := []plan.Column{{Name: "t", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}, {Name: "d", Type: plan.Number, Read: plan.ReadDuration}}
	forms := map[[3]bool]int{} // text columns written with a width, lengths, ends
	defer func() {
		for _, f := range [][3]bool{{true, false, false}, {false, true, false}, {false, false, true}} {
			if forms[f] == 0 {
				t.Errorf("no text column was written in the form (width, lengths, ends) %v: %v", f, forms)
			}
		}
	}()
	for round := range 200 {
		n := 1 + r.IntN(40)
		b := randomBatch(t, r, cols, n)
		rb := sqlops.ToRows(b)
		for c, vc := range rb.GetColumns().GetColumns() {
			if cols[c].Type != plan.Text && vc.GetText() != nil {
				t.Fatalf("column %s travels as text", cols[c].Name)
			}
			if tc := vc.GetText(); tc != nil {
				forms[[3]bool{tc.Width != 0, tc.Lengths != nil, tc.Ends != nil}]++
			}
		}
		wire, err := proto.Marshal(rb)
		if err != nil {
			t.Fatal(err)
		}
		var back wololov1.RowBatch
		if err := proto.Unmarshal(wire, &back); err != nil {
			t.Fatal(err)
		}
		got, err := sqlops.FromRows(&back, cols)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if want := b.String(); got.String() != want {
			t.Fatalf("round %d: read back\n%s\nwant\n%s", round, got.String(), want)
		}
		// Some rows, as an exchange sends them: a run, and rows picked.
		start := r.IntN(n)
		end := start + 1 + r.IntN(n-start)
		var rows []int32
		for i := range n {
			if r.IntN(2) == 0 {
				rows = append(rows, int32(i))
			}
		}
		if rows == nil {
			rows = []int32{int32(start)}
		}
		run := make([]int32, 0, end-start)
		for i := start; i < end; i++ {
			run = append(run, int32(i))
		}
		for _, sel := range []struct {
			rb   *wololov1.RowBatch
			want *exec.Batch
		}{
			{sqlops.ToSelectedRows(b, nil, start, end, nil), b.Rows(run)},
			{sqlops.ToSelectedRows(b, rows, 0, 0, nil), b.Rows(rows)},
		} {
			got, err := sqlops.FromRows(sel.rb, cols)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if got.String() != sel.want.String() {
				t.Fatalf("round %d: rows read back\n%s\nwant\n%s", round, got.String(), sel.want.String())
			}
		}
	}
}

// FuzzFromRows reads arbitrary bytes as a ColumnBatch of a text, a number
// and a boolean column. It must never panic: FromRows refuses them with
// ErrBadBatch, or what it read writes a batch that reads back the same.
//
//	go test -run='^$' -fuzz=FuzzFromRows -fuzztime=30s ./services/dataflow/sql/sqlops
func FuzzFromRows(f *testing.F) {
	cols := []plan.Column{{Name: "t", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}}
	r := rand.New(rand.NewPCG(3, 4))
	for range 4 {
		wire, err := proto.Marshal(sqlops.ToRows(randomBatch(f, r, cols, 5)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(wire)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var rb wololov1.RowBatch
		if err := proto.Unmarshal(data, &rb); err != nil {
			return
		}
		got, err := sqlops.FromRows(&rb, cols)
		if err != nil {
			if !errors.Is(err, batch.ErrBadBatch) {
				t.Fatalf("error %v does not wrap ErrBadBatch", err)
			}
			return
		}
		again, err := sqlops.FromRows(sqlops.ToRows(got), cols)
		if err != nil {
			t.Fatalf("written again, refused: %v", err)
		}
		if again.String() != got.String() {
			t.Fatalf("written again as\n%s\nwas\n%s", again.String(), got.String())
		}
	})
}
