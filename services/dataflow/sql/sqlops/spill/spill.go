package spill

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
)

// OverLimit is the error of an Append that would take a Space past its
// limit: how many bytes were spilled with it, and the limit.
type OverLimit struct{ Limit, Spent int64 }

func (e *OverLimit) Error() string {
	return fmt.Sprintf("spill: %d bytes on disk, more than the %d allowed", e.Spent, e.Limit)
}

// Space is one task instance's spill files: a directory of its own under
// root, made when the first file is, and the bytes its files hold,
// bounded by limit. It is not safe for concurrent use.
type Space struct {
	root, name string
	limit      int64
	dir        string // "" until the first file
	used       int64
	files      []*Files
}

// NewSpace returns the space of a task instance (name, for its
// directory's) under root, its files at most limit bytes in all. Nothing
// is made on disk until an Append.
func NewSpace(root, name string, limit int64) *Space {
	return &Space{root: root, name: name, limit: limit}
}

// Used is the bytes the space's files hold now.
func (s *Space) Used() int64 { return s.used }

// Dir is the space's directory, "" until a file has been made.
func (s *Space) Dir() string { return s.dir }

// Close closes every file of the space and removes its directory, and
// root too when that leaves it empty (a job's directory of its
// instances').
func (s *Space) Close() error {
	var errs []error
	for _, f := range s.files {
		for p := range f.parts {
			errs = append(errs, f.closePart(p))
		}
	}
	s.files = nil
	if s.dir != "" {
		roots.Lock()
		errs = append(errs, os.RemoveAll(s.dir))
		s.dir = ""
		os.Remove(s.root) // a job's directory, when it is left empty; not an error otherwise
		roots.Unlock()
	}
	s.used = 0
	return errors.Join(errs...)
}

// roots orders the making and the removing of the spaces' roots: the
// task instances of a job share one (a job's directory), which the last
// to close removes, and one that makes its directory meanwhile must not
// find the root gone between making it and making its own in it (the
// demo's job failed so once, "spill: stat ...: no such file").
var roots sync.Mutex

// mkdir makes the space's directory, a new one under root (what another
// incarnation of the task left under root is another directory's).
func (s *Space) mkdir() error {
	if s.dir != "" {
		return nil
	}
	roots.Lock()
	defer roots.Unlock()
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	dir, err := os.MkdirTemp(s.root, s.name+"-")
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	s.dir = dir
	return nil
}

// Files is one operator's rows of columns cols, in partitions: a file
// each, made at its first Append.
type Files struct {
	s     *Space
	name  string
	cols  []plan.Column
	parts []part
	w     wire.Writer
	buf   []byte
}

// part is one partition's file, written through a buffer, and the bytes
// appended to it.
type part struct {
	f     *os.File
	bw    *bufio.Writer
	bytes int64
}

// bufBytes is each partition's write buffer: a join's 2 x 32 of them hold
// 1 MiB, and the 13 joins of the analyst job on two shards, 1,664 files,
// 27 MiB (64 KiB each held 105 MiB, a fifth of the process's budget, and
// were no faster: 66 s for the job, where 16 KiB took 60 s).
const bufBytes = 16 << 10

// Files returns the space's files of an operator (name, unique in the
// space: the files are name-<partition>) of rows of cols, in parts
// partitions.
func (s *Space) Files(name string, parts int, cols []plan.Column) *Files {
	f := &Files{s: s, name: name, cols: cols, parts: make([]part, parts)}
	s.files = append(s.files, f)
	return f
}

// Bytes is the bytes appended to partition p.
func (f *Files) Bytes(p int) int64 { return f.parts[p].bytes }

func (f *Files) path(p int) string { return filepath.Join(f.s.dir, fmt.Sprintf("%s-%d", f.name, p)) }

// Append appends the rows of b at rows (nil: all of them) to partition
// p; an *OverLimit when the space would hold more than its limit then.
func (f *Files) Append(p int, b *exec.Batch, rows []int32) error {
	sel := wire.Span(0, b.N)
	if rows != nil {
		sel = wire.Picked(rows)
	}
	if sel.Len() == 0 {
		return nil
	}
	f.buf = f.w.Append(f.buf[:0], b, sel, nil)
	return f.write(p, f.buf)
}

// AppendBytes appends data, bytes of the operator's own (an aggregate's
// groups' state), to partition p as Append appends a batch; ReadBytes
// reads them back. A partition's file is of batches or of bytes.
func (f *Files) AppendBytes(p int, data []byte) error { return f.write(p, data) }

// write appends data after its length to partition p's file, made at
// its first write.
func (f *Files) write(p int, data []byte) error {
	n := len(data)
	var head [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(head[:], uint64(n))
	if f.s.limit > 0 && f.s.used+int64(h+n) > f.s.limit {
		return &OverLimit{Limit: f.s.limit, Spent: f.s.used + int64(h+n)}
	}
	pt := &f.parts[p]
	if pt.f == nil {
		if err := f.s.mkdir(); err != nil {
			return err
		}
		file, err := os.OpenFile(f.path(p), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		pt.f, pt.bw = file, bufio.NewWriterSize(file, bufBytes)
	}
	if _, err := pt.bw.Write(head[:h]); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	if _, err := pt.bw.Write(data); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	pt.bytes += int64(h + n)
	f.s.used += int64(h + n)
	return nil
}

// Read hands each to the batches appended to partition p, in the order
// they were, and stops at its first error. Appends may follow.
func (f *Files) Read(p int, each func(*exec.Batch) error) error {
	return f.ReadBytes(p, func(data []byte) error {
		b, err := f.decode(data)
		if err != nil {
			return fmt.Errorf("spill: %s: %w", f.path(p), err)
		}
		return each(b)
	})
}

// ReadBytes hands each the bytes of each append to partition p, in the
// order they were (AppendBytes's; for a batch's, its encoding), and
// stops at its first error; each's bytes are not to be kept past it.
// Appends may follow.
func (f *Files) ReadBytes(p int, each func([]byte) error) error {
	pt := &f.parts[p]
	if pt.f == nil {
		return nil
	}
	if err := pt.bw.Flush(); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	r := bufio.NewReaderSize(io.NewSectionReader(pt.f, 0, pt.bytes), 1<<20)
	var buf []byte
	for {
		n, err := binary.ReadUvarint(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("spill: %s: %w", f.path(p), err)
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("spill: %s: %w", f.path(p), err)
		}
		if err := each(buf); err != nil {
			return err
		}
	}
}

// decode reads a batch Append wrote: by the codec (wire.Read), or the
// long way where it declines.
func (f *Files) decode(encoded []byte) (*exec.Batch, error) {
	if b, _, ok := wire.Read(encoded, f.cols); ok {
		return b, nil
	}
	rows := &wololov1.RowBatch{}
	if err := proto.Unmarshal(encoded, rows); err != nil {
		return nil, err
	}
	return wire.FromRows(rows, f.cols)
}

// Drop removes partition p's file, whose bytes the space no longer
// counts.
func (f *Files) Drop(p int) error {
	return f.closePart(p)
}

func (f *Files) closePart(p int) error {
	pt := &f.parts[p]
	if pt.f == nil {
		return nil
	}
	path := f.path(p)
	err := errors.Join(pt.f.Close(), os.Remove(path))
	f.s.used -= pt.bytes
	*pt = part{}
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	return nil
}
