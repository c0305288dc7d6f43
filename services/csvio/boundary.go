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
		end := -1
		if q == last || buf[q-1] == ',' {
			// A quoted field: it runs to a quote that is not half of "".
			end = closeQuoted(buf, q+1)
			if end == needMore {
				return last
			}
			if end >= 0 {
				i = end
				if buf[end-1] == '\n' {
					last = end
				}
				continue
			}
			// A bad quote: the record runs to the end of its line.
			q = -end - 1
		}
		// A quote inside an unquoted field, or after a closing quote: the
		// record runs to the end of the line.
		nl := bytes.IndexByte(buf[q:], '\n')
		if nl < 0 {
			return last
		}
		last = q + nl + 1
		i = last
	}
}

// needMore is closeQuoted's answer when buf ends before the field does.
const needMore = -1 << 62

// closeQuoted finds the end of a quoted field whose text starts at from.
// It returns where scanning goes on: past the comma after the closing
// quote, or past the line end that ends the record (buf[end-1] == '\n');
// -(p+1) for a closing quote at p followed by something else (a bad
// quote); needMore when buf ends first.
func closeQuoted(buf []byte, from int) int {
	for {
		k := bytes.IndexByte(buf[from:], '"')
		if k < 0 {
			return needMore
		}
		k += from
		if k+1 >= len(buf) {
			return needMore
		}
		switch buf[k+1] {
		case '"':
			from = k + 2
			continue
		case ',':
			return k + 2
		case '\n':
			return k + 2
		case '\r':
			if k+2 >= len(buf) {
				return needMore
			}
			if buf[k+2] == '\n' {
				return k + 3
			}
		}
		return -(k + 1 + 1) // the bad byte after the quote, k+1, as -(p+1)
	}
}
