package segstore

import (
	"fmt"
	"io"
	"os"
)

// FS is what the store does to the file system: the few operations it
// makes on its directory and segments, and nothing else, so that a test
// can stand between the store and the disk and make any of them fail
// (fault_test.go). Options.FS nil is the operating system's (OS).
//
// Names are paths under the store's directory, as the os package takes
// them. The store calls the methods of one File from one goroutine at a
// time, except ReadAt (Load and compaction read while the writer writes).
type FS interface {
	// MkdirAll and Chmod make the store's directory (0700).
	MkdirAll(dir string, perm os.FileMode) error
	Chmod(name string, perm os.FileMode) error
	// Lock takes the directory for this store alone (an flock on LOCK)
	// until the Closer it returns is closed; a second Lock of the same
	// directory fails.
	Lock(dir string) (io.Closer, error)
	// ReadDir lists the directory (the segments).
	ReadDir(dir string) ([]os.DirEntry, error)
	// OpenFile opens a segment: read-only, read-write, or created
	// exclusively (os.O_CREATE|os.O_EXCL).
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// Remove deletes a segment.
	Remove(name string) error
	// SyncDir makes the creation or removal of a file in dir durable.
	SyncDir(dir string) error
}

// File is an open segment.
type File interface {
	io.ReaderAt
	io.WriterAt
	Stat() (os.FileInfo, error)
	// Truncate cuts a torn tail off the last segment at Open.
	Truncate(size int64) error
	// Sync puts what was written on stable storage, with what is needed to
	// read it back (fdatasync(2) on Linux).
	Sync() error
	Close() error
}

// OS is the operating system's file system, the store's unless
// Options.FS says otherwise.
var OS FS = osFS{}

type osFS struct{}

func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }
func (osFS) Chmod(name string, perm os.FileMode) error   { return os.Chmod(name, perm) }
func (osFS) ReadDir(dir string) ([]os.DirEntry, error)   { return os.ReadDir(dir) }
func (osFS) Remove(name string) error                    { return os.Remove(name) }
func (osFS) SyncDir(dir string) error                    { return syncDir(dir) }
func (osFS) Lock(dir string) (io.Closer, error) {
	f, err := lockDir(dir)
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil Closer
	}
	return f, nil
}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// osFile is an *os.File whose Sync is fdatasync.
type osFile struct{ *os.File }

func (f osFile) Sync() error { return fdatasync(f.File) }

// syncDir makes the creation or removal of a file in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
