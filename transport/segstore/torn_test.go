package segstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// recordOffsets returns the offsets of the records of a segment file, and
// its size.
func recordOffsets(t *testing.T, path string) ([]int64, int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for off := int64(0); off < int64(len(b)); {
		plen, _ := parseFrame(b[off:])
		offs = append(offs, off)
		off += frameLen + plen
	}
	return offs, int64(len(b))
}

func segPaths(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no segments in %s: %v", dir, err)
	}
	return paths // zero-padded: sorted
}

// tornFixture commits to a store in dir, closes it and returns the image
// before and after its last commit.
func tornFixture(t *testing.T, dir string, opts Options, commits int) (before, after *transport.Image) {
	t.Helper()
	s := openWith(t, dir, opts)
	model := transport.NewMemStore()
	for i := 1; i <= commits; i++ {
		if i == commits {
			before, _ = transport.LoadAll(model)
		}
		c := storetest.CrashCommit("torn", uint64(i))
		if i == commits { // a small last record: it is cut at every offset
			c.Outputs = c.Outputs[:1]
			c.Outputs[0].Rows = storetest.Encoded(strings.Repeat("z", 300))
		}
		storetest.Apply(t, s, []storetest.Op{{Commit: c}})
		storetest.Apply(t, model, []storetest.Op{{Commit: c}})
		if i%5 == 0 && i < commits {
			tr := storetest.Op{Trim: &storetest.TrimOp{Ch: storetest.CrashOutput("torn", 0), Seq: uint64(i - 2)}}
			storetest.Apply(t, s, []storetest.Op{tr})
			storetest.Apply(t, model, []storetest.Op{tr})
		}
	}
	after, _ = transport.LoadAll(model)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return before, after
}

// TestTornTail truncates the last segment at every byte offset of its last
// record: Open succeeds, drops exactly that record (Load shows the commits
// before it), truncates the file there, and the store goes on.
func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 64 << 10, IdleAfter: -1}
	before, after := tornFixture(t, dir, opts, 40)
	paths := segPaths(t, dir)
	if len(paths) < 2 {
		t.Fatalf("want several segments, have %d", len(paths))
	}
	last := paths[len(paths)-1]
	pristine, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	offs, size := recordOffsets(t, last)
	recStart := offs[len(offs)-1]
	t.Logf("%d segments; the last, %s, has %d records; its last record is bytes %d..%d", len(paths), filepath.Base(last), len(offs), recStart, size)

	// Whole, it is all there.
	s := openWith(t, dir, opts)
	storetest.CheckLoad(t, s, after)
	s.Close()

	for cut := recStart; cut < size; cut++ {
		if err := os.WriteFile(last, pristine[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(dir, opts)
		if err != nil {
			t.Fatalf("cut at %d: Open: %v", cut, err)
		}
		img, err := transport.LoadAll(s)
		if err != nil {
			t.Fatalf("cut at %d: Load: %v", cut, err)
		}
		if d := storetest.Diff(img, before); d != "" {
			t.Fatalf("cut at %d: Load differs from the image before the last commit:\n%s", cut, d)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(last); err != nil || fi.Size() != recStart {
			t.Fatalf("cut at %d: segment not truncated to %d: %v %v", cut, recStart, fi.Size(), err)
		}
	}

	// After a cut the store takes new commits where the torn one was.
	if err := os.WriteFile(last, pristine[:size-1], 0o600); err != nil {
		t.Fatal(err)
	}
	s = openWith(t, dir, opts)
	c := storetest.CrashCommit("torn", 40)
	if err := s.Commit(c); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openWith(t, dir, opts)
	defer s.Close()
	img, _ := transport.LoadAll(s)
	j := img.Jobs["torn"]
	q := j.Outbox[storetest.CrashOutput("torn", 1)]
	if j.Watermarks[storetest.CrashInput("torn", 0)] != 40 || len(q) == 0 || q[len(q)-1].Seq != 40 {
		t.Fatalf("after the recommit: watermarks %v, entries %v", j.Watermarks, len(q))
	}
}

// A torn header of a brand-new last segment (a crash right after it was
// created) is cut too: the segment starts afresh.
func TestTornHeader(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentSize: 64 << 10, IdleAfter: -1}
	_, after := tornFixture(t, dir, opts, 30)
	paths := segPaths(t, dir)
	var lastNum uint64
	if _, err := fmt.Sscanf(filepath.Base(paths[len(paths)-1]), "%d.seg", &lastNum); err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(dir, segName(lastNum+1))
	hdr := frameRecord(headerPayload(lastNum + 1))
	for _, n := range []int{0, 1, frameLen, len(hdr) - 1} {
		if err := os.WriteFile(next, hdr[:n], 0o600); err != nil {
			t.Fatal(err)
		}
		s := openWith(t, dir, opts)
		storetest.CheckLoad(t, s, after)
		if err := s.Commit(&transport.Commit{Job: "other"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(next); err != nil {
			t.Fatal(err)
		}
	}
}

// Damage anywhere but at the tail of the last segment fails Open with an
// error that names the file and the offset; damage to the last record of
// the last segment is a torn tail.
func TestCorruption(t *testing.T) {
	base := t.TempDir()
	opts := Options{SegmentSize: 64 << 10, IdleAfter: -1}
	before, _ := tornFixture(t, base, opts, 40)
	paths := segPaths(t, base)
	first, last := filepath.Base(paths[0]), filepath.Base(paths[len(paths)-1])
	firstOffs, _ := recordOffsets(t, paths[0])
	lastOffs, lastSize := recordOffsets(t, paths[len(paths)-1])

	type variant struct {
		name    string
		file    string
		flip    int64 // offset of the byte to flip
		failsAt int64 // the offset the error must name, or -1: Open succeeds
	}
	mid := lastOffs[len(lastOffs)/2]
	vs := []variant{
		{"first segment, its header", first, 3, 0},
		{"first segment, a payload byte of its second record", first, firstOffs[1] + 20, firstOffs[1]},
		{"first segment, the length of its last record", first, firstOffs[len(firstOffs)-1], firstOffs[len(firstOffs)-1]},
		{"last segment, a record half-way", last, mid + 30, mid},
		{"last segment, the checksum of its second record", last, lastOffs[1] + 5, lastOffs[1]},
		{"last segment, its last record", last, lastSize - 20, -1},
	}
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, p := range paths {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if filepath.Base(p) == v.file {
					b[v.flip] ^= 0x5a
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Open(dir, opts)
			if v.failsAt < 0 {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				defer s.Close()
				storetest.CheckLoad(t, s, before)
				return
			}
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			t.Log(err)
			if !IsCorruption(err) {
				t.Errorf("not reported as corruption: %v", err)
			}
			if want := fmt.Sprintf("%s: bad record at offset %d ", v.file, v.failsAt); !strings.Contains(err.Error(), want) &&
				!strings.Contains(err.Error(), fmt.Sprintf("%s: record at offset %d:", v.file, v.failsAt)) {
				t.Errorf("error does not name %s and offset %d: %v", v.file, v.failsAt, err)
			}
		})
	}

	t.Run("a missing segment", func(t *testing.T) {
		if len(paths) < 3 {
			t.Skip("needs three segments")
		}
		dir := t.TempDir()
		for i, p := range paths {
			if i == 1 {
				continue
			}
			b, _ := os.ReadFile(p)
			os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o600)
		}
		if s, err := Open(dir, opts); err == nil {
			s.Close()
			t.Fatal("Open succeeded")
		} else if !IsCorruption(err) || !strings.Contains(err.Error(), "missing") {
			t.Fatalf("got %v", err)
		}
	})
}
