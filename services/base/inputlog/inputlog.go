// Package inputlog keeps, on the gateway's disk, a copy of every job's
// uploaded input until the job is over: the bytes of each file at their
// offsets in the file, so that the gateway can run the job again from its
// first byte when a process lost its state (gateway/rebuild.go), without
// the client.
//
// It is a directory of plain files, one per input of a job
// (DIR/JOB/INPUT), written at the offsets the client sent, so that a
// resent chunk overwrites its own bytes and an upload resumed after a
// gateway restart needs no bookkeeping here: the upload's committed offset
// (in the store) says how far the copy is good. The bytes before a file's
// first record (its header) are never written; the file is sparse there.
//
// Durability: writes are not synced one by one (that would double the
// upload's syncs); Sync is called when an input's upload ends, before the
// commit that records it complete. So a job whose every upload is
// complete has its whole input on disk, and only such a job is run again
// from it. Before that, a process crash (not a machine's) loses nothing
// committed: the gateway commits an upload step only once the file holds
// its bytes (Writer.Written), and what is in the file outlives the
// process. How the bytes are written, off the caller's goroutine and past
// the page cache, and why, is Writer's doc.
//
// Why not the transport Store: its implementations hold every live value
// (segstore's index, the MemStore) or entry in memory after a restart, and
// a job's input is hundreds of megabytes; here nothing is read until a
// rebuild, and then sequentially. What it costs on disk: 1.0x the input
// of every job that is not over, bounded by the jobs' byte quotas
// (--max-job-bytes, --client-max-bytes). Raw bytes, not compressed: on
// the generated dataset (match_players.csv of 300k matches, 1 MiB chunks)
// S2 kept 1/1.43 of the bytes at about 310 MB/s of one core, S2's better
// mode 1/1.58 at 190 MB/s and zstd's fastest 1/1.91 at 130 MB/s: 3 to 6.5
// CPU-seconds for the full dataset's 858 MB, on a gateway whose whole job
// costs about 7, to save a third to a half of a disk cost that lasts only
// until the job is over. A copy of only the columns a job's queries read
// would be smaller still, at the price of replaying the plan's rows rather
// than the client's bytes.
//
// The package touches only its directory; what a job and an input are is
// the caller's (names are checked to be plain file names).
package inputlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Dir is the directory of retained inputs.
type Dir struct {
	path     string
	buffered bool // never direct I/O (tests of the fallback)
}

// Open makes (if needed) and opens the directory.
func Open(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("input log: %w", err)
	}
	return &Dir{path: path}, nil
}

func checkName(what, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, 0) {
		return fmt.Errorf("input log: %s %q is not a plain file name", what, name)
	}
	return nil
}

func (d *Dir) file(job, input string) (string, error) {
	if err := checkName("job", job); err != nil {
		return "", err
	}
	if err := checkName("input", input); err != nil {
		return "", err
	}
	return filepath.Join(d.path, job, input), nil
}

// Reader opens an input's copy for reading; it must hold at least size
// bytes (the whole file as its header declared it), else the copy is not
// whole and an error says so.
func (d *Dir) Reader(job, input string, size int64) (io.ReadSeekCloser, error) {
	p, err := d.file(job, input)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("input log: %w", err)
	}
	st, err := f.Stat()
	if err == nil && st.Size() < size {
		err = fmt.Errorf("input log: %s holds %d bytes, not the %d of the file", p, st.Size(), size)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Whole reports whether an input's copy holds at least size bytes (what
// Reader checks).
func (d *Dir) Whole(job, input string, size int64) bool { return d.Size(job, input) >= size }

// Size is how many bytes of an input the copy holds (its length; 0 when
// there is none).
func (d *Dir) Size(job, input string) int64 {
	p, err := d.file(job, input)
	if err != nil {
		return 0
	}
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// Has reports whether a job has any retained input.
func (d *Dir) Has(job string) bool {
	if checkName("job", job) != nil {
		return false
	}
	_, err := os.Stat(filepath.Join(d.path, job))
	return err == nil
}

// Rename gives a job's retained inputs to another job id (a rebuild's).
// A job with none is not an error: there is nothing to give.
func (d *Dir) Rename(from, to string) error {
	if err := checkName("job", from); err != nil {
		return err
	}
	if err := checkName("job", to); err != nil {
		return err
	}
	err := os.Rename(filepath.Join(d.path, from), filepath.Join(d.path, to))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("input log: %w", err)
	}
	return nil
}

// Drop deletes a job's retained inputs (none is not an error).
func (d *Dir) Drop(job string) error {
	if err := checkName("job", job); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(d.path, job)); err != nil {
		return fmt.Errorf("input log: %w", err)
	}
	return nil
}

// Jobs lists the jobs that have retained inputs.
func (d *Dir) Jobs() ([]string, error) {
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("input log: %w", err)
	}
	var jobs []string
	for _, e := range ents {
		if e.IsDir() {
			jobs = append(jobs, e.Name())
		}
	}
	return jobs, nil
}
