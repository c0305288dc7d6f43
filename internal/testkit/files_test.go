package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSameFiles(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"a.csv": "x\n1\n", "b.csv": "y\n2\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want map[string][]byte, failures ...string) {
		t.Helper()
		r := &recordingT{TB: t}
		SameFiles(r, dir, want)
		if len(r.failures) != len(failures) {
			t.Fatalf("SameFiles(%q) failed %q, want %d failures", want, r.failures, len(failures))
		}
		for i, f := range failures {
			if !strings.Contains(r.failures[i], f) {
				t.Errorf("failure %q does not say %q", r.failures[i], f)
			}
		}
	}
	check(map[string][]byte{"a.csv": []byte("x\n1\n"), "b.csv": []byte("y\n2\n")})
	check(map[string][]byte{"a.csv": []byte("x\n1\n")})
	check(map[string][]byte{"a.csv": []byte("x\n1\r\n"), "b.csv": []byte("y\n2\n")}, `a.csv differs:`)
	check(map[string][]byte{"a.csv": []byte("x\n1\n"), "c.csv": nil}, "c.csv: open")
	check(nil, "nothing to compare")
}

func TestSameBytes(t *testing.T) {
	got := map[string][]byte{"q1": []byte("token\n"), "q2": []byte("token\na\n")}
	r := &recordingT{TB: t}
	SameBytes(r, got, map[string][]byte{"q1": []byte("token\n"), "q2": []byte("token\nb\n"), "q3": nil})
	if len(r.failures) != 2 || !strings.Contains(r.failures[0], "q2 differs") || r.failures[1] != "q3: missing" {
		t.Errorf("failures %q, want q2 differs, q3 missing", r.failures)
	}
}
