package segstore

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/internal/directio"
	"github.com/wololo/wololo/transport"
)

// Options configure a Store.
type Options struct {
	// Log receives what the store has to say (a torn tail truncated at
	// Open, compactions, failures). Nil discards it.
	Log hclog.Logger
	// NoSync commits without waiting for stable storage (records are still
	// written before Commit returns). For benchmarks only. NextIncarnation
	// syncs all the same.
	NoSync bool
	// SegmentSize is the size at which the current segment is closed and
	// a new one begun; 0 means DefaultSegmentSize. A record larger than
	// it gets a segment of its own.
	SegmentSize int64
	// IdleAfter is how long the store must see no write before it compacts
	// its current segment too (see "Compaction" in doc.go); 0 means
	// DefaultIdleAfter, a negative value never.
	IdleAfter time.Duration
	// OnSync, if set, is told how long every sync to stable storage took
	// (for the process's metrics). It must be quick and must not call the
	// store.
	OnSync func(time.Duration)
	// FS is the file system the store works on; nil means OS. Tests put
	// faults there.
	FS FS
	// minDirect, if set, replaces defaultMinDirect (direct.go): tests
	// send every whole block direct.
	minDirect int
}

// Defaults of Options.
const (
	DefaultSegmentSize = 64 << 20
	DefaultIdleAfter   = 2 * time.Second
)

const (
	// idleGarbage is the garbage an idle store gets rid of (at most one
	// segment's worth).
	idleGarbage = 256 << 10
	// copyChunk bounds the copy records of a compaction.
	copyChunk = 4 << 20
)

// ErrClosed is returned by every method called after Close.
var ErrClosed = errors.New("segstore: store is closed")

// ErrCorrupt is wrapped by the errors of Open (and Load) that are due to
// corrupt data rather than I/O or usage.
var ErrCorrupt = errors.New("corrupt segment")

// IsCorruption tells whether err is due to corrupt data.
func IsCorruption(err error) bool { return errors.Is(err, ErrCorrupt) }

// Store is a transport.Store on append-only segment files.
type Store struct {
	dir  string
	log  hclog.Logger
	opts Options
	fs   FS
	lock io.Closer

	// life is held shared by every call and exclusively by Close.
	life   sync.RWMutex
	closed bool

	// mu guards everything below it up to deleteMu. A call applies its
	// record to the index and queues it under mu, so the order of the
	// index is the order of the log.
	mu        sync.Mutex
	cond      sync.Cond // on mu: a group was written
	ix        *index
	files     map[uint64]File
	order     []uint64 // segment numbers, oldest first; the last is current
	cur       uint64   // the current segment
	curStart  int64    // end of its header
	curOff    int64    // where its next record goes
	syncedOff int64    // it is on stable storage up to here
	durable   pos      // the log is on stable storage up to here
	pending   *group   // records queued for the next write
	inflight  *group   // the group being written
	writing   bool
	loading   int  // Loads waiting for the queue to drain: no appends meanwhile
	flushing  bool // a background flush is on its way
	shut      bool // Close flushes: no more background flushes
	failed    error
	lastWrite time.Time

	// wf is the current segment's file for the writer, app what appends
	// to it (direct.go); touched only by the goroutine leading a write
	// (one at a time, handed over under mu).
	wf   File
	wseg uint64
	app  *directio.Appender

	// deleteMu is held shared while segments are read (Load) and
	// exclusively while one is deleted.
	deleteMu sync.RWMutex

	kick        chan struct{}
	compactReq  chan chan struct{}
	quit        chan struct{}
	janitorDone chan struct{}
	bg          sync.WaitGroup

	commits, bytes, syncs          atomic.Int64
	compactions, copied, deletions atomic.Int64
}

var _ transport.Store = (*Store)(nil)

// group is the records written (and synced) together.
type group struct {
	writes  []write
	sync    bool // fdatasync once written
	waiters int  // calls waiting for it
	end     pos  // end of the log when it was taken for writing
	done    bool
	err     error
}

// write is one record (or a segment's header) at its place.
type write struct {
	seg    uint64
	off    int64
	bufs   [][]byte
	create bool   // the header of a new segment: create the file first
	body   []byte // a commit's body, recycled once written
}

func segName(n uint64) string { return fmt.Sprintf("%08d.seg", n) }

func (s *Store) path(n uint64) string { return filepath.Join(s.dir, segName(n)) }

// Dir returns the directory the store lives in.
func (s *Store) Dir() string { return s.dir }

func (s *Store) enter() error {
	s.life.RLock()
	if s.closed {
		s.life.RUnlock()
		return ErrClosed
	}
	return nil
}

func (s *Store) leave() { s.life.RUnlock() }

// admitLocked waits while a Load drains the queue.
func (s *Store) admitLocked() {
	for s.loading > 0 {
		s.cond.Wait()
	}
}

// placeLocked makes room for a record of n bytes: a new segment when the
// current one would outgrow SegmentSize (unless it holds nothing yet).
func (s *Store) placeLocked(n int64) {
	if s.curOff > s.curStart && s.curOff+n > s.opts.SegmentSize {
		s.rotateLocked()
	}
}

// rotateLocked begins a new segment; its file is created by the write
// that carries its header, after the previous segment is synced.
func (s *Store) rotateLocked() {
	next := s.cur + 1
	rec := frameRecord(headerPayload(next))
	a := at{seg: next, off: 0, len: int64(len(rec))}
	s.pending.writes = append(s.pending.writes, write{seg: next, bufs: [][]byte{rec}, create: true})
	s.ix.apply(&record{kind: kindHeader, segno: next}, a, nil)
	s.order = append(s.order, next)
	s.cur, s.curStart, s.curOff, s.syncedOff = next, a.len, a.len, 0
}

// appendLocked queues a record of n bytes (bufs, frame first) at the end
// of the current segment; placeLocked(n) must have been called.
func (s *Store) appendLocked(n int64, bufs ...[]byte) at {
	a := at{seg: s.cur, off: s.curOff, len: n}
	s.curOff += n
	s.pending.writes = append(s.pending.writes, write{seg: a.seg, off: a.off, bufs: bufs})
	s.lastWrite = time.Now()
	return a
}

// appendSmallLocked queues a record whose payload p is made whole under
// mu; its trailer is filled in here, once the segment is known.
func (s *Store) appendSmallLocked(p []byte) at {
	n := int64(frameLen + len(p))
	s.placeLocked(n)
	putTrailer(p, s.syncedOff)
	return s.appendLocked(n, frameRecord(p))
}

// drainLocked waits until every record queued so far is in the files:
// the queued group written (this goroutine may write it), or else the one
// in flight. mu is held on return.
func (s *Store) drainLocked() error {
	if len(s.pending.writes) > 0 {
		g := s.pending
		g.waiters++
		return s.waitLocked(g)
	}
	if s.inflight != nil {
		return s.waitLocked(s.inflight)
	}
	return nil
}

// waitLocked returns once g is written (and synced, if g.sync), leading
// the write itself when no other goroutine is writing: the group commit.
// Commits queued while a write is in flight go out together in the next.
// mu is released while writing and held again on return.
func (s *Store) waitLocked(g *group) error {
	for !g.done {
		if s.writing {
			s.cond.Wait()
			continue
		}
		b := s.pending
		s.pending = &group{}
		if s.failed != nil {
			b.done, b.err = true, s.failed
			s.cond.Broadcast()
			continue
		}
		b.end = pos{s.cur, s.curOff}
		s.writing, s.inflight = true, b
		s.mu.Unlock()
		err := s.writeGroup(b)
		for _, w := range b.writes {
			if w.body != nil {
				putBuffer(w.body)
			}
		}
		s.mu.Lock()
		s.writing, s.inflight = false, nil
		s.finishLocked(b, err)
		s.cond.Broadcast()
	}
	return g.err
}

// writeGroup writes g's records in order and syncs once; the only I/O of
// the commit path.
func (s *Store) writeGroup(g *group) error {
	for _, w := range g.writes {
		if w.create {
			if err := s.startSegment(w.seg); err != nil {
				return err
			}
		}
		if w.seg != s.wseg {
			return fmt.Errorf("write to segment %d while %d is current", w.seg, s.wseg)
		}
		if err := s.app.Stage(w.off, w.bufs...); err != nil {
			return fmt.Errorf("write %s at %d: %w", segName(w.seg), w.off, err)
		}
	}
	if err := s.app.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", segName(s.wseg), err)
	}
	if g.sync {
		if err := s.syncFile(s.wf, s.wseg); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) syncFile(f File, n uint64) error {
	s.syncs.Add(1)
	start := time.Now()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", segName(n), err)
	}
	if s.opts.OnSync != nil {
		s.opts.OnSync(time.Since(start))
	}
	return nil
}

// startSegment syncs the current segment and creates the next one: a
// segment is whole on stable storage before anything goes to a later one,
// so only the last segment can have a torn tail.
func (s *Store) startSegment(n uint64) error {
	if err := s.app.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", segName(s.wseg), err)
	}
	if err := s.syncFile(s.wf, s.wseg); err != nil {
		return err
	}
	f, err := s.fs.OpenFile(s.path(n), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create segment: %w", err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		f.Close()
		return err
	}
	s.mu.Lock()
	s.files[n] = f
	s.mu.Unlock()
	s.app.Close()
	s.wf, s.wseg, s.app = f, n, s.appender(f, n)
	return nil
}

func (s *Store) finishLocked(g *group, err error) {
	g.done = true
	if err != nil {
		if s.failed == nil {
			s.failed = fmt.Errorf("store failed, reopen it: %w", err)
			s.log.Error("write failed; the store refuses every call until reopened", "error", err)
		}
		g.err = s.failed
		return
	}
	if g.sync && g.end.seg == s.cur {
		// Only a real sync: records claim it in their trailers.
		s.syncedOff = max(s.syncedOff, g.end.off)
	}
	if (g.sync || s.opts.NoSync) && s.durable.less(g.end) {
		s.durable = g.end
	}
	if len(s.pending.writes) > 0 && s.pending.waiters == 0 {
		s.flushLaterLocked() // trims queued behind this group
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// flushLaterLocked makes sure queued records that no call waits for (a
// Trim's) get written soon.
func (s *Store) flushLaterLocked() {
	if s.flushing || s.shut {
		return
	}
	s.flushing = true
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.flushing = false
		if s.shut || len(s.pending.writes) == 0 {
			return
		}
		g := s.pending
		g.waiters++
		_ = s.waitLocked(g) // a failure sticks in s.failed
	}()
}

// syncLocked writes and syncs everything queued.
func (s *Store) syncLocked() error {
	g := s.pending
	g.sync = true
	g.waiters++
	return s.waitLocked(g)
}

// Commit appends c as one record and returns once it is on stable
// storage.
func (s *Store) Commit(c *transport.Commit) error {
	if err := s.commit(c); err != nil {
		return fmt.Errorf("segstore: commit job %q: %w", c.Job, err)
	}
	return nil
}

func (s *Store) commit(c *transport.Commit) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	enc, err := encodeCommit(c) // outside mu: the rows are copied here, the state is not
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admitLocked()
	if s.failed != nil {
		return s.failed
	}
	n := s.ix.nextState(c.Job)
	plen := len(enc.body) + len(enc.state) + uvarintLen(n) + trailerLen
	if plen > maxPayload {
		return fmt.Errorf("commit of %d bytes: a record holds at most %d", plen, maxPayload)
	}
	size := int64(frameLen + plen)
	s.placeLocked(size)
	tail := commitTail(n, s.syncedOff)
	frame := appendFrame(make([]byte, 0, frameLen), plen, checksum(enc.crc, tail))
	a := s.appendLocked(size, frame, enc.body, enc.state, tail)
	s.pending.writes[len(s.pending.writes)-1].body = enc.body
	enc.rec.n = n
	s.ix.apply(&record{kind: kindCommit, commit: enc.rec}, a, nil)
	g := s.pending
	g.sync = g.sync || !s.opts.NoSync
	g.waiters++
	if err := s.waitLocked(g); err != nil {
		return err
	}
	s.commits.Add(1)
	s.bytes.Add(size)
	return nil
}

// Trim drops the channel's outbox entries up to seq and records the acked
// mark. Its record is written soon after, without waiting for a sync.
func (s *Store) Trim(ch transport.ChannelID, seq uint64) error {
	if err := s.mark(kindTrim, ch, seq); err != nil {
		return fmt.Errorf("segstore: trim %s to %d: %w", ch, seq, err)
	}
	return nil
}

// Acknowledge records the acked mark and keeps the channel's entries
// (live, copied by compaction, read by ReadOutbox; Load leaves them out).
// Its record is written soon after, without waiting for a sync.
func (s *Store) Acknowledge(ch transport.ChannelID, seq uint64) error {
	if err := s.mark(kindAck, ch, seq); err != nil {
		return fmt.Errorf("segstore: acknowledge %s to %d: %w", ch, seq, err)
	}
	return nil
}

// mark queues a trim or an ack (kind) and has it flushed soon.
func (s *Store) mark(kind byte, ch transport.ChannelID, seq uint64) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admitLocked()
	if s.failed != nil {
		return s.failed
	}
	if !s.ix.trimmable(ch) {
		return nil // as MemStore: a trim or ack of an unknown job does nothing
	}
	a := s.appendSmallLocked(markPayload(kind, ch, seq, 0))
	s.ix.apply(&record{kind: kind, trimCh: ch, trimTo: seq}, a, nil)
	if !s.writing && s.pending.waiters == 0 {
		s.flushLaterLocked()
	}
	return nil
}

// DropJob deletes the job and writes its tombstone, synced.
func (s *Store) DropJob(job string) error {
	if err := s.dropJob(job); err != nil {
		return fmt.Errorf("segstore: drop job %q: %w", job, err)
	}
	return nil
}

func (s *Store) dropJob(job string) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admitLocked()
	if s.failed != nil {
		return s.failed
	}
	a := s.appendSmallLocked(dropPayload(job, 0))
	s.ix.apply(&record{kind: kindDrop, job: job}, a, nil)
	g := s.pending
	g.sync = g.sync || !s.opts.NoSync
	g.waiters++
	return s.waitLocked(g)
}

// NextIncarnation appends the next number (one above the last, or atLeast
// if higher: transport.NextIncarnation) and returns it once synced (also
// under Options.NoSync: a number must never be handed out twice).
func (s *Store) NextIncarnation(atLeast uint64) (uint64, error) {
	n, err := s.nextIncarnation(atLeast)
	if err != nil {
		return 0, fmt.Errorf("segstore: next incarnation: %w", err)
	}
	return n, nil
}

func (s *Store) nextIncarnation(atLeast uint64) (uint64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admitLocked()
	if s.failed != nil {
		return 0, s.failed
	}
	var last uint64
	if s.ix.incarnation != nil {
		last = s.ix.incarnation.v
	}
	n, err := transport.NextIncarnation(last, atLeast)
	if err != nil {
		return 0, err
	}
	a := s.appendSmallLocked(incarnationPayload(n, 0))
	s.ix.apply(&record{kind: kindIncarnation, inc: n}, a, nil)
	if err := s.syncLocked(); err != nil {
		return 0, err
	}
	return n, nil
}

// Load returns the content: small values from memory, outbox and
// state-log entries read back from the segments (each record read once,
// its checksum verified).
func (s *Store) Load() (*transport.Image, error) {
	img, err := s.load()
	if err != nil {
		return nil, fmt.Errorf("segstore: load %s: %w", s.dir, err)
	}
	return img, nil
}

func (s *Store) load() (*transport.Image, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	s.deleteMu.RLock() // no segment goes while we read
	defer s.deleteMu.RUnlock()
	s.mu.Lock()
	if s.failed != nil {
		s.mu.Unlock()
		return nil, s.failed
	}
	// The index shows every record queued: they must all be in the files
	// before their bytes are read back, and none may be queued meanwhile.
	s.loading++
	err := s.drainLocked()
	s.loading--
	s.cond.Broadcast()
	img, reads := s.ix.image()
	files := make(map[uint64]File, len(s.files))
	for n, f := range s.files {
		files[n] = f
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := readBack(files, reads); err != nil {
		return nil, err
	}
	return img, nil
}

// ReadState hands each the job's state entries one at a time: for each
// it finds where the index has the entry now (a compaction may have moved
// it since the one before), reads its record back, checksum verified, and
// calls each outside every lock. What it holds is the record of one entry.
// Each entry is the caller's (ownEntry): a record handed over is never
// read into again.
func (s *Store) ReadState(job string, each func([]byte) error) error {
	rd := extentReader{files: map[uint64]File{}}
	var next uint64
	for {
		var n uint64
		data, ok, err := s.readItem(&rd, func(ix *index) (uint64, extent, bool, bool) {
			st, ok := ix.stateAfter(job, next)
			if !ok {
				return 0, extent{}, false, false
			}
			n = st.n
			return st.seg, st.ext, true, true
		})
		if err != nil {
			return fmt.Errorf("segstore: read state log of job %s in %s: %w", job, s.dir, err)
		}
		if !ok {
			return nil
		}
		if err := each(rd.own(data)); err != nil {
			return err
		}
		next = n + 1
	}
}

// ReadOutbox hands each the channel's untrimmed entries from seq from on,
// one at a time, as ReadState does: each found in the index as it is now,
// its rows read back from their record (checksum verified) and handed
// over as the caller's, each called outside every lock.
func (s *Store) ReadOutbox(ch transport.ChannelID, from uint64, each func(transport.Entry) error) error {
	rd := extentReader{files: map[uint64]File{}}
	next, more := from, true
	for more {
		var e transport.Entry
		var hasRows bool
		data, ok, err := s.readItem(&rd, func(ix *index) (uint64, extent, bool, bool) {
			it, ok := ix.entryFrom(ch, next)
			if !ok {
				return 0, extent{}, false, false
			}
			e, hasRows = transport.Entry{Channel: ch, Seq: it.seq, EOF: it.eof}, it.hasRows
			return it.seg, it.ext, true, hasRows
		})
		if err != nil {
			return fmt.Errorf("segstore: read outbox of %s from %d in %s: %w", ch, next, s.dir, err)
		}
		if !ok {
			return nil
		}
		if hasRows {
			e.Rows = rd.own(data)
		}
		if err := each(e); err != nil {
			return err
		}
		next, more = e.Seq+1, e.Seq < math.MaxUint64
	}
	return nil
}

// readItem looks an item up in the index with find, under mu, and reads
// its bytes with rd, outside mu but holding off the deletion of its
// segment. find returns where the item lies, whether there is one, and
// whether it has bytes to read (an entry without rows has none: readItem
// then returns nil bytes). ok is whether find found one.
func (s *Store) readItem(rd *extentReader, find func(*index) (seg uint64, ext extent, found, hasBytes bool)) (data []byte, ok bool, err error) {
	if err := s.enter(); err != nil {
		return nil, false, err
	}
	defer s.leave()
	s.deleteMu.RLock() // its segment does not go while we read
	defer s.deleteMu.RUnlock()
	s.mu.Lock()
	if s.failed != nil {
		s.mu.Unlock()
		return nil, false, s.failed
	}
	seg, ext, found, hasBytes := find(s.ix)
	if !found || !hasBytes {
		s.mu.Unlock()
		return nil, found, nil
	}
	// The item may be queued: in the file before its bytes are read.
	s.loading++
	err = s.drainLocked()
	s.loading--
	s.cond.Broadcast()
	rd.files[seg] = s.files[seg]
	s.mu.Unlock()
	if err != nil {
		return nil, false, err
	}
	if data, err = rd.read(seg, ext); err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// readBack fills the image's entries, reading each record that holds
// some once.
func readBack(files map[uint64]File, reads []read) error {
	slices.SortFunc(reads, func(a, b read) int {
		if a.seg != b.seg {
			return cmp.Compare(a.seg, b.seg)
		}
		return cmp.Compare(a.ext.off, b.ext.off)
	})
	rd := extentReader{files: files}
	for _, r := range reads {
		data, err := rd.read(r.seg, r.ext)
		if err != nil {
			return err
		}
		r.entry.Rows = append([]byte{}, data...)
	}
	return nil
}

// extentReader reads extents of the segments, each record once for all its
// extents that come one after another (callers read in segment order).
// The bytes it returns stay valid until the next read.
type extentReader struct {
	files map[uint64]File
	buf   []byte
	seg   uint64
	rec   int64 // the record in buf, when held
	held  bool
	lent  bool // buf is the caller's (own): the next record is read into a new one
}

// read returns the bytes of extent e of segment seg, the checksum of its
// record verified.
func (x *extentReader) read(seg uint64, e extent) ([]byte, error) {
	if !x.held || seg != x.seg || e.rec != x.rec {
		if x.lent {
			x.buf, x.lent = nil, false
		}
		var err error
		if x.buf, err = readRecord(x.files[seg], seg, e.rec, e.recLen, x.buf); err != nil {
			x.held = false
			return nil, err
		}
		x.seg, x.rec, x.held = seg, e.rec, true
	}
	return x.buf[e.off-e.rec : e.off-e.rec+e.n], nil
}

// readRecord reads the whole record at off (n bytes with its frame) into
// buf and verifies it.
func readRecord(f File, seg uint64, off, n int64, buf []byte) ([]byte, error) {
	if f == nil {
		return nil, fmt.Errorf("segment %s is not open", segName(seg))
	}
	buf = readBuffer(buf, int(n))
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("read %s at %d: %w", segName(seg), off, err)
	}
	plen, crc := parseFrame(buf)
	if plen != n-frameLen || checksum(0, buf[frameLen:]) != crc {
		return nil, fmt.Errorf("%w: %s: record at offset %d no longer matches its checksum", ErrCorrupt, segName(seg), off)
	}
	return buf, nil
}

// own hands data, the extent read last, over to the caller of read: the
// reader reads its next record into a new buffer. An extent that is most
// of its record is handed in the record's buffer (a snapshot's entry,
// megabytes, is not copied), its capacity cut at its end so that an
// append to it cannot write over the record's other extents, which a
// next read of the same record hands out. A small one of a larger record
// is copied, so that what the caller keeps does not hold the rest of the
// record in memory (a commit's outbox entries beside its state entry).
func (x *extentReader) own(data []byte) []byte {
	if 2*int64(len(data)) < int64(len(x.buf)) {
		return bytes.Clone(data)
	}
	x.lent = true // the record stays held: its other extents are still right
	return data[:len(data):len(data)]
}

// readBuffer is a buffer of n bytes to read a record into: buf when it
// has room, else a new one of at least twice its capacity. What buf held
// is not kept: growing it as append does would copy it, and clear the new
// room, for bytes the read then overwrites (megabytes per record, a
// snapshot's).
func readBuffer(buf []byte, n int) []byte {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]byte, n, max(n, 2*cap(buf)))
}

// Stats returns the counters since Open: Syncs counts the fdatasync
// calls on segments (one per group of concurrent commits, one when a
// segment is closed).
func (s *Store) Stats() transport.StoreStats {
	return transport.StoreStats{Commits: s.commits.Load(), Bytes: s.bytes.Load(), Syncs: s.syncs.Load()}
}

// DiskStats describe the segments.
type DiskStats struct {
	Segments        int
	DiskBytes       int64 // bytes of records in the segment files
	LiveBytes       int64 // of which live (approximately: encoded sizes)
	Compactions     int64 // since Open
	CopiedBytes     int64 // bytes of copy records written by compactions
	DeletedSegments int64 // since Open
}

// Disk returns the state of the segments.
func (s *Store) Disk() DiskStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	size, live := s.ix.totals(func(uint64) bool { return true })
	return DiskStats{Segments: len(s.order), DiskBytes: size, LiveBytes: live,
		Compactions: s.compactions.Load(), CopiedBytes: s.copied.Load(), DeletedSegments: s.deletions.Load()}
}

// Close writes and syncs what is queued (trims), stops the background
// work and closes the files. It is idempotent; calls after it return
// ErrClosed.
func (s *Store) Close() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	close(s.quit)
	<-s.janitorDone
	s.mu.Lock()
	s.shut = true
	err := s.failed
	if err == nil {
		err = s.syncLocked()
	}
	s.mu.Unlock()
	s.bg.Wait()
	s.mu.Lock()
	if s.app != nil {
		err = errors.Join(err, s.app.Close())
	}
	for _, f := range s.files {
		err = errors.Join(err, f.Close())
	}
	s.files = nil
	s.mu.Unlock()
	err = errors.Join(err, s.lock.Close())
	if err != nil {
		return fmt.Errorf("segstore: close %s: %w", s.dir, err)
	}
	return nil
}

// Record returns a copy of a record of a job from memory, where the index
// keeps every record's value (transport.RecordReader).
func (s *Store) Record(job, name string) ([]byte, bool, error) {
	if err := s.enter(); err != nil {
		return nil, false, err
	}
	defer s.leave()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return nil, false, s.failed
	}
	j := s.ix.jobs[job]
	if j == nil || j.records[name] == nil {
		return nil, false, nil
	}
	return bytes.Clone(j.records[name].v), true, nil
}
