// Package directio writes files past the page cache: the whole, aligned
// blocks of a write with direct I/O (O_DIRECT), the end of a block that
// is not whole through the page cache, and everything through the page
// cache where the file system refuses direct I/O. It knows nothing of
// what the bytes are: the gateway's retained input (services/base/
// inputlog) and the segment store's log (transport/segstore) write
// through it.
//
// Why: on this project's machines a buffered write into a new file costs
// several times the CPU of a direct one (the kernel's page allocation and
// accounting for every new page, not the copy, is the cost: 0.2-1.5 CPU-s
// per 858 MB against 0.06 s direct), it leaves the whole file dirty for
// the next fdatasync to write at once, and it fills the page cache (and a
// container's memory account) with pages nothing reads again. Both users
// write a file once, front to back, and read it back only after a restart.
//
// Two shapes, one rule: Pair.WriteAt writes one aligned buffer (the input
// log stages its own buffers on a goroutine of its own); Appender stages
// appended bytes in aligned memory and writes them when told (the store
// writes a group of records, then syncs). The bytes of an unfinished
// block are written through the page cache, so that the file holds every
// byte written as soon as the call returns (whatever then kills the
// process: the page cache outlives it), and they begin the next direct
// write, which writes that block again, whole.
//
// It is a generic leaf: it imports nothing of this module and does no
// syncing (its callers sync the buffered file: fdatasync covers what was
// written either way).
package directio

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"unsafe"
)

// Block is the unit of direct I/O: the offsets, lengths and memory of a
// direct write are multiples of it (4 KiB covers 512-byte and 4 KiB
// logical blocks alike).
const Block = 4096

// AlignedBuffer is n bytes (length 0, capacity n) whose first byte is at a
// multiple of Block in memory, as direct I/O needs.
func AlignedBuffer(n int) []byte {
	b := make([]byte, n+Block)
	skip := (Block - int(uintptr(unsafe.Pointer(&b[0]))%Block)) % Block
	return b[skip : skip : skip+n]
}

// DirectFile is the file open for direct writes.
type DirectFile interface {
	io.WriterAt
	io.Closer
}

// Pair is one file open twice: Buffered through the page cache and Direct
// with Flag. Direct is nil where the file could not be opened so, and
// becomes nil (closed) when the file system refuses a direct write after
// all: every later write goes through the page cache.
type Pair struct {
	Buffered io.WriterAt
	Direct   DirectFile
}

// WriteAt writes data at off, which is a multiple of Block, data's memory
// beginning at a multiple of Block (AlignedBuffer's): its whole blocks
// directly, the rest through the page cache. The first from bytes of data
// are in the file already: written through the page cache, they are not
// written again. It returns how many of data's bytes are whole blocks (a
// multiple of Block), written either way.
func (p *Pair) WriteAt(data []byte, off int64, from int) (whole int, err error) {
	whole = len(data) - len(data)%Block
	if p.Direct != nil && whole > 0 {
		_, err := p.Direct.WriteAt(data[:whole], off)
		if errors.Is(err, syscall.EINVAL) {
			// Refused after all (a file system that opens O_DIRECT but
			// cannot do it here, or a misaligned request): this and every
			// later write goes through the page cache.
			p.Direct.Close()
			p.Direct, err = nil, nil
		} else if err == nil {
			from = max(from, whole)
		}
		if err != nil {
			return whole, err
		}
	}
	if from < len(data) {
		if _, err := p.Buffered.WriteAt(data[from:], off+int64(from)); err != nil {
			return whole, err
		}
	}
	return whole, nil
}

// Close closes the direct file, if any (the buffered one is the
// caller's).
func (p *Pair) Close() error {
	if p.Direct == nil {
		return nil
	}
	err := p.Direct.Close()
	p.Direct = nil
	return err
}

// Appender writes what is appended to one file through a Pair. Stage
// copies bytes into aligned memory, which begins at the first byte of the
// block the last write ended in; Flush writes what is staged. A flush
// writes directly when the staging holds at least MinDirect bytes of
// whole blocks (fewer go through the page cache: a direct write waits
// for the device, which a few bytes are not worth), and a staging that
// fills up is written at once.
type Appender struct {
	pair Pair
	read io.ReaderAt // the buffered file, to read a block's start back
	buf  []byte      // the file's bytes from base; the first from of them are in the file
	base int64       // a multiple of Block; -1 before the first Stage
	from int
	// MinDirect is the smallest run of whole blocks a flush writes
	// directly (not counting a full staging, always written directly).
	MinDirect int
}

// NewAppender appends to the file open as p, whose buffered side r also
// reads; staging (a multiple of Block) bounds the memory it holds.
func NewAppender(p Pair, r io.ReaderAt, staging int) *Appender {
	if staging < Block || staging%Block != 0 {
		panic(fmt.Sprintf("directio: staging of %d bytes, not a positive multiple of %d", staging, Block))
	}
	return &Appender{pair: p, read: r, buf: AlignedBuffer(staging), base: -1, MinDirect: 64 << 10}
}

// Direct reports whether writes still go direct (false where the file
// system refused it).
func (a *Appender) Direct() bool { return a.pair.Direct != nil }

// Stage appends bufs, one after the other, at off. The file's bytes
// before off must be the file's already (written by this Appender or
// found there): when off is not where the staged bytes end, what is
// staged is written and the start of off's block is read back.
func (a *Appender) Stage(off int64, bufs ...[]byte) error {
	if off != a.base+int64(len(a.buf)) {
		if err := a.Flush(); err != nil {
			return err
		}
		if err := a.startAt(off); err != nil {
			return err
		}
	}
	for _, b := range bufs {
		for len(b) > 0 {
			n := copy(a.buf[len(a.buf):cap(a.buf)], b)
			a.buf, b = a.buf[:len(a.buf)+n], b[n:]
			if len(a.buf) == cap(a.buf) {
				if err := a.flush(0); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Flush writes what is staged: once it returns, the file holds every byte
// staged (it is not synced).
func (a *Appender) Flush() error { return a.flush(a.MinDirect) }

func (a *Appender) flush(minDirect int) error {
	if a.from == len(a.buf) {
		return nil
	}
	var whole int
	var err error
	if len(a.buf)-len(a.buf)%Block >= minDirect {
		whole, err = a.pair.WriteAt(a.buf, a.base, a.from)
	} else {
		buffered := Pair{Buffered: a.pair.Buffered} // this once
		whole, err = buffered.WriteAt(a.buf, a.base, a.from)
	}
	if err != nil {
		return err
	}
	// Keep the unfinished block: the next direct write starts with it.
	n := copy(a.buf, a.buf[whole:])
	a.buf, a.base, a.from = a.buf[:n], a.base+int64(whole), n
	return nil
}

// startAt begins the staging at off, with the bytes of off's block
// before it (ReadBlockStart).
func (a *Appender) startAt(off int64) error {
	var err error
	a.base, a.buf, err = ReadBlockStart(a.read, a.buf, off)
	a.from = len(a.buf)
	return err
}

// ReadBlockStart is where a direct write that goes on at off begins: the
// first byte of off's block (base), and that block's bytes before off,
// read from r into buf (aligned memory of at least Block bytes, its
// contents replaced). Bytes beyond r's end read as zeros.
func ReadBlockStart(r io.ReaderAt, buf []byte, off int64) (base int64, start []byte, err error) {
	base = off - off%Block
	start = buf[:off-base]
	if len(start) == 0 {
		return base, start, nil
	}
	n, err := r.ReadAt(start, base)
	if err != nil && n < len(start) && !errors.Is(err, io.EOF) {
		return base, start, fmt.Errorf("read back the block at %d: %w", base, err)
	}
	clear(start[n:])
	return base, start, nil
}

// Close closes the direct file (the buffered one is the caller's); it
// does not flush.
func (a *Appender) Close() error { return a.pair.Close() }
