package batch

import (
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/schema"
)

// fill adds n rows of every kind to b.
func fill(b *Builders, n int) {
	for range n {
		b.Match.Add(&Match{Token: []byte("t"), Ladder: []byte("l"), Map: []byte("m"), Server: []byte("s"), AverageRating: schema.NumberFromUnits(1), HasAverageRating: true})
		b.Player.Add(&Player{Match: []byte("t"), Civ: []byte("c")})
		b.Token.Add([]byte("t"))
		b.Civ.Add("c", 1, 2)
		b.Column.Add([][]byte{[]byte("t"), nil}, []bool{false, true})
	}
}

// TestKindsCoverTheProto fails when RowBatch's oneof gains a kind the
// table does not describe, or the table's order is not the oneof's: the
// builder of entry i must build the oneof's i-th field, and rows must
// count it and no other kind.
func TestKindsCoverTheProto(t *testing.T) {
	oneof := (&wololov1.RowBatch{}).ProtoReflect().Descriptor().Oneofs().ByName("rows")
	if oneof.Fields().Len() != len(kinds) {
		t.Fatalf("RowBatch has %d row kinds, the table describes %d", oneof.Fields().Len(), len(kinds))
	}
	var b Builders
	fill(&b, 3)
	for i, k := range kinds {
		rb := k.of(&b).Build()
		set := rb.ProtoReflect().WhichOneof(oneof)
		if set == nil || set.Index() != i {
			t.Errorf("entry %d (%s) builds %v, want the oneof's field %s", i, k.name, set, oneof.Fields().Get(i).Name())
		}
		for j, other := range kinds {
			n, ok := other.rows(rb)
			if ok != (i == j) || (ok && n != 3) {
				t.Errorf("%s's rows of a %s batch = %d, %v", other.name, k.name, n, ok)
			}
		}
		if Rows(rb) != 3 {
			t.Errorf("Rows of a %s batch = %d, want 3", k.name, Rows(rb))
		}
	}
	if Rows(&wololov1.RowBatch{}) != 0 {
		t.Error("Rows of an empty batch is not 0")
	}
}

func TestBuilders(t *testing.T) {
	var b Builders
	fill(&b, 2)
	if b.Len() != 2*len(kinds) {
		t.Fatalf("Len = %d, want %d", b.Len(), 2*len(kinds))
	}
	var built []*wololov1.RowBatch
	b.Build(func(rb *wololov1.RowBatch) { built = append(built, rb) })
	if len(built) != len(kinds) || b.Len() != 0 {
		t.Fatalf("Build made %d batches and left %d rows, want %d and 0", len(built), b.Len(), len(kinds))
	}
	for _, rb := range built {
		if Rows(rb) != 2 {
			t.Errorf("a built batch has %d rows, want 2", Rows(rb))
		}
	}

	// Only the kinds with rows are built.
	b.Token.Add([]byte("x"))
	built = built[:0]
	b.Build(func(rb *wololov1.RowBatch) { built = append(built, rb) })
	if len(built) != 1 || built[0].GetTokens() == nil {
		t.Errorf("Build of tokens alone made %v", built)
	}

	// Reset drops the rows; the next build starts empty.
	fill(&b, 5)
	b.Reset()
	if b.Len() != 0 {
		t.Errorf("Len after Reset = %d", b.Len())
	}
	b.Civ.Add("c", 1, 1)
	built = built[:0]
	b.Build(func(rb *wololov1.RowBatch) { built = append(built, rb) })
	if len(built) != 1 || Rows(built[0]) != 1 {
		t.Errorf("after Reset, Build made %v", built)
	}

	// BuildErr stops at the first error and keeps the rest.
	fill(&b, 1)
	stop := errFake{}
	calls := 0
	if err := b.BuildErr(func(*wololov1.RowBatch) error { calls++; return stop }); err != stop || calls != 1 || b.Len() != len(kinds)-1 {
		t.Errorf("BuildErr = %v after %d calls, %d rows left; want the error after 1, %d left", err, calls, b.Len(), len(kinds)-1)
	}
}

type errFake struct{}

func (errFake) Error() string { return "fake" }
