// Package atomicfile replaces files durably and atomically: the new
// contents go to a temporary file in the same directory, which is synced,
// renamed over the target and followed by a sync of the directory. A reader
// sees the old file or the new one, never a torn one, and after a crash the
// target holds one or the other.
//
// Write replaces a file with a byte slice; Create, Commit and Abort do the
// same for contents written as a stream. On any error the temporary file is
// removed and the target is left as it was.
//
// The permission bits are set as given (the umask does not apply). The
// temporary file is named ".<base>.<random>.tmp", beside the target.
//
// The package uses only the standard library and imports nothing of this
// module, so that any package can use it.
package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
)

// Write replaces path with data, with permissions perm.
func Write(path string, data []byte, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// File is the pending new contents of a file: write to it, then Commit to
// put it in place or Abort to drop it. It is not safe for concurrent use.
type File struct {
	tmp  *os.File
	path string
	perm os.FileMode
	done bool
}

// Create starts replacing path, whose permissions will be perm. Nothing is
// visible at path until Commit. A deferred Abort cleans up on every error
// path; after Commit it does nothing.
func Create(path string, perm os.FileMode) (*File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	return &File{tmp: tmp, path: path, perm: perm}, nil
}

// Write appends b to the pending contents.
func (f *File) Write(b []byte) (int, error) {
	if f.done {
		return 0, os.ErrClosed
	}
	return f.tmp.Write(b)
}

// Commit syncs the pending contents, renames them over the target and
// syncs the directory. On error nothing is left behind and the target is
// unchanged, except when only the directory sync failed: then the new file
// is in place but its rename may not survive a crash.
func (f *File) Commit() error {
	if f.done {
		return os.ErrClosed
	}
	f.done = true
	err := f.tmp.Chmod(f.perm)
	if err == nil {
		err = f.tmp.Sync()
	}
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.tmp.Name())
		return err
	}
	return syncDir(filepath.Dir(f.path))
}

// Abort drops the pending contents: it closes and removes the temporary
// file. It does nothing after Commit or a previous Abort, so that it can be
// deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.tmp.Close()
	os.Remove(f.tmp.Name())
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}
