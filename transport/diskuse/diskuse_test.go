package diskuse

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirCountsFilesBelow(t *testing.T) {
	dir := t.TempDir()
	if n := Dir(dir); n != 0 {
		t.Fatalf("empty dir: %d", n)
	}
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "f"), make([]byte, 100_000), 0o600); err != nil {
		t.Fatal(err)
	}
	if n := Dir(dir); n < 100_000 || n > 200_000 {
		t.Fatalf("a 100 kB file takes %d bytes", n)
	}
	if n := Dir(filepath.Join(dir, "nosuch")); n != 0 {
		t.Fatalf("missing dir: %d", n)
	}
}
