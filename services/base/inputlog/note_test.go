package inputlog

import (
	"path/filepath"
	"testing"
)

// A note is written whole, read back, replaced, renamed with its job's
// copies and dropped with them.
func TestNoteWrittenReplacedRenamedDropped(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "input"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Note("job1", "1.files"); err == nil {
		t.Fatal("a note never written read back")
	}
	for _, v := range []string{"first", "second"} {
		if err := d.PutNote("job1", "1.files", []byte(v)); err != nil {
			t.Fatal(err)
		}
		if got, err := d.Note("job1", "1.files"); err != nil || string(got) != v {
			t.Fatalf("note %q, %v; want %q", got, err, v)
		}
	}
	if err := d.PutNote("job1", "../x", nil); err == nil {
		t.Fatal("a note named ../x written")
	}
	if err := d.Rename("job1", "job2"); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Note("job2", "1.files"); err != nil || string(got) != "second" {
		t.Fatalf("renamed note %q, %v", got, err)
	}
	if err := d.Drop("job2"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Note("job2", "1.files"); err == nil || d.Has("job2") {
		t.Fatal("a dropped job's note read back")
	}
}
