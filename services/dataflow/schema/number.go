package schema

import (
	"fmt"
	"math/bits"
	"strconv"
)

// Number is an exact decimal value of a number field (average_rating,
// rating), of any length. Its zero value is 0.
//
// Nearly every value takes the fast path: units = value × 10^6 in an int64,
// used when the value has at most 6 fractional digits (after dropping
// trailing zeros) and |value| < 10^11. Comparing fast values allocates
// nothing. Any other value keeps its canonical decimal digits, and
// comparisons on it are exact too, in time linear in its length.
//
// The representation is canonical (one form per value), but a wide value
// holds a pointer: compare Numbers with Cmp, not ==.
type Number struct {
	units int64   // value × 10^6, when wide == nil
	wide  *digits // otherwise: canonical, never 0, never modified
}

const (
	unitDigits = 6
	unitScale  = 1_000_000 // 10^unitDigits
	maxIntLen  = 11        // |value| < 10^11
	fastLimit  = 100_000_000_000 * unitScale
)

// ParseNumber parses a number field: exactly -?[0-9]+(\.[0-9]+)?, so no
// sign "+", no spaces, no exponent, digits on both sides of a point.
// Anything else gives ok = false (a missing value). It allocates only for
// values outside the fast path.
func ParseNumber(b []byte) (Number, bool) {
	i := 0
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		i = 1
	}
	intStart := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	intPart := b[intStart:i]
	if len(intPart) == 0 {
		return Number{}, false
	}
	var frac []byte
	if i < len(b) {
		if b[i] != '.' {
			return Number{}, false
		}
		i++
		fracStart := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		if i == fracStart || i != len(b) {
			return Number{}, false
		}
		frac = b[fracStart:]
	}
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if len(intPart) <= maxIntLen && len(frac) <= unitDigits {
		var u int64
		for _, c := range intPart {
			u = u*10 + int64(c-'0')
		}
		for k := 0; k < unitDigits; k++ {
			u *= 10
			if k < len(frac) {
				u += int64(frac[k] - '0')
			}
		}
		if neg {
			u = -u
		}
		return Number{units: u}, true
	}
	// Copy the digits out of b, into one array.
	buf := make([]byte, len(intPart)+len(frac))
	copy(buf, intPart)
	copy(buf[len(intPart):], frac)
	return Number{wide: &digits{neg: neg, int: buf[:len(intPart):len(intPart)], frac: buf[len(intPart):]}}, true
}

// NumberFromUnits returns the Number u / 10^6.
func NumberFromUnits(u int64) Number {
	if -fastLimit < u && u < fastLimit {
		return Number{units: u}
	}
	var buf [24]byte
	d := unitsDigits(u, &buf)
	w := &digits{neg: d.neg, int: append([]byte(nil), d.int...), frac: append([]byte(nil), d.frac...)}
	return Number{wide: w}
}

// Units returns the value × 10^6 and true for a fast-path value, or 0 and
// false for any other.
func (n Number) Units() (units int64, ok bool) {
	if n.wide != nil {
		return 0, false
	}
	return n.units, true
}

// TextLen is about the length of the value's text when it travels as text
// (a wide value; 0 for a fast-path one, which travels as an integer).
func (n Number) TextLen() int {
	if n.wide == nil {
		return 0
	}
	return len(n.wide.int) + len(n.wide.frac) + 2
}

// String returns the canonical decimal text: no leading zeros, no trailing
// fractional zeros and no point when there is no fraction ("2034.0" gives
// "2034", "-0" gives "0"). ParseNumber reads it back to the same value.
func (n Number) String() string {
	var buf [32]byte
	return string(n.Append(buf[:0]))
}

// Append appends the canonical text of String to dst.
func (n Number) Append(dst []byte) []byte {
	var buf [24]byte
	d := n.digits(&buf)
	if d.neg {
		dst = append(dst, '-')
	}
	if len(d.int) == 0 {
		dst = append(dst, '0')
	}
	dst = append(dst, d.int...)
	if len(d.frac) > 0 {
		dst = append(dst, '.')
		dst = append(dst, d.frac...)
	}
	return dst
}

// MarshalText implements encoding.TextMarshaler with the String form, so
// that a Number in JSON or other text encodings keeps its exact value.
func (n Number) MarshalText() ([]byte, error) {
	return n.Append(nil), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseNumber.
func (n *Number) UnmarshalText(text []byte) error {
	v, ok := ParseNumber(text)
	if !ok {
		return fmt.Errorf("schema: invalid number %q", text)
	}
	*n = v
	return nil
}

// Cmp compares n and m and returns -1, 0 or +1.
func (n Number) Cmp(m Number) int {
	if n.wide == nil && m.wide == nil {
		return cmpInt64(n.units, m.units)
	}
	var nb, mb [24]byte
	return cmpDigits(n.digits(&nb), m.digits(&mb))
}

// CmpInt compares n with the integer k and returns -1, 0 or +1.
func (n Number) CmpInt(k int64) int {
	if n.wide == nil {
		switch {
		case k >= fastLimit/unitScale:
			return -1 // |n| < 10^11 <= k
		case k <= -fastLimit/unitScale:
			return 1
		}
		return cmpInt64(n.units, k*unitScale)
	}
	var nb, kb [24]byte
	kd := digits{neg: k < 0, int: strconv.AppendUint(kb[:0], abs(k), 10)}
	if k == 0 {
		kd.int = nil
	}
	return cmpDigits(n.digits(&nb), kd)
}

// MulCmp returns the sign (-1, 0 or +1) of ka×a − kb×b, computed exactly;
// for instance MulCmp(10, winner, 7, loser) <= 0 says 10×winner <= 7×loser.
// With a and b on the fast path it allocates nothing.
func MulCmp(ka int64, a Number, kb int64, b Number) int {
	if a.wide == nil && b.wide == nil {
		// |k| <= 2^63 and |units| < 2^57: the products fit in 128 bits.
		an, ah, al := mul128(ka, a.units)
		bn, bh, bl := mul128(kb, b.units)
		return cmp128(an, ah, al, bn, bh, bl)
	}
	var ab, bb [24]byte
	return cmpDigits(mulDigits(ka, a.digits(&ab)), mulDigits(kb, b.digits(&bb)))
}

// ---- fast path helpers ----

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// abs returns |x|, correct for math.MinInt64 too.
func abs(x int64) uint64 {
	if x < 0 {
		return uint64(-x) // -MinInt64 wraps to MinInt64, which converts to 2^63
	}
	return uint64(x)
}

// mul128 returns k×u as a sign and a 128-bit magnitude (hi, lo).
func mul128(k, u int64) (neg bool, hi, lo uint64) {
	hi, lo = bits.Mul64(abs(k), abs(u))
	neg = (k < 0) != (u < 0) && (hi|lo) != 0
	return neg, hi, lo
}

// cmp128 compares two signed 128-bit values given as sign and magnitude
// (zero always with neg false).
func cmp128(an bool, ah, al uint64, bn bool, bh, bl uint64) int {
	if an != bn {
		if an {
			return -1
		}
		return 1
	}
	c := 0
	switch {
	case ah != bh:
		c = 1
		if ah < bh {
			c = -1
		}
	case al != bl:
		c = 1
		if al < bl {
			c = -1
		}
	}
	if an {
		return -c
	}
	return c
}

// ---- digit strings, for values off the fast path ----

// digits is a value as canonical decimal digits: int has no leading zeros
// (it is empty for 0), frac no trailing zeros, and 0 has no sign.
type digits struct {
	neg       bool
	int, frac []byte
}

// digits returns n as digits; buf holds them for a fast-path value.
func (n Number) digits(buf *[24]byte) digits {
	if n.wide != nil {
		return *n.wide
	}
	return unitsDigits(n.units, buf)
}

// unitsDigits writes u / 10^6 as digits into buf.
func unitsDigits(u int64, buf *[24]byte) digits {
	if u == 0 {
		return digits{}
	}
	s := strconv.AppendUint(buf[:0], abs(u), 10)
	// Left-pad to more than 6 digits so the split below is simple.
	if pad := unitDigits + 1 - len(s); pad > 0 {
		copy(buf[pad:], s)
		for i := range pad {
			buf[i] = '0'
		}
		s = buf[:len(s)+pad]
	}
	d := digits{neg: u < 0, int: s[:len(s)-unitDigits], frac: s[len(s)-unitDigits:]}
	return canonical(d)
}

// canonical strips leading zeros of int and trailing zeros of frac, and the
// sign of 0.
func canonical(d digits) digits {
	for len(d.int) > 0 && d.int[0] == '0' {
		d.int = d.int[1:]
	}
	for len(d.frac) > 0 && d.frac[len(d.frac)-1] == '0' {
		d.frac = d.frac[:len(d.frac)-1]
	}
	if len(d.int) == 0 && len(d.frac) == 0 {
		d.neg = false
	}
	return d
}

// cmpDigits compares two canonical values.
func cmpDigits(a, b digits) int {
	if a.neg != b.neg {
		if a.neg {
			return -1
		}
		return 1
	}
	c := cmpMagnitude(a, b)
	if a.neg {
		return -c
	}
	return c
}

func cmpMagnitude(a, b digits) int {
	if len(a.int) != len(b.int) {
		return cmpInt64(int64(len(a.int)), int64(len(b.int)))
	}
	if c := cmpBytes(a.int, b.int); c != 0 {
		return c
	}
	// Without trailing zeros, fractions compare as plain strings.
	return cmpBytes(a.frac, b.frac)
}

func cmpBytes(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return cmpInt64(int64(a[i]), int64(b[i]))
		}
	}
	return cmpInt64(int64(len(a)), int64(len(b)))
}

// mulDigits returns k×d, exactly, in canonical form.
func mulDigits(k int64, d digits) digits {
	scale := len(d.frac)
	in := make([]byte, 0, len(d.int)+len(d.frac))
	in = append(append(in, d.int...), d.frac...)
	out := make([]byte, len(in)+20) // k < 2^64 adds at most 20 digits
	m := abs(k)
	var carry uint64 // stays below m
	j := len(out)
	for i := len(in) - 1; i >= 0; i-- {
		hi, lo := bits.Mul64(uint64(in[i]-'0'), m)
		var c uint64
		lo, c = bits.Add64(lo, carry, 0)
		hi += c
		// hi:lo < 10·m <= 10·2^64, so hi < 10 and Div64 cannot overflow.
		var r uint64
		carry, r = bits.Div64(hi, lo, 10)
		j--
		out[j] = byte('0' + r)
	}
	for carry > 0 {
		j--
		out[j] = byte('0' + carry%10)
		carry /= 10
	}
	for i := 0; i < j; i++ {
		out[i] = '0'
	}
	p := digits{neg: d.neg != (k < 0), int: out[:len(out)-scale], frac: out[len(out)-scale:]}
	return canonical(p)
}
