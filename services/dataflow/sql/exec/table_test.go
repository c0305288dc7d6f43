package exec

import (
	"fmt"
	"strings"
	"testing"
)

// TestKeyTable: slots are numbered in the order keys first come, stay the
// same as the index grows, and a key's bytes (the empty key, prefixes of
// one another) are the key.
func TestKeyTable(t *testing.T) {
	for _, n := range []int{0, 1, 47, 48, 49, 1000, 100_000} {
		tab := NewKeyTable()
		keys := [][]byte{{}, {0}, {0, 0}}
		for i := range n {
			keys = append(keys, fmt.Appendf(nil, "key-%d", i))
		}
		for round := range 2 { // the second round finds every key
			for s, k := range keys {
				if got := tab.slot(k); got != int32(s) {
					t.Fatalf("n=%d round %d: slot(%q) = %d, want %d", n, round, k, got, s)
				}
			}
		}
		if tab.Len() != len(keys) {
			t.Errorf("n=%d: Len %d, want %d", n, tab.Len(), len(keys))
		}
		for s, k := range keys {
			if got, ok := tab.lookup(k); !ok || got != int32(s) || string(tab.key(got)) != string(k) {
				t.Errorf("n=%d: lookup(%q) = %d, %v", n, k, got, ok)
			}
		}
		if _, ok := tab.lookup([]byte("absent")); ok {
			t.Errorf("n=%d: lookup of an absent key", n)
		}
		if 4*tab.Len() >= 3*len(tab.index) {
			t.Errorf("n=%d: %d keys in an index of %d", n, tab.Len(), len(tab.index))
		}
	}
}

// TestReadCSVColumns: the columns not kept read as empty text, the kept
// ones as ReadCSV reads them, and records are counted the same.
func TestReadCSVColumns(t *testing.T) {
	const file = "a,b,c\n1,x,p\n2,y\n3,\"z,z\",q\n"
	all, err := ReadCSV(strings.NewReader(file), 0)
	if err != nil {
		t.Fatal(err)
	}
	some, err := ReadCSVColumns(strings.NewReader(file), 0, []string{"b", "nothere"})
	if err != nil {
		t.Fatal(err)
	}
	if some.Rows != 3 || some.Malformed != 1 || all.Rows != 3 || all.Malformed != 1 || len(some.Batches) != 1 {
		t.Fatalf("counts: %+v, ReadCSV's %+v", some, all)
	}
	b, want := some.Batches[0], all.Batches[0]
	for c := range 3 {
		for i := range b.N {
			got, w := string(b.Cols[c].Text(i)), string(want.Cols[c].Text(i))
			if c != 1 {
				w = ""
			}
			if got != w || b.Cols[c].IsNull(i) {
				t.Errorf("column %d row %d: %q, want %q", c, i, got, w)
			}
		}
	}
}
