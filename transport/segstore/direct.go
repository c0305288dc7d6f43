package segstore

import (
	"cmp"
	"os"

	"github.com/wololo/wololo/internal/directio"
)

// The current segment is appended to through a directio.Appender: a
// group's records are staged in aligned memory and written at once, their
// whole blocks with direct I/O (past the page cache) where the file
// system takes it and the group is large enough, the rest through the
// page cache; the group's fdatasync then covers both. Why: the segments
// are written once and read back only by Open and compaction, and a
// buffered write into a new file cost the shards and the gateway more CPU
// (the kernel's page allocation and accounting) than anything else they
// did to their stores (see the package directio). Where direct I/O is
// refused (another OS, a file system without it, a direct file that does
// not open) every write goes through the page cache, as before: the
// on-disk format and what a write or a sync means are the same.

// stagingBytes bounds the memory a store holds for its appends; a record
// larger than it (a snapshot) is written a staging at a time.
const stagingBytes = 1 << 20

// defaultMinDirect is the smallest group (in whole blocks' bytes)
// written directly: a direct write waits for the device, which a trim's
// few bytes are not worth. Options.minDirect, for tests, overrides it.
const defaultMinDirect = 64 << 10

// appender appends to segment n, open as f: the same file opened again
// with directio.Flag (through the store's FS) takes the direct writes.
func (s *Store) appender(f File, n uint64) *directio.Appender {
	p := directio.Pair{Buffered: f}
	if directio.Flag != 0 {
		if d, err := s.fs.OpenFile(s.path(n), os.O_WRONLY|directio.Flag, 0); err == nil {
			p.Direct = d
		}
	}
	a := directio.NewAppender(p, f, stagingBytes)
	a.MinDirect = cmp.Or(s.opts.minDirect, defaultMinDirect)
	return a
}
