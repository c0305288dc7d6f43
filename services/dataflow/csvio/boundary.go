package csvio

import "bytes"

// CompleteRecords returns how many bytes at the front of buf are whole
// records (blank lines included), when buf begins at the start of a record
// and more input may follow: the end Splitter.Next would reach by being
// called on buf again and again until it needs more. It is how a file is
// cut into pieces that can be parsed apart (each piece ends where a record
// ends), at the speed of a search for quotes and line ends rather than
// a parse: it follows RecordSkipper's rules, jumping from one quote or
// line end to the next.
//
// 0 means no record is complete yet: the first one needs more input.
func CompleteRecords(buf []byte) int {
	last := 0 // the end of the last complete record found
	i := 0    // where the scan is; buf[i:] begins outside any quoted field
	for {
		q := bytes.IndexByte(buf[i:], '"')
		if q < 0 {
			// No quote left: every line end ends a record.
			if nl := bytes.LastIndexByte(buf[i:], '\n'); nl >= 0 {
				last = i + nl + 1
			}
			return last
		}
		q += i
		if nl := bytes.LastIndexByte(buf[i:q], '\n'); nl >= 0 {
			last = i + nl + 1
		}
		if q == last || buf[q-1] == ',' {
			// A quoted field: it runs to a quote that is not half of "".
			next, end := closeQuoted(buf, q+1)
			switch end {
			case fieldOpen:
				return last
			case fieldEnds:
				i = next
				continue
			case recordEnds:
				i, last = next, next
				continue
			}
			q = next // badQuote: the byte after the closing quote
		}
		// A quote inside an unquoted field, or a closing quote followed by
		// something else: the record runs to the end of the line.
		nl := bytes.IndexByte(buf[q:], '\n')
		if nl < 0 {
			return last
		}
		last = q + nl + 1
		i = last
	}
}

// quotedEnd is how a quoted field ends.
type quotedEnd int

const (
	fieldOpen  quotedEnd = iota // buf ends before the field does
	fieldEnds                   // a comma follows the closing quote
	recordEnds                  // a line end follows it: the record ends
	badQuote                    // something else follows it
)

// closeQuoted finds the end of a quoted field whose text starts at from.
// next is where scanning goes on: past the comma or the line end after the
// closing quote, or, for a bad quote, the byte after it.
func closeQuoted(buf []byte, from int) (next int, end quotedEnd) {
	for {
		k := bytes.IndexByte(buf[from:], '"')
		if k < 0 {
			return 0, fieldOpen
		}
		k += from
		if k+1 >= len(buf) {
			return 0, fieldOpen
		}
		switch buf[k+1] {
		case '"':
			from = k + 2
			continue
		case ',':
			return k + 2, fieldEnds
		case '\n':
			return k + 2, recordEnds
		case '\r':
			if k+2 >= len(buf) {
				return 0, fieldOpen
			}
			if buf[k+2] == '\n' {
				return k + 3, recordEnds
			}
		}
		return k + 1, badQuote
	}
}
