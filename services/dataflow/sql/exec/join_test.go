package exec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// csvBatch reads CSV text (a header, then rows) as a batch of cols'
// kinds.
func csvBatch(t *testing.T, text string, cols []plan.Column) *Batch {
	t.Helper()
	tab, err := ReadCSV(strings.NewReader(text), 0)
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]plan.Column, len(tab.Columns))
	for i := range texts {
		texts[i].Type = plan.Text
	}
	in := Concat(texts, tab.Batches)
	b := &Batch{N: in.N}
	for i, c := range cols {
		b.Cols = append(b.Cols, readAs(in.Cols[i], c, &ColumnStats{}))
	}
	return b
}

// TestJoinTypes: each join type's rows over left and right rows with a
// key of two columns (a number's equal by value: 1 = 1.0), a NULL in a
// key, unmatched rows on both sides; the unmatched right rows come after
// every left row's.
func TestJoinTypes(t *testing.T) {
	cols := []plan.Column{{Name: "k", Type: plan.Text}, {Name: "n", Type: plan.Number}}
	left := csvBatch(t, "k,n\na,1\na,2\nb,\nc,3\n", cols)
	right := csvBatch(t, "k,n\na,1.0\na,1\nb,\nd,3\nc,3.00\n", cols)
	col := func(i int) *plan.Expr { return &plan.Expr{Kind: plan.ColRef, Col: i, Type: cols[i].Type} }
	key := &plan.Expr{Kind: plan.Call, Fn: plan.FnKey, Type: plan.Text, Args: []*plan.Expr{col(0), col(1)}}
	pairs := "a,1,a,1.0,\na,1,a,1,\nc,3,c,3.00,\n"
	for _, c := range []struct {
		jt   plan.JoinType
		want string
	}{
		{"", pairs},
		{plan.JoinInner, pairs},
		{plan.JoinLeft, "a,1,a,1.0,\na,1,a,1,\na,2,NULL,NULL,\nb,NULL,NULL,NULL,\nc,3,c,3.00,\n"},
		{plan.JoinRight, pairs + "NULL,NULL,b,NULL,\nNULL,NULL,d,3,\n"},
		{plan.JoinFull, "a,1,a,1.0,\na,1,a,1,\na,2,NULL,NULL,\nb,NULL,NULL,NULL,\nc,3,c,3.00,\nNULL,NULL,b,NULL,\nNULL,NULL,d,3,\n"},
	} {
		j := NewJoin(NewKeyTable(), key, key, cols)
		j.SetType(c.jt, cols)
		if err := j.AddRight(right); err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		for _, half := range []*Batch{gatherBatch(left, []int32{0, 1}), gatherBatch(left, []int32{2, 3})} {
			if err := j.ProbeChunks(half, nil, 1, func(b *Batch) error { got.WriteString(b.String()); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.UnmatchedRight(1, func(b *Batch) error { got.WriteString(b.String()); return nil }); err != nil {
			t.Fatal(err)
		}
		if got.String() != c.want {
			t.Errorf("%q join:\n%s\nwant\n%s", c.jt, got.String(), c.want)
		}
	}
}

// TestBuilderAll: builder.all appends a Vec's values as from does one at
// a time, each type with and without NULLs, onto a builder with and
// without NULLs of its own.
func TestBuilderAll(t *testing.T) {
	cols := []plan.Column{{Name: "t", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}}
	full := csvBatch(t, "t,n,b\nab,1.50,true\n,,\ncde,-2,false\nf,3,true\n", cols)
	dense := gatherBatch(full, []int32{3, 0, 2})
	for c, col := range cols {
		for _, pre := range []*Batch{gatherBatch(full, nil), gatherBatch(full, []int32{1}), dense} {
			for _, srcs := range [][]*Batch{{full}, {dense}, {dense, full, dense}} {
				want, got := newBuilder(col.Type, 0), newBuilder(col.Type, 0)
				got.all(pre.Cols[c])
				for i := range pre.N {
					want.from(pre.Cols[c], i)
				}
				for _, src := range srcs {
					got.all(src.Cols[c])
					for i := range src.N {
						want.from(src.Cols[c], i)
					}
				}
				w, g := &Batch{N: want.v.N, Cols: []*Vec{want.v}}, &Batch{N: got.v.N, Cols: []*Vec{got.v}}
				if g.String() != w.String() || (got.v.Null == nil) != (want.v.Null == nil) {
					t.Errorf("%s after %d rows: %q, want %q", col.Name, pre.N, g.String(), w.String())
				}
			}
		}
	}
}

// TestJoinAddRightAllocs: adding right rows of distinct keys allocates
// per batch (its columns, the table's growth), not per key.
func TestJoinAddRightAllocs(t *testing.T) {
	cols := []plan.Column{{Name: "k", Type: plan.Text}}
	var text strings.Builder
	text.WriteString("k\n")
	for i := range 1000 {
		fmt.Fprintf(&text, "key%d\n", i)
	}
	right := csvBatch(t, text.String(), cols)
	key := &plan.Expr{Kind: plan.ColRef, Col: 0, Type: plan.Text}
	allocs := testing.AllocsPerRun(5, func() {
		if err := NewJoin(NewKeyTable(), key, key, cols).AddRight(right); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 100 {
		t.Errorf("AddRight of 1000 keys: %v allocations, want at most 100", allocs)
	}
}

// TestJoinAddRightGrowth: a join's lists of each key's rows and its view
// of the table double as batches of new keys come, so that a join of
// many rows copies them a few times (append grows a large slice by a
// quarter: the lists of every player row of a shard, copied ten times
// over).
func TestJoinAddRightGrowth(t *testing.T) {
	cols := []plan.Column{{Name: "k", Type: plan.Text}}
	var batches []*Batch
	for b := range 200 {
		bl := newBuilder(plan.Text, 1000)
		for i := range 1000 {
			bl.text(fmt.Appendf(nil, "key%d", b*1000+i))
		}
		batches = append(batches, &Batch{N: 1000, Cols: []*Vec{bl.v}})
	}
	key := &plan.Expr{Kind: plan.ColRef, Col: 0, Type: plan.Text}
	j := NewJoin(NewKeyTable(), key, key, cols)
	var grown int
	next, first, local := cap(j.next), cap(j.first), cap(j.v.local)
	for _, b := range batches {
		if err := j.AddRight(b); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			was *int
			now int
		}{{&next, cap(j.next)}, {&first, cap(j.first)}, {&local, cap(j.v.local)}} {
			if c.now != *c.was {
				grown++
				*c.was = c.now
			}
		}
	}
	if grown > 35 {
		t.Errorf("200,000 right rows of as many keys: their lists and view grew %d times, want at most 35 (doubling: 23; by a quarter: 55)", grown)
	}
}

// TestJoinRightChunks: a join's right rows past a chunk's (rowChunks)
// are the rows added, whole (Right), gathered by row (runs of rows
// across a chunk's end, NULL rows) and probed; and a row once held does
// not move as more come (the right rows of a large join were copied
// whole each time their Vecs grew).
func TestJoinRightChunks(t *testing.T) {
	cols := []plan.Column{{Name: "k", Type: plan.Text}, {Name: "s", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "f", Type: plan.Bool}}
	const n = 2*chunkRows + 777
	var batches []*Batch
	for from := 0; from < n; from += 1000 {
		b := &Batch{N: min(1000, n-from)}
		bls := make([]*builder, len(cols))
		for c, col := range cols {
			bls[c] = newBuilder(col.Type, b.N)
		}
		for i := from; i < from+b.N; i++ {
			bls[0].text(fmt.Appendf(nil, "%d", i%5000))
			if i%7 == 0 {
				bls[1].null()
			} else {
				bls[1].text(fmt.Appendf(nil, "%s%d", strings.Repeat("x", i%13), i))
			}
			bls[2].num(value.Int(int64(i)))
			bls[3].boolean(i%2 == 0)
		}
		for _, bl := range bls {
			b.Cols = append(b.Cols, bl.v)
		}
		batches = append(batches, b)
	}
	all := Concat(cols, batches)
	key := &plan.Expr{Kind: plan.ColRef, Col: 0, Type: plan.Text}
	j := NewJoin(NewKeyTable(), key, key, cols)
	var first *byte
	for _, b := range batches {
		if err := j.AddRight(b); err != nil {
			t.Fatal(err)
		}
		if first == nil && j.RightRows() >= chunkRows {
			first = &j.right.chunks[0][0].v.Data[0]
		}
	}
	if got := &j.right.chunks[0][0].v.Data[0]; got != first {
		t.Errorf("the first chunk's texts moved as rows were added")
	}
	if len(j.right.chunks) != 3 {
		t.Errorf("%d chunks of %d rows, want 3", len(j.right.chunks), n)
	}
	if got, want := j.Right().String(), all.String(); got != want {
		t.Errorf("Right is not the rows added")
	}
	rows := []int32{0, chunkRows - 2, chunkRows - 1, chunkRows, chunkRows + 1, -1, 2 * chunkRows, 5, 6, 7, n - 1, chunkRows - 1, -1}
	if got, want := j.gatherRight(rows).String(), gatherBatch(all, rows).String(); got != want {
		t.Errorf("gathered right rows:\n%s\nwant:\n%s", got, want)
	}
	var want []int32
	for i := range n {
		if i%5000 == 42 {
			want = append(want, int32(i))
		}
	}
	probe := csvBatch(t, "k\n42\n", cols[:1])
	got, err := j.Probe(probe)
	if err != nil {
		t.Fatal(err)
	}
	wantRows := gatherBatch(all, want)
	wantRows.Cols = append([]*Vec{gatherBatch(probe, make([]int32, len(want))).Cols[0]}, wantRows.Cols...)
	if got.String() != wantRows.String() {
		t.Errorf("probed:\n%s\nwant:\n%s", got, wantRows)
	}
}

// TestJoinGivenSlotsKeyNulls: a join given its rows' slots (looked up by
// a task for every operator of its table, a NULL key's slot among them
// when another operator adds it) adds no right row and probes no left
// row whose key of several columns has a NULL, as one that looks its
// keys up itself; and it reads their NULLs without making the key.
func TestJoinGivenSlotsKeyNulls(t *testing.T) {
	cols := []plan.Column{{Name: "k", Type: plan.Text}, {Name: "n", Type: plan.Number}}
	left := csvBatch(t, "k,n\na,1\nb,\nc,3\n,3\n", cols) // "": a text, not a NULL
	right := csvBatch(t, "k,n\na,1\nb,\n,3\nc,3\n", cols)
	col := func(i int) *plan.Expr { return &plan.Expr{Kind: plan.ColRef, Col: i, Type: cols[i].Type} }
	key := &plan.Expr{Kind: plan.Call, Fn: plan.FnKey, Type: plan.Text, Args: []*plan.Expr{col(0), col(1)}}
	rows := func(given bool) string {
		table := NewKeyTable()
		j := NewJoin(table, key, key, cols)
		j.SetType(plan.JoinFull, cols)
		var lsl, rsl []int32
		if given { // every key added, a NULL's too: another operator's slots
			lk, _ := eval(key, left)
			rk, _ := eval(key, right)
			lsl = table.Slots([]*Vec{lk}, left.N, nil, nil)
			rsl = table.Slots([]*Vec{rk}, right.N, nil, nil)
		}
		if err := j.AddRightSlots(right, rsl); err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		each := func(b *Batch) error { got.WriteString(b.String()); return nil }
		if err := j.ProbeChunks(left, lsl, 0, each); err != nil {
			t.Fatal(err)
		}
		if err := j.UnmatchedRight(0, each); err != nil {
			t.Fatal(err)
		}
		return got.String()
	}
	want := "a,1,a,1,\nb,NULL,NULL,NULL,\nc,3,c,3,\n,3,,3,\nNULL,NULL,b,NULL,\n"
	for _, given := range []bool{false, true} {
		if got := rows(given); got != want {
			t.Errorf("slots given %v:\n%s\nwant\n%s", given, got, want)
		}
	}
	dense := csvBatch(t, "k,n\na,1\nb,2\n", cols)
	if allocs := testing.AllocsPerRun(10, func() {
		if _, err := keyNulls(key, dense); err != nil {
			t.Fatal(err)
		}
	}); allocs > 1 {
		t.Errorf("keyNulls of KEY(k, n) without NULLs: %v allocations, want at most 1", allocs)
	}
}
