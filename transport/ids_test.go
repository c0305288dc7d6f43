package transport

import (
	"strings"
	"testing"
)

func TestJobIDs(t *testing.T) {
	cases := []struct {
		id   string
		want bool
	}{
		{"nightly", true}, {"a-b_C9", true}, {strings.Repeat("x", MaxJobIDLen), true},
		{"", false}, {strings.Repeat("x", MaxJobIDLen+1), false}, {"a b", false}, {"a/b", false},
		{"é", false}, {"a\x00b", false}, {"a\xff", false}, {strings.Repeat("x", 1<<20), false},
	}
	for _, c := range cases {
		if got := ValidJobID(c.id); got != c.want {
			t.Errorf("ValidJobID(%q) = %v, want %v", c.id, got, c.want)
		}
	}
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		id := NewJobID()
		if !ValidJobID(id) || len(id) != 12 || seen[id] {
			t.Fatalf("NewJobID gave %q (valid %v, seen %v)", id, ValidJobID(id), seen[id])
		}
		seen[id] = true
	}
}

func FuzzValidJobID(f *testing.F) {
	for _, s := range []string{"", "a", "nightly", "a\x00", "é", strings.Repeat("z", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if !ValidJobID(id) {
			return
		}
		if len(id) > MaxJobIDLen || strings.ContainsAny(id, "\x00/ \n\"") {
			t.Fatalf("ValidJobID accepted %q", id)
		}
	})
}
