package csvio

import (
	"errors"
	"fmt"
	"io"
)

// DefaultBufferSize is the Scanner's initial buffer size. The buffer grows
// when a single record does not fit.
const DefaultBufferSize = 1 << 20

// ErrRecordTooLong is reported by a Scanner whose record outgrows the limit
// set with SetMaxRecordSize.
var ErrRecordTooLong = errors.New("csvio: record too long")

// maxEmptyReads is how many reads in a row may return no bytes and no
// error before the Scanner gives up with io.ErrNoProgress.
const maxEmptyReads = 100

var bom = [3]byte{0xEF, 0xBB, 0xBF}

// Scanner reads records from an io.Reader. It strips a UTF-8 byte order
// mark from the start of the input and skips blank lines; every other
// record, malformed or not, is one step of Scan.
type Scanner struct {
	r       io.Reader
	sp      Splitter
	buf     []byte
	lo, hi  int // unconsumed input is buf[lo:hi]
	eof     bool
	bomDone bool
	max     int // 0: no limit
	size    int // initial buffer size, 0: DefaultBufferSize (tests set it)

	kind    Kind
	fields  [][]byte
	off     int64
	start   int64 // where the current record starts (Start)
	readErr error // from the reader, not yet reported
	err     error
}

// NewScanner returns a Scanner reading from r.
func NewScanner(r io.Reader) *Scanner {
	return &Scanner{r: r}
}

// SetMaxRecordSize limits the size in bytes of one record (n <= 0: no
// limit, the default). A longer record stops the Scanner with
// ErrRecordTooLong, which bounds the memory an unterminated quoted field
// can take. Call it before the first Scan.
func (s *Scanner) SetMaxRecordSize(n int) { s.max = n }

// Scan advances to the next Record or Malformed record, skipping blank
// lines. It returns false at the end of the input, or on a read error once
// the records completed before the error have been delivered; Err tells
// the two apart.
func (s *Scanner) Scan() bool {
	s.fields = nil
	if s.err != nil {
		return false
	}
	if s.buf == nil {
		size := s.size
		if size <= 0 {
			size = DefaultBufferSize
		}
		s.buf = make([]byte, size)
	}
	for {
		if !s.bomDone {
			if s.hi-s.lo >= len(bom) || s.eof {
				s.bomDone = true
				if s.hi-s.lo >= len(bom) && [3]byte(s.buf[s.lo:s.lo+3]) == bom {
					s.lo += len(bom)
					s.off += int64(len(bom))
				}
				continue
			}
		} else {
			kind, fields, n := s.sp.Next(s.buf[s.lo:s.hi], s.eof)
			if kind != NeedMore {
				s.lo += n
				s.off += int64(n)
				if kind == Blank {
					continue
				}
				s.start = s.off - int64(n)
				s.kind, s.fields = kind, fields
				return true
			}
			if s.eof {
				return false
			}
		}
		if s.readErr != nil {
			// Report a read error only once the records complete before
			// it have been delivered.
			s.err = s.readErr
			return false
		}
		s.readErr = s.fill()
	}
}

// fill reads more input. The pending bytes (an incomplete record) at least
// double before Next sees them again, so re-parsing a long record from its
// start costs linear time overall however small the reads are.
func (s *Scanner) fill() error {
	pending := s.hi - s.lo
	if s.max > 0 && pending > s.max {
		return fmt.Errorf("%w: more than %d bytes at offset %d", ErrRecordTooLong, s.max, s.off)
	}
	want := 2*pending + 1
	switch {
	case want > len(s.buf):
		size := 2 * len(s.buf)
		for size < want {
			size *= 2
		}
		nb := make([]byte, size)
		copy(nb, s.buf[s.lo:s.hi])
		s.buf = nb
		s.lo, s.hi = 0, pending
	case s.lo+want > len(s.buf):
		copy(s.buf, s.buf[s.lo:s.hi])
		s.lo, s.hi = 0, pending
	}
	empty := 0
	for s.hi-s.lo < want {
		n, err := s.r.Read(s.buf[s.hi:])
		if n < 0 || n > len(s.buf)-s.hi {
			return fmt.Errorf("csvio: read at offset %d: reader returned invalid count %d", s.off+int64(s.hi-s.lo), n)
		}
		s.hi += n
		if err == io.EOF {
			s.eof = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("csvio: read at offset %d: %w", s.off+int64(s.hi-s.lo), err)
		}
		if n > 0 {
			empty = 0
			continue
		}
		if empty++; empty >= maxEmptyReads {
			return fmt.Errorf("csvio: read at offset %d: %w", s.off+int64(s.hi-s.lo), io.ErrNoProgress)
		}
	}
	return nil
}

// Kind returns the kind of the current record: Record or Malformed.
func (s *Scanner) Kind() Kind { return s.kind }

// Fields returns the current record's fields (none for Malformed). They
// are valid until the next Scan.
func (s *Scanner) Fields() [][]byte { return s.fields }

// Offset returns the number of input bytes consumed through the end of the
// current record, byte order mark and skipped blank lines included: the
// byte order mark's length plus encoding/csv's InputOffset after the same
// record. Splitting the input again from there gives the records after it.
func (s *Scanner) Offset() int64 { return s.off }

// Start returns the offset where the current record starts, after the
// blank lines before it: Offset less the record's own bytes.
func (s *Scanner) Start() int64 { return s.start }

// Err returns the error that stopped the Scanner (a read error, wrapped
// with its offset, or ErrRecordTooLong), or nil at a clean end of input.
func (s *Scanner) Err() error { return s.err }
