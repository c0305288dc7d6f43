package datagen

import (
	"bytes"
	"strings"
	"testing"
)

// TestHeadersAreWhatIsWritten: Headers names the header rows Generate
// writes, column for column.
func TestHeadersAreWhatIsWritten(t *testing.T) {
	var m, p bytes.Buffer
	if _, err := Generate(Config{Matches: 3, Seed: 1}, &m, &p); err != nil {
		t.Fatal(err)
	}
	mh, ph := Headers()
	for _, f := range []struct {
		file []byte
		want []string
	}{{m.Bytes(), mh}, {p.Bytes(), ph}} {
		first, _, _ := strings.Cut(string(f.file), "\n")
		if got := strings.TrimSuffix(first, "\r"); got != strings.Join(f.want, ",") {
			t.Errorf("header %q, Headers says %q", got, f.want)
		}
	}
	mh[0] = "changed"
	if again, _ := Headers(); again[0] == "changed" {
		t.Error("Headers returned the generator's own array")
	}
}
