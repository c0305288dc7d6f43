package segstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/internal/directio"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// testWriter logs to the test; a line at ERROR (a failed write, a failed
// compaction or deletion) fails it.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	if strings.Contains(line, "[ERROR]") {
		w.t.Error(line)
	} else {
		w.t.Log(line)
	}
	return len(p), nil
}

func testLog(t testing.TB) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: testWriter{t}})
}

func openWith(t testing.TB, dir string, opts Options) *Store {
	t.Helper()
	if opts.Log == nil {
		opts.Log = testLog(t)
	}
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openTest(t *testing.T, dir string) transport.Store { return openWith(t, dir, Options{}) }

// openTiny opens a store whose segments are a few KiB: every case then
// rotates, deletes and compacts.
func openTiny(t *testing.T, dir string) transport.Store {
	return openWith(t, dir, Options{SegmentSize: 2 << 10, IdleAfter: -1})
}

func TestConformance(t *testing.T) { storetest.Run(t, openTest) }

func TestReopen(t *testing.T) { storetest.RunReopen(t, openTest) }

func TestConformanceTinySegments(t *testing.T) { storetest.Run(t, openTiny) }

func TestReopenTinySegments(t *testing.T) { storetest.RunReopen(t, openTiny) }

// TestConformanceDirectEveryBlock runs the suite with every whole block
// of a group written directly (Options.minDirect), not only large
// groups, on 64 KiB segments: the appends, rotations, compactions and
// reopens then go through direct writes and the read-back of an
// unfinished block all the time. It fails if the file system refuses
// direct I/O, which would leave the direct path untested.
func TestConformanceDirectEveryBlock(t *testing.T) {
	open := func(t *testing.T, dir string) transport.Store {
		s := openWith(t, dir, Options{SegmentSize: 64 << 10, IdleAfter: -1, minDirect: directio.Block})
		if directio.Flag != 0 && !s.app.Direct() {
			t.Fatalf("the store in %s writes through the page cache only: the file system refuses direct I/O", dir)
		}
		return s
	}
	storetest.Run(t, open)
	storetest.RunReopen(t, open)
	storetest.LargeCommit(t, open)

	// A large commit goes direct, and the file system took it (a refused
	// write would have closed the direct file).
	s := open(t, t.TempDir()).(*Store)
	defer s.Close()
	ch := storetest.Ch("j", "s", "a", "b")
	if err := s.Commit(&transport.Commit{Job: "j", Outputs: []transport.Entry{storetest.E(ch, 1, false, strings.Repeat("x", 300<<10))}}); err != nil {
		t.Fatal(err)
	}
	if directio.Flag != 0 && !s.app.Direct() {
		t.Fatal("a direct write of the store was refused")
	}
}

func TestStatsAndClosed(t *testing.T) {
	storetest.StatsAndClosed(t, openWith(t, t.TempDir(), Options{}), ErrClosed)
}

// A second Open of a directory in use fails rather than sharing it.
func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	s := openWith(t, dir, Options{})
	defer s.Close()
	if s2, err := Open(dir, Options{}); err == nil {
		s2.Close()
		t.Fatal("second Open of the same directory succeeded")
	} else {
		t.Log(err)
	}
}

// The directory and the files are the user's only.
func TestPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s := openWith(t, dir, Options{SegmentSize: 1 << 10})
	defer s.Close()
	ch := storetest.Ch("j", "s", "a", "b")
	for i := range 20 {
		if err := s.Commit(&transport.Commit{Job: "j", Outputs: []transport.Entry{storetest.E(ch, uint64(i+1), false, strings.Repeat("x", 200))}}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(path string, want os.FileMode) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	check(dir, 0o700)
	ents, _ := os.ReadDir(dir)
	if len(ents) < 3 {
		t.Fatalf("only %d files", len(ents))
	}
	for _, e := range ents {
		check(filepath.Join(dir, e.Name()), 0o600)
	}
}

// Concurrent commits share syncs, and Stats can tell.
func TestGroupCommit(t *testing.T) {
	s := openWith(t, t.TempDir(), Options{})
	defer s.Close()
	storetest.GroupCommit(t, s)
}

// A commit larger than a segment gets a segment of its own; it is as
// atomic and durable as any other.
func TestLargeCommit(t *testing.T) {
	storetest.LargeCommit(t, func(t *testing.T, dir string) transport.Store { return openWith(t, dir, Options{SegmentSize: 4 << 20}) })
}

// Channel components and job ids are length-prefixed: unlike the Pebble
// store, a NUL byte in them is fine.
func TestNULInNames(t *testing.T) {
	dir := t.TempDir()
	s := openWith(t, dir, Options{})
	ch := storetest.Ch("j\x00", "s\x00", "a", "b\x00")
	ops := []storetest.Op{
		{Commit: &transport.Commit{Job: "j\x00", Inputs: map[transport.ChannelID]uint64{ch: 1}, Outputs: []transport.Entry{storetest.E(ch, 1, false, "x"), storetest.E(ch, 2, false, "y")}}},
		{Trim: &storetest.TrimOp{Ch: ch, Seq: 1}},
		{Drop: "other\x00"},
	}
	storetest.Apply(t, s, ops)
	model := transport.NewMemStore()
	storetest.Apply(t, model, ops)
	want, _ := transport.LoadAll(model)
	storetest.CheckLoad(t, s, want)
	s.Close()
	s = openWith(t, dir, Options{})
	defer s.Close()
	storetest.CheckLoad(t, s, want)
}

// A directory that holds a Pebble store is refused, not taken for an
// empty segstore.
func TestRefusesPebbleDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "CURRENT"), []byte("MANIFEST-000001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(dir, Options{}); err == nil {
		s.Close()
		t.Fatal("Open succeeded on a Pebble directory")
	} else if !strings.Contains(err.Error(), "Pebble") {
		t.Fatalf("got %v", err)
	}
	if segs, _ := filepath.Glob(filepath.Join(dir, "*.seg")); len(segs) != 0 {
		t.Fatalf("created %v", segs)
	}
}
