package segstore

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Open opens (creating if needed) the store in dir: it replays every
// segment, oldest first, into the index, truncates a torn tail of the last
// one, and goes on appending to it.
func Open(dir string, opts Options) (*Store, error) {
	s, err := open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("segstore: open %s: %w", dir, err)
	}
	return s, nil
}

func open(dir string, opts Options) (*Store, error) {
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = DefaultSegmentSize
	}
	if opts.IdleAfter == 0 {
		opts.IdleAfter = DefaultIdleAfter
	}
	// The store holds every job's data: only its user may read it.
	if opts.FS == nil {
		opts.FS = OS
	}
	if err := opts.FS.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := opts.FS.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	lock, err := opts.FS.Lock(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{
		dir: dir, log: opts.Log, opts: opts, fs: opts.FS, lock: lock,
		ix: newIndex(), files: map[uint64]File{}, pending: &group{},
		kick: make(chan struct{}, 1), compactReq: make(chan chan struct{}), quit: make(chan struct{}), janitorDone: make(chan struct{}),
	}
	s.cond.L = &s.mu
	if err := s.recover(); err != nil {
		for _, f := range s.files {
			f.Close()
		}
		lock.Close()
		return nil, err
	}
	s.lastWrite = time.Now()
	go s.janitor()
	s.kick <- struct{}{} // delete what replay found dead, compact if due
	return s, nil
}

// listSegments returns the numbers of the segment files in dir, in order;
// they must follow one another (segments are only ever deleted oldest
// first).
func listSegments(fsys FS, dir string) ([]uint64, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []uint64
	for _, e := range ents {
		if pebbleFile(e.Name()) {
			return nil, fmt.Errorf("%s holds a Pebble store (transport/durable): segstore does not read it and will not start an empty store beside it", e.Name())
		}
		name, ok := strings.CutSuffix(e.Name(), ".seg")
		if !ok || len(name) < 8 || !e.Type().IsRegular() {
			continue
		}
		n, err := strconv.ParseUint(name, 10, 64)
		if err != nil || n == 0 {
			continue
		}
		segs = append(segs, n)
	}
	slices.Sort(segs)
	for i := 1; i < len(segs); i++ {
		if segs[i] != segs[i-1]+1 {
			return nil, fmt.Errorf("%w: segments %s to %s are missing", ErrCorrupt, segName(segs[i-1]+1), segName(segs[i]-1))
		}
	}
	return segs, nil
}

// pebbleFile tells the files of a Pebble store apart.
func pebbleFile(name string) bool {
	return name == "CURRENT" || strings.HasPrefix(name, "MANIFEST-") || strings.HasPrefix(name, "OPTIONS-") ||
		strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".log")
}

// recover replays the segments and readies the last one for appending.
func (s *Store) recover() error {
	segs, err := listSegments(s.fs, s.dir)
	if err != nil {
		return err
	}
	for i, n := range segs {
		last := i == len(segs)-1
		flag := os.O_RDONLY
		if last {
			flag = os.O_RDWR
		}
		f, err := s.fs.OpenFile(s.path(n), flag, 0)
		if err != nil {
			return err
		}
		s.files[n] = f
		end, err := s.replay(f, n, last)
		if err != nil {
			return err
		}
		if last {
			s.cur, s.curOff = n, end
		}
	}
	s.order = segs
	if len(segs) == 0 {
		f, err := s.fs.OpenFile(s.path(1), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		s.files[1] = f
		s.cur, s.order = 1, []uint64{1}
		if err := s.fs.SyncDir(s.dir); err != nil {
			return err
		}
	}
	s.wf, s.wseg = s.files[s.cur], s.cur
	s.app = s.appender(s.wf, s.cur)
	if s.curOff == 0 { // a new segment, or a last one whose header was torn
		rec := frameRecord(headerPayload(s.cur))
		if _, err := s.wf.WriteAt(rec, 0); err != nil {
			return err
		}
		a := at{seg: s.cur, len: int64(len(rec))}
		s.ix.apply(&record{kind: kindHeader, segno: s.cur}, a, nil)
		s.curOff = a.len
	}
	s.curStart = int64(len(frameRecord(headerPayload(s.cur))))
	// What replay read may have been in the page cache only (a killed
	// process, not a lost machine): make it durable before deleting
	// segments on the strength of it.
	if err := s.syncFile(s.wf, s.cur); err != nil {
		return err
	}
	s.syncedOff = s.curOff
	s.durable = pos{s.cur, s.curOff}
	return nil
}

// replay applies the records of segment n to the index and returns where
// its valid records end. A bad record in the last segment is a torn tail,
// cut off, unless a later record proves it was on stable storage; in any
// other segment it is an error.
func (s *Store) replay(f File, n uint64, last bool) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	br := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 1<<20)
	var frame [frameLen]byte
	var buf []byte
	var off int64
	for off < size {
		var why string
		var p []byte
		plen, crc := int64(0), uint32(0)
		if size-off < frameLen {
			why = "a frame cut short"
		} else if _, err := io.ReadFull(br, frame[:]); err != nil {
			return 0, fmt.Errorf("read %s at %d: %w", segName(n), off, err)
		} else if plen, crc = parseFrame(frame[:]); plen < minPayload {
			why = fmt.Sprintf("a payload length of %d", plen)
		} else if off+frameLen+plen > size {
			why = fmt.Sprintf("a record of %d bytes running past the end of the file", frameLen+plen)
		} else {
			buf = readBuffer(buf, int(plen))
			if _, err := io.ReadFull(br, buf); err != nil {
				return 0, fmt.Errorf("read %s at %d: %w", segName(n), off, err)
			}
			if p = buf; checksum(0, p) != crc {
				why = "a checksum mismatch"
			}
		}
		if why != "" {
			if !last {
				return 0, fmt.Errorf("%w: %s: bad record at offset %d (%s) in a segment that is not the last", ErrCorrupt, segName(n), off, why)
			}
			return s.cutTail(f, n, size, off, why)
		}
		r, err := decodePayload(p)
		if err != nil {
			return 0, fmt.Errorf("%w: %s: record at offset %d: %v", ErrCorrupt, segName(n), off, err)
		}
		if (off == 0) != (r.kind == kindHeader) || off == 0 && r.segno != n {
			return 0, fmt.Errorf("%w: %s: record at offset %d: a segment starts with its own header, and only it", ErrCorrupt, segName(n), off)
		}
		a := at{seg: n, off: off, len: frameLen + plen}
		s.ix.apply(r, a, p)
		off += a.len
	}
	return off, nil
}

// cutTail handles a bad record at off in the last segment: a torn tail
// (the write of the last group was cut short) is truncated; a bad record
// followed by one written after it was durable is corruption.
func (s *Store) cutTail(f File, n uint64, size, off int64, why string) (int64, error) {
	rest := make([]byte, size-off)
	if _, err := f.ReadAt(rest, off); err != nil {
		return 0, fmt.Errorf("read %s at %d: %w", segName(n), off, err)
	}
	if later, ok := durableAfter(rest, off); ok {
		return 0, fmt.Errorf("%w: %s: bad record at offset %d (%s), but the record at offset %d was written after it was on stable storage",
			ErrCorrupt, segName(n), off, why, later)
	}
	s.log.Warn("truncating the torn tail of the last segment", "segment", segName(n), "offset", off, "dropped_bytes", size-off, "reason", why)
	if err := f.Truncate(off); err != nil {
		return 0, fmt.Errorf("truncate %s at %d: %w", segName(n), off, err)
	}
	return off, nil
}

// durableAfter looks in rest, the bytes of a segment from offset base
// where a bad record lies, for a valid record whose trailer says the
// segment was on stable storage beyond base when it was made: proof that
// the bad record is not a torn write but damage. It returns that record's
// offset.
func durableAfter(rest []byte, base int64) (int64, bool) {
	for i := 1; i+frameLen+minPayload <= len(rest); i++ {
		plen, crc := parseFrame(rest[i:])
		if plen < minPayload || int64(i)+frameLen+plen > int64(len(rest)) {
			continue
		}
		p := rest[i+frameLen : i+frameLen+int(plen)]
		if p[0] < kindHeader || p[0] > lastKind {
			continue
		}
		o := base + int64(i)
		if synced := trailerOf(p); synced <= uint64(base) || synced > uint64(o) {
			continue
		}
		if checksum(0, p) == crc {
			return o, true
		}
	}
	return 0, false
}

var errInUse = errors.New("the store is in use by another process (or another Open)")
