package inputlog

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCopyAtOffsetsResentAndRead(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "input"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := d.Writer("job1", "0", 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	// A header of 4 bytes never written, then chunks; the second sent
	// twice (a resume after a restart) and the file closed and opened
	// again in between.
	for _, c := range []struct {
		at   int64
		data string
	}{{4, "abc"}, {7, "defg"}} {
		if err := w.WriteAt([]byte(c.data), c.at); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if w, err = d.Writer("job1", "0", 4, 7); err != nil || w == nil {
		t.Fatal(err)
	}
	if err := w.WriteAt([]byte("defg"), 7); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAt([]byte("h"), 11); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	w.Close()

	if _, err := d.Reader("job1", "0", 13); err == nil || !strings.Contains(err.Error(), "not the 13") {
		t.Fatalf("a copy shorter than the file: %v, want an error saying so", err)
	}
	r, err := d.Reader("job1", "0", 12)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Seek(4, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != "abcdefgh" {
		t.Fatalf("read %q, %v; want abcdefgh", got, err)
	}

	if err := d.Rename("job1", "job2"); err != nil {
		t.Fatal(err)
	}
	if err := d.Rename("nosuch", "job3"); err != nil {
		t.Fatalf("renaming a job with no copy: %v", err)
	}
	if jobs, err := d.Jobs(); err != nil || !slices.Equal(jobs, []string{"job2"}) || d.Has("job1") || !d.Has("job2") {
		t.Fatalf("after the rename: %v, %v", jobs, err)
	}
	if n := d.Size("job2", "0"); n != 12 || !d.Whole("job2", "0", 12) || d.Whole("job2", "0", 13) {
		t.Fatalf("Size %d, want 12 (whole to 12, not to 13)", n)
	}
	if err := d.Drop("job2"); err != nil {
		t.Fatal(err)
	}
	if jobs, _ := d.Jobs(); len(jobs) != 0 {
		t.Fatalf("after the drop: %v", jobs)
	}
}

// TestNoCopyWithAHole: an upload that resumes past what the copy holds
// (the copy lost, or kept by no gateway when those bytes came) gets no
// Writer, and the partial copy is deleted, so that no replay reads a hole.
func TestNoCopyWithAHole(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if w, err := d.Writer("job", "0", 10, 50); err != nil || w != nil {
		t.Fatalf("a resume at 50 with no copy: %v, %v; want no Writer", w, err)
	}
	w, err := d.Writer("job", "0", 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAt(make([]byte, 20), 10); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !d.Whole("job", "0", 30) {
		t.Fatalf("the copy holds %d bytes, want 30", d.Size("job", "0"))
	}
	if w, err := d.Writer("job", "0", 10, 50); err != nil || w != nil || d.Whole("job", "0", 30) {
		t.Fatalf("a resume at 50 with a copy to 30: %v, %v (copy whole: %v); want no Writer, the copy gone", w, err, d.Whole("job", "0", 30))
	}
}

func TestNamesArePlainFileNames(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", `a\b`, "a\x00b"} {
		if _, err := d.Writer(bad, "0", 0, 0); err == nil {
			t.Errorf("job %q accepted", bad)
		}
		if _, err := d.Writer("job", bad, 0, 0); err == nil {
			t.Errorf("input %q accepted", bad)
		}
		if err := d.Drop(bad); err == nil {
			t.Errorf("drop of %q accepted", bad)
		}
	}
}

func TestNilWriterKeepsNothing(t *testing.T) {
	var w *Writer
	if w.WriteAt([]byte("x"), 0) != nil || w.Sync() != nil || w.Close() != nil {
		t.Fatal("a nil Writer failed")
	}
}
