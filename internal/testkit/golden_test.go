package testkit

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// recordingT is a testing.TB whose failures are recorded instead of
// failing the test, so that a helper's failures can be checked.
type recordingT struct {
	testing.TB
	failures []string
}

func (r *recordingT) Helper() {}

func (r *recordingT) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recordingT) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

func TestGoldenComparesAndRewrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testdata", "deep", "out.golden")
	check := func(got string, rewrite bool, wantFailure ...string) {
		t.Helper()
		r := &recordingT{TB: t}
		golden(r, path, []byte(got), rewrite)
		if len(wantFailure) == 0 && len(r.failures) > 0 {
			t.Fatalf("golden(%q, rewrite %v) failed: %q", got, rewrite, r.failures)
		}
		if len(wantFailure) > 0 && len(r.failures) != 1 {
			t.Fatalf("golden(%q, rewrite %v) failed %d times, want once: %q", got, rewrite, len(r.failures), r.failures)
		}
		for _, w := range wantFailure {
			if !strings.Contains(r.failures[0], w) {
				t.Errorf("the failure %q does not say %q", r.failures[0], w)
			}
		}
	}
	check("one\ntwo\n", false, "does not exist", "-update", "one\ntwo\n")
	check("one\ntwo\n", true) // -update: written, directories made
	if b, err := os.ReadFile(path); err != nil || string(b) != "one\ntwo\n" {
		t.Fatalf("-update wrote %q, %v", b, err)
	}
	check("one\ntwo\n", false)
	check("one\n2\n", false, path, "-two\n+2\n", "-update")
	check("one\n2\n", true)
	check("one\n2\n", false)
}

func TestUpdateFlagIsRegistered(t *testing.T) {
	f := flag.Lookup("update")
	if f == nil || f.DefValue != "false" {
		t.Fatalf("the -update flag: %+v", f)
	}
}

func TestDiff(t *testing.T) {
	long := func(from, to int, change map[int]string) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			if s, ok := change[i]; ok {
				b.WriteString(s)
				continue
			}
			fmt.Fprintf(&b, "l%d\n", i)
		}
		return b.String()
	}
	cases := []struct {
		name, a, b, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"a line changed", "a\nb\nc\n", "a\nB\nc\n", " a\n-b\n+B\n c\n"},
		{"a line added first", "a\n", "z\na\n", "+z\n a\n"},
		{"the last newline dropped", "a\n", "a", "-a\n+a\n\\ no newline at the end\n"},
		{"from nothing", "", "a\n", "+a\n"},
		{"far apart changes, the equal run between elided", long(1, 12, nil), long(1, 12, map[int]string{2: "two\n", 11: ""}),
			" l1\n-l2\n+two\n l3\n l4\n  ... 4 equal lines (up to line 8)\n l9\n l10\n-l11\n l12\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Diff(c.a, c.b); got != c.want {
				t.Errorf("Diff:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestParseScript(t *testing.T) {
	cmds, err := ParseScript(strings.NewReader("# about a\n#  and more\na 1 2  # trailing\n\n# a paragraph\n\n\n# of b\n\nb\n   \n\tc\t3\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{
		{Line: 3, Text: "a 1 2", Args: []string{"a", "1", "2"}, Notes: []string{"about a", "and more"}},
		{Line: 10, Text: "b", Args: []string{"b"}, Notes: []string{"a paragraph", "", "of b"}},
		{Line: 12, Text: "c\t3", Args: []string{"c", "3"}},
	}
	if !reflect.DeepEqual(cmds, want) {
		t.Errorf("parsed\n%+v\nwant\n%+v", cmds, want)
	}
}

// TestGoldenScript runs testdata/sum.txt, a script that adds numbers, and
// compares the record with testdata/sum.golden: the helper used as the
// golden tests of the module use it.
func TestGoldenScript(t *testing.T) {
	total := 0
	GoldenScript(t, "sum.txt", "sum.golden", func(w io.Writer, c Command) error {
		switch c.Args[0] {
		case "add":
			for _, a := range c.Args[1:] {
				var n int
				if _, err := fmt.Sscan(a, &n); err != nil {
					return err
				}
				total += n
			}
		case "print":
		default:
			return errors.New("unknown command")
		}
		fmt.Fprintf(w, "total %d\n", total)
		return nil
	})
}

func TestGoldenScriptNamesTheFailingLine(t *testing.T) {
	r := &recordingT{TB: t}
	GoldenScript(r, "sum.txt", "sum.golden", func(w io.Writer, c Command) error {
		if c.Args[0] == "print" {
			return errors.New("no printer")
		}
		return nil
	})
	if len(r.failures) != 1 || r.failures[0] != "sum.txt:8: print: no printer" {
		t.Errorf("failures %q, want the one of line 8", r.failures)
	}
}
