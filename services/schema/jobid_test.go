package schema

import (
	"strings"
	"testing"
)

func TestJobIDs(t *testing.T) {
	cases := []struct {
		id   string
		want bool
	}{
		{"nightly", true}, {"a-b_C9", true}, {strings.Repeat("x", 64), true},
		{"", false}, {strings.Repeat("x", 65), false}, {"a b", false}, {"a/b", false}, {"é", false}, {"a\x00", false},
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
