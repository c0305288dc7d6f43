package chaos

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestSplitInputKeepsRecordsWhole: the parts of a file hold its records
// whole, a quoted field with a line break, a malformed record and blank
// lines included, each part under the file's header (its byte order mark
// too); the prefixes are the header and the records of the parts so
// far, the last one the file itself.
func TestSplitInputKeepsRecordsWhole(t *testing.T) {
	header := "\ufeffa,b\r\n"
	records := []string{"1,x\r\n", "2,\"two\nlines\"\r\n", "\r\n", "3,\"bad\"quote\n", "4,y\n", "5,\"q,\"\"\"\n", "6,last"}
	var file bytes.Buffer
	file.WriteString(header)
	for _, r := range records {
		file.WriteString(r)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= len(records)+1; n++ {
		out := t.TempDir()
		parts, prefixes, err := splitInput(path, out, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) != n || len(prefixes) != n || prefixes[n-1] != path {
			t.Fatalf("n=%d: %d parts, prefixes %v", n, len(parts), prefixes)
		}
		var joined bytes.Buffer
		for k, p := range parts {
			b := read(t, p)
			body, ok := bytes.CutPrefix(b, []byte(header))
			if !ok {
				t.Fatalf("n=%d: part %d has no header: %q", n, k+1, b)
			}
			joined.Write(body)
			if got, want := string(read(t, prefixes[k])), header+joined.String(); got != want {
				t.Fatalf("n=%d: prefix %d is %q, want %q", n, k+1, got, want)
			}
			if !wholeRecords(body, records) {
				t.Fatalf("n=%d: part %d cuts a record: %q", n, k+1, body)
			}
		}
		if joined.String() != file.String()[len(header):] {
			t.Fatalf("n=%d: the parts hold %q", n, joined.String())
		}
	}
}

// wholeRecords reports whether body is a run of consecutive records.
func wholeRecords(body []byte, records []string) bool {
	for i := range records {
		rest := body
		for j := i; j < len(records) && len(rest) > 0; j++ {
			var ok bool
			if rest, ok = bytes.CutPrefix(rest, []byte(records[j])); !ok {
				break
			}
		}
		if len(rest) == 0 {
			return true
		}
	}
	return len(body) == 0
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
