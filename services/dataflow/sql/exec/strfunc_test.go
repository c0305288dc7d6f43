package exec

import "testing"

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
