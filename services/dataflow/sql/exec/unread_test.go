package exec

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// TestJoinSetRead: a join told which of its output columns are read
// makes the others unread (NULLs, of no memory of their own, gathered as
// unread again) and the read ones as it made them before, of each join
// type, the unmatched rows of both sides included.
func TestJoinSetRead(t *testing.T) {
	cols := []plan.Column{{Name: "k", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}}
	left := csvBatch(t, "k,n,b\na,1,true\na,2,false\nb,,true\nc,3,\n", cols)
	right := csvBatch(t, "k,n,b\na,1.0,false\na,1,true\nb,,\nd,3,true\nc,3.00,false\n", cols)
	key := &plan.Expr{Kind: plan.ColRef, Col: 0, Type: plan.Text}
	// rows is the join's rows, their columns at read only (nil: all).
	rows := func(jt plan.JoinType, read []bool) (out []*Batch) {
		j := NewJoin(NewKeyTable(), key, key, cols)
		j.SetType(jt, cols)
		j.SetRead(read)
		if err := j.AddRight(right); err != nil {
			t.Fatal(err)
		}
		each := func(b *Batch) error { out = append(out, b); return nil }
		if err := j.ProbeChunks(left, nil, 2, each); err != nil {
			t.Fatal(err)
		}
		if err := j.UnmatchedRight(2, each); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, jt := range []plan.JoinType{plan.JoinInner, plan.JoinLeft, plan.JoinRight, plan.JoinFull} {
		for _, read := range [][]bool{
			{false, true, false, false, false, true},
			{true, false, true, true, true, false},
			{false, false, false, false, false, false},
		} {
			all, some := rows(jt, nil), rows(jt, read)
			if len(all) != len(some) {
				t.Fatalf("%q join, read %v: %d chunks, want %d", jt, read, len(some), len(all))
			}
			for k, b := range some {
				for c, v := range b.Cols {
					want := all[k].Cols[c]
					if !read[c] {
						if !isUnread(v) || v.N != want.N || v.Type != want.Type || v.Bytes() != 0 {
							t.Errorf("%q join, read %v: column %d of chunk %d is not unread: %+v", jt, read, c, k, v)
						}
						want = unread(v.Type, v.N)
					}
					g, w := &Batch{N: v.N, Cols: []*Vec{v}}, &Batch{N: want.N, Cols: []*Vec{want}}
					if g.String() != w.String() {
						t.Errorf("%q join, read %v: column %d of chunk %d %q, want %q", jt, read, c, k, g, w)
					}
				}
			}
		}
	}
}

// TestUnread: an unread Vec is every row NULL, of each type, and of no
// memory of its own; its rows gathered are another, made with no
// allocation but the Vec's; past the shared backing's rows it is a Vec
// of NULLs of its own.
func TestUnread(t *testing.T) {
	for _, typ := range []plan.Type{plan.Text, plan.Number, plan.Bool} {
		for _, n := range []int{1, 3, unreadRows, unreadRows + 1} {
			v := unread(typ, n)
			if v.N != n || v.Type != typ {
				t.Fatalf("unread(%s, %d): %d rows of %s", typ, n, v.N, v.Type)
			}
			for i := range n {
				if !v.IsNull(i) {
					t.Fatalf("unread(%s, %d): row %d not NULL", typ, n, i)
				}
			}
			if shared := n <= unreadRows; isUnread(v) != shared || (v.Bytes() == 0) != shared {
				t.Errorf("unread(%s, %d): isUnread %v, %d bytes", typ, n, isUnread(v), v.Bytes())
			}
		}
		v := unread(typ, 100)
		rows := []int32{99, 3, -1, 3}
		g := gather(v, rows)
		if !isUnread(g) || g.N != len(rows) || g.Type != typ {
			t.Errorf("gather of unread(%s): %+v", typ, g)
		}
		if allocs := testing.AllocsPerRun(10, func() { gather(v, rows) }); allocs > 1 {
			t.Errorf("gather of unread(%s): %v allocations, want 1", typ, allocs)
		}
	}
	if got := (&Batch{N: 2, Cols: []*Vec{unread(plan.Text, 2)}}).String(); got != strings.Repeat("NULL,\n", 2) {
		t.Errorf("unread text: %q", got)
	}
}

// TestRowFilterSetRead: a filter told which of its columns are read
// keeps the same rows, the read columns as it made them before and the
// others unread; all its rows kept, the batch is its input itself.
func TestRowFilterSetRead(t *testing.T) {
	cols := []plan.Column{{Name: "k", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}}
	in := csvBatch(t, "k,n,b\na,1,true\nb,2,false\nc,,true\nd,3,\n", cols)
	cond := &plan.Expr{Kind: plan.ColRef, Col: 2, Type: plan.Bool}
	all, err := NewRowFilter(cond).Apply(in)
	if err != nil {
		t.Fatal(err)
	}
	f := NewRowFilter(cond)
	f.SetRead([]bool{true, false, true})
	got, err := f.Apply(in)
	if err != nil {
		t.Fatal(err)
	}
	if got.N != 2 || all.N != 2 || !isUnread(got.Cols[1]) || isUnread(got.Cols[0]) || isUnread(got.Cols[2]) {
		t.Fatalf("%d rows (%d with every column read), unread: %v %v %v; want 2, only n unread", got.N, all.N, isUnread(got.Cols[0]), isUnread(got.Cols[1]), isUnread(got.Cols[2]))
	}
	for _, k := range []int{0, 2} {
		if a, b := (&Batch{N: 2, Cols: []*Vec{got.Cols[k]}}).String(), (&Batch{N: 2, Cols: []*Vec{all.Cols[k]}}).String(); a != b {
			t.Errorf("column %d: %q, want %q", k, a, b)
		}
	}
	every := NewRowFilter(&plan.Expr{Kind: plan.Const, Type: plan.Bool, Value: []byte("true")})
	every.SetRead([]bool{false, false, false})
	if b, err := every.Apply(in); err != nil || b != in {
		t.Errorf("every row kept: %v, %v", b == in, err)
	}
}
