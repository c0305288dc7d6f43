package durable

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// syncCountingFS is the OS file system with a counter of the syncs issued
// on WAL files (*.log). Pebble's commit pipeline issues one WAL sync for a
// whole group of concurrently committed batches, so this counter is the
// number of syncs the store really paid for, which is what Stats.Syncs
// reports.
type syncCountingFS struct {
	vfs.FS
	syncs  *atomic.Int64
	onSync func(time.Duration) // Options.OnSync; nil: none
}

func (fs syncCountingFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return syncCountingFile{File: f, syncs: fs.syncs, onSync: fs.onSync}, nil
}

func (fs syncCountingFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return fs.wrap(name, f, err)
}

func (fs syncCountingFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return fs.wrap(newname, f, err)
}

func (fs syncCountingFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	return fs.wrap(name, f, err)
}

func (fs syncCountingFS) Unwrap() vfs.FS { return fs.FS }

type syncCountingFile struct {
	vfs.File
	syncs  *atomic.Int64
	onSync func(time.Duration)
}

// timed reports how long a sync that began at start took.
func (f syncCountingFile) timed(start time.Time) {
	if f.onSync != nil {
		f.onSync(time.Since(start))
	}
}

func (f syncCountingFile) Sync() error {
	f.syncs.Add(1)
	defer f.timed(time.Now())
	return f.File.Sync()
}

func (f syncCountingFile) SyncData() error {
	f.syncs.Add(1)
	defer f.timed(time.Now())
	return f.File.SyncData()
}

func (f syncCountingFile) SyncTo(length int64) (bool, error) {
	start := time.Now()
	full, err := f.File.SyncTo(length)
	if full {
		f.syncs.Add(1)
		f.timed(start)
	}
	return full, err
}
