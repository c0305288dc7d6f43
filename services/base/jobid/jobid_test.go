package jobid

import (
	"strings"
	"testing"
)

func TestIDs(t *testing.T) {
	cases := []struct {
		id   string
		want bool
	}{
		{"nightly", true}, {"a-b_C9", true}, {strings.Repeat("x", MaxLen), true},
		{"", false}, {strings.Repeat("x", MaxLen+1), false}, {"a b", false}, {"a/b", false},
		{"é", false}, {"a\x00b", false}, {"a\xff", false}, {strings.Repeat("x", 1<<20), false},
	}
	for _, c := range cases {
		if got := Valid(c.id); got != c.want {
			t.Errorf("Valid(%q) = %v, want %v", c.id, got, c.want)
		}
	}
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		id := New()
		if !Valid(id) || len(id) != 12 || seen[id] {
			t.Fatalf("New gave %q (valid %v, seen %v)", id, Valid(id), seen[id])
		}
		seen[id] = true
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{"", "a", "nightly", "a\x00", "é", strings.Repeat("z", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if !Valid(id) {
			return
		}
		if len(id) > MaxLen || strings.ContainsAny(id, "\x00/ \n\"") {
			t.Fatalf("Valid accepted %q", id)
		}
	})
}
