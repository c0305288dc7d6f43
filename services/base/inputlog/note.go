package inputlog

import (
	"fmt"
	"os"
	"path/filepath"
)

// A note is a small file of a job's beside its inputs' copies, written
// whole or not at all: what the caller needs to read a copy back that
// the copy does not hold (a standing job's epoch's headers: the bytes
// before a file's first record are never written). Jobs, Rename and Drop
// treat it as one of the job's inputs.

// PutNote writes a job's note name durably (a temporary file, synced,
// renamed over the last one).
func (d *Dir) PutNote(job, name string, data []byte) error {
	p, err := d.file(job, name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("input log: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".note-*")
	if err != nil {
		return fmt.Errorf("input log: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("input log: note %s of job %s: %w", name, job, err)
	}
	return nil
}

// Note reads a job's note name back.
func (d *Dir) Note(job, name string) ([]byte, error) {
	p, err := d.file(job, name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("input log: %w", err)
	}
	return b, nil
}
