package schema

import (
	"bytes"
	"math"
)

// ParseBool parses a boolean field: true, false, 1 or 0, in any letter
// case. Anything else, including an empty field or one with spaces,
// gives ok = false (a missing value).
func ParseBool(b []byte) (v bool, ok bool) {
	switch len(b) {
	case 1:
		switch b[0] {
		case '1':
			return true, true
		case '0':
			return false, true
		}
	case 4:
		// c|0x20 lowers an ASCII letter and maps no other byte onto one.
		if b[0]|0x20 == 't' && b[1]|0x20 == 'r' && b[2]|0x20 == 'u' && b[3]|0x20 == 'e' {
			return true, true
		}
	case 5:
		if b[0]|0x20 == 'f' && b[1]|0x20 == 'a' && b[2]|0x20 == 'l' && b[3]|0x20 == 's' && b[4]|0x20 == 'e' {
			return false, true
		}
	}
	return false, false
}

const secondsPerDay = 24 * 60 * 60

// ParseDuration parses a duration field into seconds. The accepted forms
// are H:MM:SS and HH:MM:SS (one or two hour digits, exactly two minute and
// two second digits, with no check of their range: "1:75:00" is 8100 s),
// optionally after "N day, " or "N days, " (N one or more digits, one
// space on each side of "day," or "days,"). A huge N saturates the result
// at math.MaxInt64. Anything else gives ok = false (a missing value).
func ParseDuration(b []byte) (seconds int64, ok bool) {
	// The clock has no spaces: it is everything after the last one, and
	// whatever comes before must be the day prefix.
	i := bytes.LastIndexByte(b, ' ')
	h, m, s, ok := parseClock(b[i+1:])
	if !ok {
		return 0, false
	}
	secs := h*3600 + m*60 + s
	if i < 0 {
		return secs, true
	}
	days, ok := parseDays(b[:i+1])
	if !ok {
		return 0, false
	}
	if days > (math.MaxInt64-secs)/secondsPerDay {
		return math.MaxInt64, true
	}
	return secs + days*secondsPerDay, true
}

// parseClock parses H:MM:SS or HH:MM:SS, the whole of c.
func parseClock(c []byte) (h, m, s int64, ok bool) {
	var hours int64
	switch len(c) {
	case 7:
		if !isDigit(c[0]) {
			return 0, 0, 0, false
		}
		hours = int64(c[0] - '0')
	case 8:
		if !isDigit(c[0]) || !isDigit(c[1]) {
			return 0, 0, 0, false
		}
		hours = int64(c[0]-'0')*10 + int64(c[1]-'0')
	default:
		return 0, 0, 0, false
	}
	r := c[len(c)-6:] // ":MM:SS"
	if r[0] != ':' || r[3] != ':' || !isDigit(r[1]) || !isDigit(r[2]) || !isDigit(r[4]) || !isDigit(r[5]) {
		return 0, 0, 0, false
	}
	return hours, int64(r[1]-'0')*10 + int64(r[2]-'0'), int64(r[4]-'0')*10 + int64(r[5]-'0'), true
}

// parseDays parses "N day, " or "N days, ", the whole of p, saturating N
// at math.MaxInt64.
func parseDays(p []byte) (int64, bool) {
	var rest []byte
	switch {
	case len(p) > 6 && string(p[len(p)-6:]) == " day, ":
		rest = p[:len(p)-6]
	case len(p) > 7 && string(p[len(p)-7:]) == " days, ":
		rest = p[:len(p)-7]
	default:
		return 0, false
	}
	var n int64
	for _, c := range rest {
		if !isDigit(c) {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			n = math.MaxInt64 // keep checking the digits
			continue
		}
		n = n*10 + d
	}
	return n, true
}

func isDigit(c byte) bool { return c-'0' <= 9 }
