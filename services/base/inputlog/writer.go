package inputlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/wololo/wololo/internal/directio"
)

// stagingBytes is the size of a staging buffer: a direct write takes at
// most this much, and a WriteAt that fills one hands it to the writing
// goroutine without waiting for a Push.
const stagingBytes = 4 << 20

// buffers is how many staging buffers a Writer has: one the caller fills
// while the others are written.
const buffers = 3

// Writer is one input's copy, open for writing: the bytes an upload
// sends, in order, from the offset it resumes at. A nil Writer keeps
// nothing: its methods do nothing (an upload that retains no copy).
//
// The caller's goroutine only copies what it is given into a staging
// buffer; a goroutine of the Writer's own writes the buffers to the file,
// with direct I/O (O_DIRECT, whole aligned blocks, past the page cache:
// the package directio, which says why) where the file system takes it;
// where it is refused, through the page cache. Direct writes also leave no
// dirty pages for the final Sync to write: a buffered copy of the whole
// input made that Sync, on the upload's last step, write hundreds of
// megabytes at once.
//
// Push hands over what was written so far, including the end of a block
// that is not whole, which it writes through the page cache (the next
// direct write rewrites that block whole); Written waits until the file
// holds it. The gateway pushes each upload step as it queues it and waits
// before committing it, so that a committed offset is always in the file,
// whatever kills the process after (the page cache outlives the process).
type Writer struct {
	f    *os.File      // the copy, read and synced through the page cache
	pair directio.Pair // f, and the same file open for direct writes

	// The caller's: cur holds the bytes from base (a multiple of block)
	// to next, not yet handed over.
	cur  []byte
	base int64
	next int64

	work chan write    // to the writing goroutine
	free chan []byte   // staging buffers it is done with
	done chan struct{} // closed when it returns
	mu   sync.Mutex    // guards what follows
	cond *sync.Cond    // signalled as written grows or err is set
	err  error         // the first write error; nothing more is written
	upTo int64         // the file holds every byte handed over before this offset
	sent int64         // how far the caller has handed over (its own, for Written)
	stop sync.Once     // Close's
}

// write is a staging buffer handed to the writing goroutine, free again
// once written: data from file offset at (a multiple of directio.Block).
type write struct {
	data []byte
	at   int64
}

// Writer opens an input's copy for writing at any offset (creating it),
// for an upload that resumes at offset from: the copy must hold every
// byte before from already, which it does when from is the file's first
// record (start) or the copy reaches from (every upload's bytes are in
// the file before they are committed: Written). Otherwise (the copy was
// lost, or the gateway kept none when those bytes came) no copy of the
// input can be whole: it is deleted, and Writer returns nil (keep
// nothing), so that Reader fails rather than replay a hole.
func (d *Dir) Writer(job, input string, start, from int64) (*Writer, error) {
	p, err := d.file(job, input)
	if err != nil {
		return nil, err
	}
	if from > start {
		if st, err := os.Stat(p); err != nil || st.Size() < from {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("input log: %w", err)
			}
			return nil, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("input log: %w", err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("input log: %w", err)
	}
	pair := directio.Pair{Buffered: f}
	if !d.buffered {
		if direct := directio.OpenDirect(p); direct != nil {
			pair.Direct = direct
		}
	}
	w := newWriter(f, pair)
	if err := w.startAt(from); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

func newWriter(f *os.File, pair directio.Pair) *Writer {
	w := &Writer{f: f, pair: pair, work: make(chan write, buffers), free: make(chan []byte, buffers), done: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	for range buffers {
		w.free <- directio.AlignedBuffer(stagingBytes)
	}
	go w.run()
	return w
}

// startAt begins the staging at from, with the bytes of from's block
// before it read back from the copy (directio.ReadBlockStart; none beyond
// its end: the header before a file's first record is never written, and
// reads as zeros).
func (w *Writer) startAt(from int64) error {
	base, cur, err := directio.ReadBlockStart(w.f, <-w.free, from)
	w.cur, w.base, w.next, w.sent = cur, base, from, from
	w.mu.Lock()
	w.upTo = from
	w.mu.Unlock()
	if err != nil {
		return fmt.Errorf("input log: %w", err)
	}
	return nil
}

// WriteAt writes data at offset off of the input. An offset that does not
// continue the last write's hands over what came before it first.
func (w *Writer) WriteAt(data []byte, off int64) error {
	if w == nil {
		return nil
	}
	if off != w.next {
		if err := w.drain(); err != nil {
			return err
		}
		w.free <- w.cur[:0]
		if err := w.startAt(off); err != nil {
			return err
		}
	}
	for len(data) > 0 {
		n := copy(w.cur[len(w.cur):cap(w.cur)], data)
		w.cur = w.cur[:len(w.cur)+n]
		w.next += int64(n)
		data = data[n:]
		if len(w.cur) == cap(w.cur) {
			if err := w.Push(); err != nil {
				return err
			}
		}
	}
	return w.failed()
}

// Push hands every byte written so far to the writing goroutine; Written
// says when the file holds them.
func (w *Writer) Push() error {
	if w == nil {
		return nil
	}
	if err := w.failed(); err != nil {
		return err
	}
	if w.next == w.sent {
		return nil
	}
	// The bytes of an unfinished block, if any, begin the next buffer,
	// which the next direct write writes whole; this write puts them in
	// the file through the page cache meanwhile.
	whole := len(w.cur) - len(w.cur)%directio.Block
	next := (<-w.free)[:len(w.cur)-whole]
	copy(next, w.cur[whole:])
	w.work <- write{data: w.cur, at: w.base}
	w.cur, w.base, w.sent = next, w.base+int64(whole), w.next
	return nil
}

// drain hands over every byte written so far and waits until the file
// holds them.
func (w *Writer) drain() error {
	if err := w.Push(); err != nil {
		return err
	}
	return w.waitFor(w.sent)
}

// Written waits until the file holds every byte of the input before off
// (which the Writer was given and pushed), or the writing failed.
func (w *Writer) Written(off int64) error {
	if w == nil {
		return nil
	}
	return w.waitFor(off)
}

func (w *Writer) waitFor(off int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.upTo < off && w.err == nil {
		w.cond.Wait()
	}
	return w.err
}

func (w *Writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// run writes the buffers handed over, in order, until work is closed.
func (w *Writer) run() {
	defer close(w.done)
	for wr := range w.work {
		err := w.failed()
		if err == nil {
			err = w.writeOut(wr)
		}
		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = fmt.Errorf("input log: %w", err)
		}
		if w.err == nil {
			w.upTo = wr.at + int64(len(wr.data))
		}
		w.cond.Broadcast()
		w.mu.Unlock()
		w.free <- wr.data[:0]
	}
}

// writeOut writes one handed-over buffer: its whole blocks directly where
// the file system takes it, the rest through the page cache.
func (w *Writer) writeOut(wr write) error {
	_, err := w.pair.WriteAt(wr.data, wr.at, 0)
	return err
}

// Sync makes what was written durable: it hands it over, waits until the
// file holds it and syncs the file.
func (w *Writer) Sync() error {
	if w == nil {
		return nil
	}
	if err := w.drain(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("input log: %w", err)
	}
	return nil
}

// Close writes what it was given (without syncing it: the page cache
// outlives the process) and closes the copy.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	err := w.Push()
	w.stop.Do(func() { close(w.work) })
	<-w.done
	if err == nil {
		err = w.failed()
	}
	w.pair.Close()
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("input log: %w", cerr)
	}
	return err
}
