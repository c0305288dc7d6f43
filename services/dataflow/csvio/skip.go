package csvio

// RecordSkipper finds where a record ends without holding it: fed the
// record's bytes from its first one on, in pieces of any size, it reports
// the end Splitter.Next would find with the whole record in its buffer. It
// is how an oversized record is skipped (counted as malformed) in bounded
// memory, and it follows Splitter's rules, which are encoding/csv's: a
// quoted field runs to its closing quote ("" is an escaped quote), an
// unquoted one to a comma or a line end, and after a bad quote the record
// runs to the end of the line. Its zero value is at the start of a record.
type RecordSkipper struct{ state skipState }

type skipState uint8

const (
	skipFieldStart skipState = iota
	skipUnquoted
	skipQuoted
	skipQuoteSeen // a quote inside a quoted field: closing, or half of ""
	skipQuoteCR   // a closing quote then '\r'
	skipToLineEnd // after a bad quote
)

// Skip consumes data and returns how many of its bytes belong to the
// record, and whether the record ended there. A record that has not ended
// when the input does ends with it.
func (s *RecordSkipper) Skip(data []byte) (n int, ended bool) {
	for i, c := range data {
		switch s.state {
		case skipFieldStart:
			if c == '"' {
				s.state = skipQuoted
				continue
			}
			s.state = skipUnquoted
			fallthrough
		case skipUnquoted:
			switch c {
			case ',':
				s.state = skipFieldStart
			case '\n':
				return s.end(i)
			case '"':
				s.state = skipToLineEnd
			}
		case skipQuoted:
			if c == '"' {
				s.state = skipQuoteSeen
			}
		case skipQuoteSeen:
			switch c {
			case '"':
				s.state = skipQuoted
			case ',':
				s.state = skipFieldStart
			case '\n':
				return s.end(i)
			case '\r':
				s.state = skipQuoteCR
			default:
				s.state = skipToLineEnd
			}
		case skipQuoteCR, skipToLineEnd:
			if c == '\n' {
				return s.end(i)
			}
			s.state = skipToLineEnd
		}
	}
	return len(data), false
}

func (s *RecordSkipper) end(i int) (int, bool) {
	s.state = skipFieldStart
	return i + 1, true
}
