package transport

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
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

// TestCleanReason: a failure reason keeps its printable text (any script)
// and loses every control: a terminal's colour escape, a carriage return
// that would overwrite the line, line breaks, C1 controls, bidirectional
// overrides; invalid bytes show as U+FFFD; a long one is cut at a whole
// rune within MaxReasonLen.
func TestCleanReason(t *testing.T) {
	cases := []struct{ in, want string }{
		{"shard-1 lost this job's state", "shard-1 lost this job's state"},
		{"état perdu: 数据 丢失 ✓", "état perdu: 数据 丢失 ✓"},
		{"\x1b[31mre-submit at https://evil\x1b[0m\r\nok", " [31mre-submit at https://evil [0m  ok"},
		{"a\tb\x00c\x7fd\u0085e\u009bf", "a b c d e f"},
		{"x\u202eevil\u2028y", "x evil y"},
		{"bad \xff byte", "bad \ufffd byte"},
	}
	for _, c := range cases {
		if got := CleanReason(c.in); got != c.want {
			t.Errorf("CleanReason(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := strings.Repeat("é", MaxReasonLen) // 2 bytes each
	if got := CleanReason(long); len(got) != MaxReasonLen || got != strings.Repeat("é", MaxReasonLen/2) {
		t.Errorf("a reason of %d bytes cleaned to %d bytes, want %d whole runes", len(long), len(got), MaxReasonLen/2)
	}
	if got := CleanReason("a" + long); len(got) != MaxReasonLen-1 || !utf8.ValidString(got) {
		t.Errorf("a reason cut inside a rune: %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}

func FuzzCleanReason(f *testing.F) {
	for _, s := range []string{"", "ok", "\x1b[31mred\r\n", "\xff\xfe", strings.Repeat("é", 600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reason string) {
		got := CleanReason(reason)
		if len(got) > MaxReasonLen || !utf8.ValidString(got) {
			t.Fatalf("CleanReason(%q) = %q: %d bytes, valid UTF-8 %v", reason, got, len(got), utf8.ValidString(got))
		}
		for _, r := range got {
			if r != ' ' && !unicode.IsPrint(r) {
				t.Fatalf("CleanReason(%q) = %q keeps %U", reason, got, r)
			}
		}
	})
}
