package durable

import (
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// fullFS is the OS file system until full is set; from then on every
// write, sync and file creation fails with ENOSPC, as on a full disk.
type fullFS struct {
	vfs.FS
	full *atomic.Bool
}

var errFull = syscall.ENOSPC

func (fs fullFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return f, err
	}
	return fullFile{File: f, full: fs.full}, nil
}

func (fs fullFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if fs.full.Load() {
		return nil, errFull
	}
	return fs.wrap(fs.FS.Create(name, category))
}

func (fs fullFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if fs.full.Load() {
		return nil, errFull
	}
	return fs.wrap(fs.FS.ReuseForWrite(oldname, newname, category))
}

func (fs fullFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return fs.wrap(fs.FS.OpenReadWrite(name, category, opts...))
}

func (fs fullFS) Unwrap() vfs.FS { return fs.FS }

type fullFile struct {
	vfs.File
	full *atomic.Bool
}

func (f fullFile) Write(p []byte) (int, error) {
	if f.full.Load() {
		return 0, errFull
	}
	return f.File.Write(p)
}

func (f fullFile) WriteAt(p []byte, off int64) (int, error) {
	if f.full.Load() {
		return 0, errFull
	}
	return f.File.WriteAt(p, off)
}

func (f fullFile) Sync() error {
	if f.full.Load() {
		return errFull
	}
	return f.File.Sync()
}

func (f fullFile) SyncData() error {
	if f.full.Load() {
		return errFull
	}
	return f.File.SyncData()
}

func (f fullFile) SyncTo(length int64) (bool, error) {
	if f.full.Load() {
		return false, errFull
	}
	return f.File.SyncTo(length)
}

// TestFullDiskFailsLoudlyAndNeverPanics: when the disk fills up, a
// commit fails with the I/O error; every later write (commits racing it
// from other goroutines, trims, drops) fails too instead of reaching
// Pebble, whose commit pipeline does not survive a failed WAL write and
// panics on the next one; and Close returns instead of panicking or
// waiting forever for a flush. Once space is back, the store opens again
// with every commit that returned nil.
func TestFullDiskFailsLoudlyAndNeverPanics(t *testing.T) {
	dir := t.TempDir()
	var full atomic.Bool
	s, err := open(dir, Options{Log: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: testkit.Writer(t)})}, fullFS{FS: vfs.Default, full: &full})
	if err != nil {
		t.Fatal(err)
	}
	var committed sync.Map // job/seq of every commit that returned nil
	commit := func(job string, i uint64) error {
		c := storetest.CrashCommit(job, i)
		err := s.Commit(c)
		if err == nil {
			committed.Store([2]any{job, i}, true)
		}
		return err
	}
	for i := uint64(1); i <= 20; i++ {
		if err := commit("a", i); err != nil {
			t.Fatal(err)
		}
	}
	full.Store(true)
	// Writers on several goroutines, as a process's jobs and links are.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g, job := range []string{"a", "b", "c", "d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := uint64(21); i <= 60; i++ {
				if err := commit(job, i); err != nil {
					errs <- err
					return
				}
				if g == 0 {
					_ = s.Trim(storetest.CrashOutput(job, 0), i-1)
				}
			}
			errs <- nil
		}()
	}
	wg.Wait()
	close(errs)
	var first error
	for err := range errs {
		if err == nil {
			t.Error("a writer committed 40 batches on a full disk")
		} else if first == nil {
			first = err
		}
	}
	t.Logf("commit on a full disk: %v", first)
	if !errors.Is(first, syscall.ENOSPC) && !errors.Is(first, ErrFailed) {
		t.Errorf("the commit error %v names neither the disk's error nor ErrFailed", first)
	}
	if err := s.Commit(storetest.CrashCommit("a", 99)); !errors.Is(err, ErrFailed) {
		t.Errorf("a commit after the failure: %v, want ErrFailed", err)
	}
	if err := s.Trim(storetest.CrashOutput("a", 0), 5); !errors.Is(err, ErrFailed) {
		t.Errorf("a trim after the failure: %v, want ErrFailed", err)
	}
	if err := s.DropJob("b"); !errors.Is(err, ErrFailed) {
		t.Errorf("a drop after the failure: %v, want ErrFailed", err)
	}
	if _, err := s.NextIncarnation(0); !errors.Is(err, ErrFailed) {
		t.Errorf("an incarnation after the failure: %v, want ErrFailed", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		t.Logf("close after the failure: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("Close hangs after a failed write")
	}
	if err := s.Commit(storetest.CrashCommit("a", 100)); !errors.Is(err, ErrClosed) && !errors.Is(err, ErrFailed) {
		t.Errorf("a commit after Close: %v", err)
	}

	// Space is back: a new process opens the store and finds every commit
	// that was acknowledged.
	full.Store(false)
	r, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen after the disk emptied: %v", err)
	}
	defer r.Close()
	img, err := transport.LoadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	committed.Range(func(k, _ any) bool {
		key := k.([2]any)
		job, i := key[0].(string), key[1].(uint64)
		if ji := img.Jobs[job]; ji == nil || ji.Watermarks[storetest.CrashInput(job, 0)] < i {
			missing++
		}
		return true
	})
	if missing > 0 {
		t.Errorf("%d acknowledged commits lost", missing)
	}
	var _ transport.Store = r
}
