package master

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/wololo/wololo/election"
)

func TestReadTerm(t *testing.T) {
	dir := t.TempDir()
	if got, err := ReadTerm(filepath.Join(dir, "missing")); got != 0 || err != nil {
		t.Fatalf("missing file: %d, %v", got, err)
	}
	if got, err := ReadTerm(""); got != 0 || err != nil {
		t.Fatalf("no file: %d, %v", got, err)
	}
	path := filepath.Join(dir, "term")
	for content, want := range map[string]election.Term{"7\n": 7, "12": 12} {
		os.WriteFile(path, []byte(content), 0o644)
		if got, err := ReadTerm(path); got != want || err != nil {
			t.Fatalf("%q: %d, %v", content, got, err)
		}
	}
	os.WriteFile(path, []byte("seven"), 0o644)
	if _, err := ReadTerm(path); err == nil {
		t.Fatal("a garbled term file was accepted")
	}
}

// TestTermFileKeepsItsFormat: Save writes the term in decimal and a
// newline (the format every master since the first has read), leaves no
// temporary file behind, and Load reads it back; a master made over the
// same data directory starts from it.
func TestTermFileKeepsItsFormat(t *testing.T) {
	dir := t.TempDir()
	f := termFile(filepath.Join(dir, TermFile))
	if got, err := f.Load(); got != 0 || err != nil {
		t.Fatalf("before any Save: %d, %v", got, err)
	}
	for _, term := range []election.Term{7, 12, 1<<64 - 1} {
		if err := f.Save(term); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(string(f))
		if err != nil {
			t.Fatal(err)
		}
		if want := strconv.FormatUint(uint64(term), 10) + "\n"; string(b) != want {
			t.Fatalf("file holds %q after Save(%d)", b, term)
		}
		if got, err := f.Load(); got != term || err != nil {
			t.Fatalf("Load after Save(%d): %d, %v", term, got, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != TermFile {
		t.Fatalf("the data directory holds %v, want only %s", entries, TermFile)
	}
	if err := f.Save(5); err != nil {
		t.Fatal(err)
	}
	m := newTestMasterIn(t, 2, &fakeRuntime{}, dir)
	if got := m.elector.State().Term; got != 5 {
		t.Fatalf("a master over the data directory starts at term %d, want 5", got)
	}
}
