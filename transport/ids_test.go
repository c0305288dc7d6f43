package transport

import (
	"strings"
	"testing"
)

func TestValidJob(t *testing.T) {
	cases := []struct {
		job  string
		want bool
	}{
		{"nightly", true}, {"a-b_C9", true}, {"Z", true}, {strings.Repeat("x", MaxJobLen), true},
		{"", false}, {strings.Repeat("x", MaxJobLen+1), false}, {"a b", false}, {"a/b", false}, {"a.b", false},
		{"é", false}, {"a\x00b", false}, {"a\xff", false}, {"a\n", false}, {strings.Repeat("x", 1<<20), false},
	}
	for _, c := range cases {
		if got := ValidJob(c.job); got != c.want {
			t.Errorf("ValidJob(%q) = %v, want %v", c.job, got, c.want)
		}
	}
}

func FuzzValidJob(f *testing.F) {
	for _, s := range []string{"", "a", "nightly", "a\x00", "é", strings.Repeat("z", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, job string) {
		if !ValidJob(job) {
			return
		}
		if len(job) > MaxJobLen || strings.ContainsAny(job, "\x00/ \n\".") {
			t.Fatalf("ValidJob accepted %q", job)
		}
	})
}
