package incr

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRefLists holds refLists to a slice per slot through random adds
// and clears: every list the same rows in the same order, the count of
// rows right, and the nodes of cleared lists used again.
func TestRefLists(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var l refLists
	var want [][]ref
	for step := range 5000 {
		if n := r.IntN(3); n == 0 || len(want) == 0 {
			want = append(want, nil)
			l.grow(len(want))
		}
		s := int32(r.IntN(len(want)))
		if r.IntN(4) == 0 {
			l.clear(s)
			want[s] = nil
		} else {
			x := ref{b: int32(step), r: int32(r.IntN(100))}
			l.add(s, x)
			want[s] = append(want[s], x)
		}
	}
	rows := 0
	for s, w := range want {
		if got := l.appendTo(nil, int32(s)); !slices.Equal(got, w) {
			t.Fatalf("slot %d: %v, want %v", s, got, w)
		}
		rows += len(w)
	}
	if l.n != rows || len(l.refs) >= 5000 {
		t.Fatalf("%d rows in %d nodes, want %d rows, fewer nodes than the 5000 steps", l.n, len(l.refs), rows)
	}
}
