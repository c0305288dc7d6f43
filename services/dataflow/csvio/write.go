package csvio

import "strings"

// NeedsQuotes reports whether a field must be quoted in plain CSV: it
// contains a comma, a double quote or a line break (\n or \r).
func NeedsQuotes(field string) bool {
	for i := 0; i < len(field); i++ {
		switch field[i] {
		case ',', '"', '\n', '\r':
			return true
		}
	}
	return false
}

// AppendField appends one field to dst, quoted (with inner quotes doubled)
// only if NeedsQuotes says so, and returns the extended buffer. It writes
// no separator.
func AppendField(dst []byte, field string) []byte {
	if !NeedsQuotes(field) {
		return append(dst, field...)
	}
	dst = append(dst, '"')
	for {
		k := strings.IndexByte(field, '"')
		if k < 0 {
			break
		}
		dst = append(dst, field[:k+1]...)
		dst = append(dst, '"')
		field = field[k+1:]
	}
	dst = append(dst, field...)
	return append(dst, '"')
}

// AppendRecord appends one record to dst: the fields separated by commas,
// each written by AppendField, and a final "\n". It returns the extended
// buffer.
//
// A record of one empty field is written as an empty line, which readers
// (Splitter, encoding/csv) skip as Blank.
func AppendRecord(dst []byte, fields ...string) []byte {
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendField(dst, f)
	}
	return append(dst, '\n')
}
