package segstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// fsOp is a kind of call the store makes on its FS.
type fsOp string

const (
	opWrite    fsOp = "write"    // File.WriteAt
	opSync     fsOp = "sync"     // File.Sync
	opRead     fsOp = "read"     // File.ReadAt
	opTruncate fsOp = "truncate" // File.Truncate
	opCreate   fsOp = "create"   // FS.OpenFile with os.O_CREATE
	opOpen     fsOp = "open"     // FS.OpenFile of an existing segment
	opRemove   fsOp = "remove"   // FS.Remove
	opSyncDir  fsOp = "syncdir"  // FS.SyncDir
	opReadDir  fsOp = "readdir"  // FS.ReadDir
)

// faultFS is the OS file system with one fault: the nth call of op fails
// with err (and, if sticky, every call of op after it, as on a full
// disk); a failing write with short set writes the first half of its
// bytes first. It counts every call, so that a test can tell that the
// store went through it.
type faultFS struct {
	FS
	op     fsOp
	nth    int
	err    error
	sticky bool
	short  bool

	mu    sync.Mutex
	calls map[fsOp]int
	fired int
}

func (f *faultFS) check(op fsOp) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[fsOp]int{}
	}
	f.calls[op]++
	if n := f.calls[op]; op == f.op && (n == f.nth || f.sticky && n > f.nth) {
		f.fired++
		return f.err
	}
	return nil
}

func (f *faultFS) count(op fsOp) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *faultFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	op := opOpen
	if flag&os.O_CREATE != 0 {
		op = opCreate
	}
	if err := f.check(op); err != nil {
		return nil, &os.PathError{Op: string(op), Path: name, Err: err}
	}
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return faultFile{File: file, fs: f}, nil
}

func (f *faultFS) Remove(name string) error {
	if err := f.check(opRemove); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return f.FS.Remove(name)
}

func (f *faultFS) SyncDir(dir string) error {
	if err := f.check(opSyncDir); err != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: err}
	}
	return f.FS.SyncDir(dir)
}

func (f *faultFS) ReadDir(dir string) ([]os.DirEntry, error) {
	if err := f.check(opReadDir); err != nil {
		return nil, &os.PathError{Op: "readdir", Path: dir, Err: err}
	}
	return f.FS.ReadDir(dir)
}

type faultFile struct {
	File
	fs *faultFS
}

func (f faultFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(opWrite); err != nil {
		n := 0
		if f.fs.short {
			n, _ = f.File.WriteAt(p[:len(p)/2], off)
		}
		return n, err
	}
	return f.File.WriteAt(p, off)
}

func (f faultFile) Sync() error {
	if err := f.fs.check(opSync); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f faultFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(opRead); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f faultFile) Truncate(size int64) error {
	if err := f.fs.check(opTruncate); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

// tinyOpts are the options of the fault tests: segments of 2 KiB, so that
// a few hundred calls rotate, delete and compact all the time.
func tinyOpts(t *testing.T, fs FS) Options {
	return Options{SegmentSize: 2 << 10, IdleAfter: -1, FS: fs, Log: testkit.Logger(t, hclog.Warn)}
}

// outcome is what a fault must do to the store.
type outcome int

const (
	survives    outcome = iota // nothing fails: the store retries
	failStops                  // a call fails, and every one after it
	mayFailStop                // either, depending on where it lands
)

// TestFaults injects one fault into the calls the store makes on its file
// system (a failed or short write, a failed sync, segment creation,
// directory sync, removal; once, or from then on with ENOSPC as on a full
// disk) while it runs a random sequence of commits, trims, acks and drops. A
// fault in a write, a sync or a segment's creation fail-stops the store,
// as its doc says: the call returns the error, and every later one too. A
// fault in deleting a dead segment is logged and retried: nothing fails.
// Either way, reopened on the real file system, the store holds every
// call that was acknowledged as durable and nothing beyond the calls made
// (the calls after the last durable one, trims and the failed call, may
// be there or not, but only in order: what is there is a prefix of the
// sequence), and goes on with the rest of the sequence, across one more
// reopen, matching the model.
func TestFaults(t *testing.T) {
	type fault struct {
		op            fsOp
		nths          []int
		err           error
		sticky, short bool
		outcome       outcome
	}
	faults := []fault{
		{op: opWrite, nths: []int{1, 2, 9, 60}, err: syscall.EIO, outcome: failStops},
		{op: opWrite, nths: []int{2, 30}, err: syscall.ENOSPC, short: true, outcome: failStops},
		{op: opWrite, nths: []int{5, 45}, err: syscall.ENOSPC, sticky: true, short: true, outcome: failStops},
		{op: opSync, nths: []int{1, 2, 9, 60}, err: syscall.EIO, outcome: failStops},
		{op: opCreate, nths: []int{1, 2, 6}, err: syscall.ENOSPC, outcome: failStops},
		// At a segment's creation it fails the store, after a deletion
		// it is retried.
		{op: opSyncDir, nths: []int{1, 2, 6, 20}, err: syscall.EIO, outcome: mayFailStop},
		{op: opRemove, nths: []int{1, 4}, err: syscall.EACCES},
		{op: opRemove, nths: []int{3}, err: syscall.EIO, sticky: true},
	}
	for _, f := range faults {
		for _, nth := range f.nths {
			name := fmt.Sprintf("%s %d %v", f.op, nth, f.err)
			if f.sticky {
				name += " from then on"
			}
			if f.short {
				name += " short"
			}
			t.Run(name, func(t *testing.T) {
				fs := &faultFS{FS: OS, op: f.op, nth: nth, err: f.err, sticky: f.sticky, short: f.short}
				ops := storetest.RandomOps(uint64(nth)*31+uint64(len(f.op)), 400)
				failed := faultRun(t, t.TempDir(), fs, ops)
				switch {
				case fs.fired == 0:
					t.Fatalf("the fault never fired (%d calls of %s)", fs.count(f.op), f.op)
				case f.outcome == failStops && !failed:
					t.Fatalf("the %s fault fired and the store went on", f.op)
				case f.outcome == survives && failed:
					t.Fatalf("the store failed on a %s fault it should have survived", f.op)
				}
			})
		}
	}
}

// faultRun runs ops on a store in dir on fs until a call fails, checks
// that the store fail-stops, reopens it on the real file system and checks
// what it holds; it reports whether a call (Open or Close included)
// failed.
func faultRun(t *testing.T, dir string, fs *faultFS, ops []storetest.Op) bool {
	durable, made := 0, 0 // calls acknowledged durable; calls made
	var failure error
	s, err := Open(dir, tinyOpts(t, fs))
	if err != nil {
		failure = err
	} else {
		for _, op := range ops {
			made++
			if failure = op.Call(s); failure != nil {
				break
			}
			if op.Trim == nil && op.Ack == nil { // a trim or ack is durable once a later sync is
				durable = made
			}
		}
		if failure != nil {
			// Fail-stop: nothing more is accepted, nothing more is read.
			if err := s.Commit(&transport.Commit{Job: "after"}); err == nil || !errors.Is(err, fs.err) {
				t.Errorf("a commit after the failure: %v, want the failure", err)
			}
			if _, err := transport.LoadAll(s); err == nil || !errors.Is(err, fs.err) {
				t.Errorf("Load after the failure: %v, want the failure", err)
			}
			if _, err := s.NextIncarnation(0); err == nil {
				t.Error("NextIncarnation after the failure succeeded")
			}
		}
		if err := s.Close(); err != nil && failure == nil {
			failure = err
		} else if err == nil && failure == nil {
			durable = made // Close syncs the trims
		}
	}
	if failure != nil && !errors.Is(failure, fs.err) {
		t.Fatalf("the store failed with %v, want the injected %v", failure, fs.err)
	}

	s = openWith(t, dir, tinyOpts(t, nil))
	got, err := transport.LoadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	model := transport.NewMemStore()
	storetest.Apply(t, model, ops[:durable])
	k := durable
	for ; ; k++ {
		want, err := transport.LoadAll(model)
		if err != nil {
			t.Fatal(err)
		}
		d := storetest.Diff(got, want)
		if d == "" {
			break
		}
		if k == made {
			t.Fatalf("reopened, the store holds none of the states after calls %d to %d (durable: %d, made: %d); against the last:\n%s", durable, made, durable, made, d)
		}
		storetest.Apply(t, model, ops[k:k+1])
	}
	t.Logf("reopened: %d calls of %d made (%d durable), failure: %v", k, made, durable, failure)
	// It goes on from there, and keeps it across a reopen.
	storetest.Apply(t, s, ops[k:])
	storetest.Apply(t, model, ops[k:])
	want, _ := transport.LoadAll(model)
	storetest.CheckLoad(t, s, want)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openWith(t, dir, tinyOpts(t, nil))
	defer s.Close()
	storetest.CheckLoad(t, s, want)
	storetest.CheckOutboxes(t, s, model)
	return failure != nil
}

// TestFaultsAtOpen fails, one at a time, the calls Open makes on a store
// that holds data and a torn tail: listing the directory, opening a
// segment, reading it, cutting the tail, syncing. Open returns the error
// and changes nothing that a later Open on the real file system needs:
// that one finds every commit.
func TestFaultsAtOpen(t *testing.T) {
	for _, op := range []fsOp{opReadDir, opOpen, opRead, opTruncate, opSync} {
		t.Run(string(op), func(t *testing.T) {
			dir := t.TempDir()
			ops := storetest.RandomOps(7, 200)
			s := openWith(t, dir, tinyOpts(t, nil))
			storetest.Apply(t, s, ops)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// A torn tail: half a record's frame after the last one.
			segs, err := listSegments(OS, dir)
			if err != nil || len(segs) == 0 {
				t.Fatalf("segments: %v %v", segs, err)
			}
			tail, err := os.OpenFile(filepath.Join(dir, segName(segs[len(segs)-1])), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tail.Write([]byte{0x20, 0, 0}); err != nil {
				t.Fatal(err)
			}
			tail.Close()

			fs := &faultFS{FS: OS, op: op, nth: 1, err: syscall.EIO}
			if s, err := Open(dir, tinyOpts(t, fs)); err == nil {
				s.Close()
				t.Fatalf("Open succeeded through a failing %s (%d calls)", op, fs.count(op))
			} else if !errors.Is(err, syscall.EIO) {
				t.Fatalf("Open: %v, want the injected EIO", err)
			}
			model := transport.NewMemStore()
			storetest.Apply(t, model, ops)
			want, _ := transport.LoadAll(model)
			s = openWith(t, dir, tinyOpts(t, nil))
			defer s.Close()
			storetest.CheckLoad(t, s, want)
		})
	}
}

// TestConformanceThroughTheSeam runs the conformance suite on stores whose
// every file operation goes through a wrapping FS that never fails, and
// checks that each kind of operation reached it: the store does nothing
// to its files behind the FS's back.
func TestConformanceThroughTheSeam(t *testing.T) {
	fs := &faultFS{FS: OS}
	storetest.RunReopen(t, func(t *testing.T, dir string) transport.Store { return openWith(t, dir, tinyOpts(t, fs)) })
	for _, op := range []fsOp{opWrite, opSync, opRead, opCreate, opOpen, opRemove, opSyncDir, opReadDir} {
		if fs.count(op) == 0 {
			t.Errorf("no %s went through the FS", op)
		}
	}
}

// TestOnlyTheFSTouchesTheDisk: outside fs.go and the lock and sync
// helpers, the package calls none of the os functions that reach the
// file system, so that every file operation goes through Options.FS.
func TestOnlyTheFSTouchesTheDisk(t *testing.T) {
	allowed := map[string]bool{"fs.go": true, "lock_unix.go": true, "lock_other.go": true, "sync_linux.go": true, "sync_other.go": true}
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") || allowed[name] {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range []string{"os", "syscall"} {
			for _, fn := range []string{"Open", "OpenFile", "Create", "Remove", "RemoveAll", "Rename", "ReadDir", "ReadFile", "WriteFile", "Truncate", "Mkdir", "MkdirAll", "Chmod", "Fdatasync", "Fsync"} {
				if strings.Contains(string(src), pkg+"."+fn+"(") {
					t.Errorf("%s calls %s.%s: go through the store's FS", name, pkg, fn)
				}
			}
		}
	}
}
