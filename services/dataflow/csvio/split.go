package csvio

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
)

// Kind says what Splitter.Next found at the start of its buffer.
type Kind int

const (
	// NeedMore: the buffer holds no complete record yet. Call again with
	// more bytes, or with atEOF once the input has ended.
	NeedMore Kind = iota
	// Record: the fields hold one record.
	Record
	// Blank: an empty line, just "\n" or "\r\n", or a "\r" that ends the
	// input. Callers skip it, as encoding/csv does.
	Blank
	// Malformed: a record that cannot be parsed (bad quoting), where
	// encoding/csv's Read returns a *csv.ParseError. Callers skip and
	// count it.
	Malformed
)

// String returns the name of the kind, for test output and logs.
func (k Kind) String() string {
	switch k {
	case NeedMore:
		return "NeedMore"
	case Record:
		return "Record"
	case Blank:
		return "Blank"
	case Malformed:
		return "Malformed"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Splitter cuts RFC 4180 records off the front of a byte buffer. Its zero
// value is ready to use. It keeps only reusable scratch space, so once
// that has grown to fit the widest record seen, Next allocates nothing.
// A Splitter is not safe for concurrent use.
type Splitter struct {
	fields  [][]byte
	scratch []byte // unescaped text of quoted fields that contain ""
}

// SWAR ("SIMD within a register") helpers: find a byte value in 8 bytes
// at once. The constants repeat one byte value in every byte of a word.
const (
	lows     = 0x0101010101010101
	lowSeven = 0x7f7f7f7f7f7f7f7f
	commas   = ',' * lows
	quotes   = '"' * lows
)

// zeroBytes returns a word with the high bit set in exactly those bytes of
// x that are zero. Unlike the shorter (x-lows)&^x&highs trick it has no
// false positives, because no addition carries from one byte to the next.
func zeroBytes(x uint64) uint64 {
	return ^(((x & lowSeven) + lowSeven) | x | lowSeven)
}

// movemask packs the high bits of a zeroBytes result into 8 bits, bit k
// for byte k (the multiplier moves every flag to its own bit of the top
// byte, with no carries).
func movemask(z uint64) uint64 {
	return ((z >> 7) * 0x0102040810204080) >> 56
}

// commaBits returns the comma bits of the 8 bytes at the start of b.
func commaBits(b []byte) uint64 {
	return movemask(zeroBytes(binary.LittleEndian.Uint64(b) ^ commas))
}

// commaMask64 returns a mask with bit k set when p[k] is a comma.
func commaMask64(p *[64]byte) uint64 {
	return commaBits(p[0:8]) | commaBits(p[8:16])<<8 | commaBits(p[16:24])<<16 | commaBits(p[24:32])<<24 |
		commaBits(p[32:40])<<32 | commaBits(p[40:48])<<40 | commaBits(p[48:56])<<48 | commaBits(p[56:64])<<56
}

// commaMaskTail is commaMask64 for line[i:], which is shorter than 64
// bytes; the bits past its end are zero.
func commaMaskTail(line []byte, i int) uint64 {
	var m uint64
	k := 0
	for ; i+k+8 <= len(line); k += 8 {
		m |= commaBits(line[i+k:]) << k
	}
	if rem := len(line) - (i + k); rem > 0 { // 1 to 7 bytes left
		var w uint64
		if len(line) >= 8 {
			// The line's last 8 bytes, shifted so the rem we want come first.
			w = binary.LittleEndian.Uint64(line[len(line)-8:]) >> (8 * (8 - rem))
		} else {
			for t := rem - 1; t >= 0; t-- {
				w = w<<8 | uint64(line[i+k+t])
			}
		}
		m |= (movemask(zeroBytes(w^commas)) & (1<<rem - 1)) << k
	}
	return m
}

// Next parses one record at the start of buf and returns its kind, its
// fields and n, the number of bytes it consumed (0 with NeedMore): for a
// Record or Malformed record, the bytes encoding/csv's Read consumes for
// it, less the blank lines it skips first (Next returns those as Blank).
//
// The fields alias buf or the splitter's scratch space and stay valid
// until the next call; their capacity is clipped, so appending to one
// never overwrites its neighbour. A Malformed record has no fields.
//
// With atEOF, buf holds the rest of the input, so a last record without a
// final newline is complete (and a '\r' that ends the input ends its line,
// as encoding/csv has it); with atEOF and an empty buf, Next returns
// NeedMore and n = 0.
func (s *Splitter) Next(buf []byte, atEOF bool) (kind Kind, fields [][]byte, n int) {
	if len(buf) == 0 {
		return NeedMore, nil, 0
	}
	switch buf[0] {
	case '\n':
		return Blank, nil, 1
	case '\r':
		if len(buf) > 1 {
			if buf[1] == '\n' {
				return Blank, nil, 2
			}
		} else if atEOF {
			return Blank, nil, 1 // a '\r' that ends the input is a line end
		}
	}

	// Fast path, for a record that is one line whose quoted fields are
	// simple (no quotes inside, no commas or line breaks) and whose other
	// fields have no quotes. Find the line's end with bytes.IndexByte, then
	// the commas 64 bytes at a time as a bit mask, and take the fields
	// between them, stripping the quotes of a field that starts and ends
	// with one. That guess is right if the line has no quotes but those; a
	// search or count checks it at the end. Otherwise the general parser
	// redoes the record, from its first quoted field if no quote comes
	// before it.
	nl := bytes.IndexByte(buf, '\n')
	line := buf
	if nl >= 0 {
		n = nl + 1
		line = buf[:nl]
		if nl > 0 && line[nl-1] == '\r' {
			line = line[:nl-1]
		}
	} else if atEOF {
		n = len(buf)
		if line[len(line)-1] == '\r' {
			// encoding/csv drops a '\r' that ends the input.
			line = line[:len(line)-1]
		}
	} else {
		// Every record ends at a newline or at the end of the input.
		return NeedMore, nil, 0
	}
	fields = s.fields[:0]
	start := 0             // start of the current field
	quoted := 0            // how many quoted fields so far
	qField, qStart := 0, 0 // index and offset of the first quoted field
	for i := 0; ; i += 64 {
		var m uint64
		switch {
		case i+64 <= len(buf):
			// Past the line's end buf is still readable: mask those bits.
			m = commaMask64((*[64]byte)(buf[i:]))
		case i < len(line):
			m = commaMaskTail(line, i)
		}
		// The last round keeps the line's bits and adds the one past its
		// end, where the last field ends.
		last := i+64 > len(line)
		if last {
			end := uint64(1) << (len(line) - i)
			m = m&(end-1) | end
		}
		for m != 0 {
			j := i + bits.TrailingZeros64(m)
			m &= m - 1
			f := line[start:j:j]
			if len(f) > 0 && f[0] == '"' {
				if quoted == 0 {
					qField, qStart = len(fields), start
				}
				if len(f) < 2 || f[len(f)-1] != '"' {
					return s.slow(buf, line, fields, qField, qStart, atEOF)
				}
				quoted++
				f = f[1 : len(f)-1 : len(f)-1]
			}
			fields = append(fields, f)
			start = j + 1
		}
		if last {
			break
		}
	}
	if quoted == 0 {
		if bytes.IndexByte(line, '"') >= 0 { // a bare quote
			return s.general(buf, 0, fields[:0], atEOF)
		}
	} else if bytes.Count(line, quote) != 2*quoted {
		return s.slow(buf, line, fields, qField, qStart, atEOF)
	}
	s.fields = fields
	return Record, fields, n
}

var quote = []byte{'"'}

// slow hands a record that the fast path cannot take to the general
// parser: from its first quoted field, at line[qStart:], which is field
// qField, unless an unquoted field before it holds a quote.
func (s *Splitter) slow(buf, line []byte, fields [][]byte, qField, qStart int, atEOF bool) (Kind, [][]byte, int) {
	if bytes.IndexByte(line[:qStart], '"') >= 0 {
		return s.general(buf, 0, fields[:0], atEOF)
	}
	return s.general(buf, qStart, fields[:qField], atEOF)
}

// general parses the rest of a record from p, the start of a field, with
// the record's earlier fields already in fields. It handles every form,
// quoted fields included, and is the only place that decides Malformed.
func (s *Splitter) general(buf []byte, p int, fields [][]byte, atEOF bool) (Kind, [][]byte, int) {
	s.scratch = s.scratch[:0]
	for {
		if p < len(buf) && buf[p] == '"' {
			// Quoted field: find the closing quote, skipping "" pairs.
			escaped := false
			k := indexQuote(buf, p+1)
			for k >= 0 && k+1 < len(buf) && buf[k+1] == '"' {
				escaped = true
				k = indexQuote(buf, k+2)
			}
			switch {
			case k < 0 && atEOF:
				return s.done(fields, Malformed, len(buf)) // never closes
			case k < 0, k+1 == len(buf) && !atEOF:
				// Not closed yet, or more input may bring a second quote.
				return s.done(fields, NeedMore, 0)
			}
			fields = append(fields, s.quoted(buf[p+1:k], escaped))
			if k+1 == len(buf) {
				return s.done(fields, Record, len(buf))
			}
			switch buf[k+1] {
			case ',':
				p = k + 2
				continue
			case '\n':
				return s.done(fields, Record, k+2)
			case '\r':
				if k+2 < len(buf) && buf[k+2] == '\n' {
					return s.done(fields, Record, k+3)
				}
				if k+2 == len(buf) {
					if atEOF { // encoding/csv drops a '\r' that ends the input
						return s.done(fields, Record, len(buf))
					}
					return s.done(fields, NeedMore, 0)
				}
			}
			return s.resync(buf, k+1, fields, atEOF)
		}

		// Unquoted field: runs to the next comma or newline, and a quote
		// in it is an error (encoding/csv's ErrBareQuote).
		j := p
		for j < len(buf) {
			if c := buf[j]; c == ',' || c == '\n' || c == '"' {
				break
			}
			j++
		}
		if j == len(buf) {
			if !atEOF {
				return s.done(fields, NeedMore, 0)
			}
			end := j
			if end > p && buf[end-1] == '\r' {
				end-- // encoding/csv drops a '\r' that ends the input
			}
			fields = append(fields, buf[p:end:end])
			return s.done(fields, Record, j)
		}
		switch buf[j] {
		case ',':
			fields = append(fields, buf[p:j:j])
			p = j + 1
			continue
		case '"':
			return s.resync(buf, j, fields, atEOF)
		}
		end := j
		if end > p && buf[end-1] == '\r' {
			end--
		}
		fields = append(fields, buf[p:end:end])
		return s.done(fields, Record, j+1)
	}
}

// quoted returns the value of a quoted field from its raw content between
// the quotes: raw itself, or if it holds "" pairs (escaped is set) or a
// '\r' the unescaped text in the scratch space.
func (s *Splitter) quoted(raw []byte, escaped bool) []byte {
	if escaped || bytes.IndexByte(raw, '\r') >= 0 {
		return s.unescape(raw, escaped)
	}
	return raw[:len(raw):len(raw)]
}

// resync reports a Malformed record whose bad spot is at bad: the record
// runs through the end of that physical line.
func (s *Splitter) resync(buf []byte, bad int, fields [][]byte, atEOF bool) (Kind, [][]byte, int) {
	if k := bytes.IndexByte(buf[bad:], '\n'); k >= 0 {
		return s.done(fields, Malformed, bad+k+1)
	}
	if atEOF {
		return s.done(fields, Malformed, len(buf))
	}
	return s.done(fields, NeedMore, 0)
}

// done keeps the fields' backing array for reuse and shapes the result.
func (s *Splitter) done(fields [][]byte, kind Kind, n int) (Kind, [][]byte, int) {
	if kind != Record {
		s.fields = fields[:0]
		return kind, nil, n
	}
	s.fields = fields
	return kind, fields, n
}

// unescape returns the text of a quoted field from its raw content
// (between the quotes): each "" pair becomes one quote and, as in
// encoding/csv, each "\r\n" becomes "\n" (a lone '\r' stays). escaped
// says whether raw holds any "" pair. It writes to the scratch space.
func (s *Splitter) unescape(raw []byte, escaped bool) []byte {
	start := len(s.scratch)
	for {
		var k int
		if escaped {
			k = bytes.IndexAny(raw, "\"\r")
		} else {
			k = bytes.IndexByte(raw, '\r')
		}
		if k < 0 {
			s.scratch = append(s.scratch, raw...)
			break
		}
		switch {
		case raw[k] == '"':
			// raw[k] and raw[k+1] are a "" pair: keep one quote.
			s.scratch = append(s.scratch, raw[:k+1]...)
			raw = raw[k+2:]
		case k+1 < len(raw) && raw[k+1] == '\n':
			s.scratch = append(s.scratch, raw[:k]...) // drop the '\r'
			raw = raw[k+1:]
		default:
			s.scratch = append(s.scratch, raw[:k+1]...) // a lone '\r'
			raw = raw[k+1:]
		}
	}
	// Earlier fields of the record may point into an older, smaller
	// scratch array if append moved it; they stay valid because nothing
	// writes there again.
	return s.scratch[start:len(s.scratch):len(s.scratch)]
}

// indexQuote returns the index of the first '"' in buf at or after q, or
// -1. Quoted fields are mostly short, so it tries a few words itself
// before it pays for a call to bytes.IndexByte.
func indexQuote(buf []byte, q int) int {
	for end := q + 32; q+8 <= len(buf) && q < end; q += 8 {
		if z := zeroBytes(binary.LittleEndian.Uint64(buf[q:]) ^ quotes); z != 0 {
			return q + bits.TrailingZeros64(z)>>3
		}
	}
	if k := bytes.IndexByte(buf[q:], '"'); k >= 0 {
		return q + k
	}
	return -1
}
