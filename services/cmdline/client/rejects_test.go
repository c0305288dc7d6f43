package client

import (
	"os"
	"path/filepath"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// TestWriteRejects: rejects.csv lists both files' malformed records as
// CSV (a record's own quotes, separators and bytes kept, its line ending
// dropped); with none listed a stale one is removed.
func TestWriteRejects(t *testing.T) {
	dir := t.TempDir()
	job := &wololov1.Job{
		Matches: &wololov1.FileReport{File: "matches.csv", Rejects: []*wololov1.Reject{{Offset: 55, Reason: "quoting", Head: []byte("a,\"b\"c,d\r\n")}}},
		Players: &wololov1.FileReport{File: "match_players.csv", Rejects: []*wololov1.Reject{
			{Offset: 24, Reason: "field-count", Head: []byte("x;y\n")},
			{Offset: 28, Reason: "too-long", Head: []byte("caf\xe9,\"open")},
		}},
	}
	path, n, err := WriteRejects(dir, job)
	if err != nil || n != 3 || path != filepath.Join(dir, "rejects.csv") {
		t.Fatalf("WriteRejects: %q, %d, %v", path, n, err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "file,offset,reason,first_bytes\n" +
		"matches.csv,55,quoting,\"a,\"\"b\"\"c,d\"\n" +
		"match_players.csv,24,field-count,x;y\n" +
		"match_players.csv,28,too-long,\"caf\xe9,\"\"open\"\n"
	if string(got) != want {
		t.Errorf("rejects.csv:\n%q\nwant\n%q", got, want)
	}
	path, n, err = WriteRejects(dir, &wololov1.Job{Matches: &wololov1.FileReport{File: "matches.csv"}})
	if err != nil || n != 0 || path != "" {
		t.Fatalf("WriteRejects of none: %q, %d, %v", path, n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rejects.csv")); !os.IsNotExist(err) {
		t.Errorf("a stale rejects.csv stays: %v", err)
	}
}
