package exec

import (
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// TestSubstr pins PostgreSQL's SUBSTR: positions before 1 count towards
// the length, a negative length is an error.
func TestSubstr(t *testing.T) {
	cases := []struct {
		s            string
		start, count int
		has          bool
		want         string
	}{
		{"hello", 2, 0, false, "ello"},
		{"hello", 0, 2, true, "h"},
		{"hello", -5, 3, true, ""},
		{"hello", -1, 4, true, "he"},
		{"hello", -3, 0, false, "hello"},
		{"hello", 4, 9, true, "lo"},
		{"hello", 9, 1, true, ""},
		{"héé", 2, 1, true, "é"},
		{"\xffz", 2, 1, true, "z"},
	}
	for _, c := range cases {
		got, err := substr([]byte(c.s), c.start, c.count, c.has)
		if err != nil || string(got) != c.want {
			t.Errorf("substr(%q, %d, %d, %v) = %q, %v; want %q", c.s, c.start, c.count, c.has, got, err, c.want)
		}
	}
	if _, err := substr([]byte("hello"), 1, -1, true); err == nil {
		t.Error("substr of a negative length: no error")
	}
	if got, err := substr([]byte("hello"), 2, int(^uint(0)>>1), true); err != nil || string(got) != "ello" {
		t.Errorf("substr of the largest length = %q, %v", got, err)
	}
}

// TestLeftRightSplitPart pins LEFT, RIGHT (PostgreSQL's and DuckDB's: a
// negative length drops characters from the other end) and SPLIT_PART
// (DuckDB's: a negative field counts from the end, 0 and fields out of
// range are ”, an empty delimiter splits characters), in characters.
func TestLeftRightSplitPart(t *testing.T) {
	for _, c := range []struct {
		s           string
		k           int
		left, right string
	}{
		{"hello", 2, "he", "lo"}, {"hello", -2, "hel", "llo"}, {"hello", 10, "hello", "hello"}, {"hello", -10, "", ""},
		{"hello", 0, "", ""}, {"héllo", 2, "hé", "lo"}, {"héllo", -4, "h", "o"}, {"\xffz", 1, "\xff", "z"}, {"", 3, "", ""},
	} {
		if l, r := string(leftRight([]byte(c.s), c.k, true)), string(leftRight([]byte(c.s), c.k, false)); l != c.left || r != c.right {
			t.Errorf("LEFT/RIGHT(%q, %d) = %q, %q; want %q, %q", c.s, c.k, l, r, c.left, c.right)
		}
	}
	for _, c := range []struct {
		s, d string
		k    int
		want string
	}{
		{"a,b,c", ",", 2, "b"}, {"a,b,c", ",", -1, "c"}, {"a,b,c", ",", -3, "a"}, {"a,b,c", ",", -4, ""}, {"a,b,c", ",", 0, ""},
		{"a,b", ",", 5, ""}, {"a,,b", ",", 2, ""}, {"a--b--c", "--", 2, "b"}, {"abc", "", 2, "b"}, {"héb", "", 2, "é"},
		{"abc", "x", 1, "abc"}, {"abc", "x", 2, ""}, {"", ",", 1, ""},
	} {
		if got := string(splitPart([]byte(c.s), []byte(c.d), c.k)); got != c.want {
			t.Errorf("SPLIT_PART(%q, %q, %d) = %q, want %q", c.s, c.d, c.k, got, c.want)
		}
	}
}

// TestExtractField: EXTRACT's fields of a duration's seconds.
func TestExtractField(t *testing.T) {
	secs := value.Int(2*86400 + 3*3600 + 4*60 + 5) // 2 days, 3:04:05
	for field, want := range map[string]string{"epoch": "183845", "day": "2", "hour": "3", "minute": "4", "second": "5"} {
		if got, err := extractField(secs, field); err != nil || got.String() != want {
			t.Errorf("EXTRACT(%s) = %s, %v; want %s", field, got, err, want)
		}
	}
	for field, want := range map[string]string{"day": "0", "hour": "23", "minute": "59", "second": "59"} {
		if got, _ := extractField(value.Int(86399), field); got.String() != want {
			t.Errorf("EXTRACT(%s) of 23:59:59 = %s, want %s", field, got, want)
		}
	}
	if _, err := extractField(secs, "year"); err == nil {
		t.Error("EXTRACT(year): no error")
	}
}
