// Package value reads the text of a field as the kinds of the value rules
// of docs/queries.md (exact decimal numbers, booleans, durations) and does
// the exact decimal arithmetic and formatting of the SQL engine
// (services/dataflow/sql).
//
// Dec is an exact decimal: an unscaled integer and a scale (the number of
// digits after the point). The unscaled integer is an int64 while it fits
// and a math/big.Int from then on, so the common values (ratings, counts,
// seconds) never allocate, and a wider number is still exact. Why not a
// library: cockroachdb/apd and shopspring/decimal both work with a
// context precision or a rounding of division that we would have to
// override everywhere, and the rules the engine needs (add, subtract,
// multiply, compare, one division rule) are a few lines over big.Int with
// an int64 fast path.
//
// A number has at most MaxDigits (38) digits, those after the point
// included: it fits a DECIMAL(38, s), s <= 38, DuckDB's widest decimal
// (and SQL Server's; MySQL's is 65). Unbounded, the cost of a value was
// not: multiplying a 2,000-digit input by itself through an 8 KB query
// grew it at every step (55.7 CPU-seconds a row). 38 digits hold every
// number of the dataset by far (ratings, counts, seconds: at most 19, an
// int64), fit in 128 bits, and keep the differential test's comparison
// with DuckDB on numbers both sides hold. ReadNumber reads a wider text
// as not a number (the scan's NULL, counted invalid); the arithmetic is
// exact (Add, Sub, Mul, Div of numbers within the bound are at most
// about twice as wide, their scales at most 76) and the engine makes a
// result that does not Fit NULL (services/dataflow/sql/exec). A running
// SUM is kept exact, wider (ReadStored), and bounded when it is the
// answer, so that it does not depend on the order rows are added in.
//
// Booleans are read by the pipeline's own reader (schema.ParseBool).
// Numbers and durations are not: the engine keeps the scale a number was
// written with, which the output keeps, and computes with both exactly,
// at any length (schema.ParseDuration saturates at MaxInt64 seconds).
//
// The package is pure: no I/O, no logging; of this module it imports only
// services/dataflow/schema.
package value

import (
	"bytes"
	"cmp"
	"math"
	"math/big"
	"math/bits"
	"strconv"

	"github.com/wololo/wololo/services/dataflow/schema"
)

// Dec is an exact decimal number: unscaled / 10^scale. Its zero value is 0.
type Dec struct {
	i int64    // the unscaled value when b is nil
	b *big.Int // the unscaled value when it does not fit an int64; never modified once set
	s int32    // the scale, >= 0
}

// pow10 holds 10^0 .. 10^18, the powers that fit an int64.
var pow10 = func() [19]int64 {
	var p [19]int64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// MaxDigits is the most digits a number may have, those after the point
// included (the package doc says why 38): |unscaled| < 10^MaxDigits and
// scale <= MaxDigits.
const MaxDigits = 38

// MaxStoredDigits bounds the numbers the engine keeps and sends between
// its own operators (ReadStored), of which a SUM's running total is the
// widest: values of at most MaxDigits digits aligned to a scale of at
// most MaxDigits are below 10^(2×MaxDigits) unscaled, and fewer than 2^63
// (< 10^19) of them add up to below 10^(2×MaxDigits+19).
const MaxStoredDigits = 2*MaxDigits + 19

// maxUnscaled is 10^MaxDigits - 1, the widest unscaled value that Fits.
var maxUnscaled = new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(MaxDigits), nil), big.NewInt(1))

// Fits reports whether d has at most MaxDigits digits, those after the
// point included. On the int64 fast path (at most 19 digits) it compares
// the scale alone.
func (d Dec) Fits() bool { return d.b == nil && d.s <= MaxDigits || d.fitsBig() }

func (d Dec) fitsBig() bool {
	return d.b != nil && d.s <= MaxDigits && d.b.CmpAbs(maxUnscaled) <= 0
}

// Int returns the integer n as a Dec of scale 0.
func Int(n int64) Dec { return Dec{i: n} }

// Unscaled returns d's unscaled value and scale (d is unscaled /
// 10^scale), and false when the unscaled value does not fit an int64: the
// form to keep many numbers in without pointers (FromUnscaled).
func (d Dec) Unscaled() (unscaled int64, scale int32, ok bool) { return d.i, d.s, d.b == nil }

// FromUnscaled returns unscaled / 10^scale, scale >= 0: Unscaled's
// inverse.
func FromUnscaled(unscaled int64, scale int32) Dec { return Dec{i: unscaled, s: scale} }

// UnscaledAt returns d's unscaled value at scale s (d is it / 10^s), and
// false when s is below d's scale or that value does not fit an int64.
func (d Dec) UnscaledAt(s int32) (int64, bool) {
	k := s - d.s
	if k < 0 || k >= int32(len(pow10)) || d.b != nil {
		return 0, false
	}
	hi, lo := bits.Mul64(abs(d.i), uint64(pow10[k]))
	switch {
	case hi != 0 || lo > 1<<63 || lo == 1<<63 && d.i > 0:
		return 0, false
	case d.i < 0:
		return -int64(lo), true // -2^63 too
	}
	return int64(lo), true
}

// Scale returns the number of digits after the point.
func (d Dec) Scale() int32 { return d.s }

// big returns the unscaled value as a new big.Int.
func (d Dec) big() *big.Int {
	if d.b != nil {
		return new(big.Int).Set(d.b)
	}
	return big.NewInt(d.i)
}

// fromBig returns v / 10^s, back on the fast path when v fits an int64.
func fromBig(v *big.Int, s int32) Dec {
	if v.IsInt64() {
		return Dec{i: v.Int64(), s: s}
	}
	return Dec{b: v, s: s}
}

// ReadNumber reads b as a number: -?[0-9]+(\.[0-9]+)? exactly, of at
// most MaxDigits digits (leading zeros aside, those after the point
// included: it Fits). Anything else (empty, a space, +5, 1e3, 1., 39
// nines) is not a number.
func ReadNumber(b []byte) (Dec, bool) { return readNumber(b, MaxDigits) }

// ReadStored is ReadNumber for the numbers the engine writes itself (its
// snapshots, the batches its operators send each other): up to
// MaxStoredDigits digits, for a SUM's running total.
func ReadStored(b []byte) (Dec, bool) { return readNumber(b, MaxStoredDigits) }

// readNumber reads b as a number of at most limit digits, refusing a
// longer one before any big.Int work.
func readNumber(b []byte, limit int) (Dec, bool) {
	i, neg := 0, false
	if len(b) > 0 && b[0] == '-' {
		i, neg = 1, true
	}
	// One pass checks the text and reads its digits as an int64, which
	// is the value when there are at most 18 (past those it wraps and is
	// not used).
	start, dot, digits, v := i, -1, 0, int64(0)
	sig := 0 // digits from the first that is not 0: the unscaled value's
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			if sig > 0 || c != '0' {
				sig++
			}
			v = v*10 + int64(c-'0')
		case c == '.' && dot < 0 && i > start:
			dot = i
		default:
			return Dec{}, false
		}
	}
	if digits == 0 || dot == len(b)-1 {
		return Dec{}, false
	}
	scale := 0
	if dot >= 0 {
		scale = len(b) - dot - 1
	}
	if sig > limit || scale > limit {
		return Dec{}, false
	}
	if digits <= 18 {
		if neg {
			v = -v
		}
		return Dec{i: v, s: int32(scale)}, true
	}
	digitsOnly := make([]byte, 0, digits+1)
	if neg {
		digitsOnly = append(digitsOnly, '-')
	}
	for _, c := range b[start:] {
		if c != '.' {
			digitsOnly = append(digitsOnly, c)
		}
	}
	wide, _ := new(big.Int).SetString(string(digitsOnly), 10)
	return fromBig(wide, int32(scale)), true
}

// ReadBool reads b as a boolean: true, false, 1 or 0, the words in any
// ASCII letter case. It is the pipeline's reader (schema.ParseBool).
func ReadBool(b []byte) (v, ok bool) { return schema.ParseBool(b) }

// ReadDuration reads b as a duration in seconds: H:MM:SS or HH:MM:SS,
// optionally after "N day, " or "N days, " (N digits); minutes and
// seconds are two digits each and not range-checked. A duration of more
// seconds than a number holds (MaxDigits digits) is not one.
func ReadDuration(b []byte) (Dec, bool) {
	var days []byte
	for i, c := range b {
		if c >= '0' && c <= '9' {
			continue
		}
		if c == ' ' && i > 0 {
			rest := b[i+1:]
			switch {
			case len(rest) >= 6 && string(rest[:6]) == "days, ":
				days, b = b[:i], rest[6:]
			case len(rest) >= 5 && string(rest[:5]) == "day, ":
				days, b = b[:i], rest[5:]
			default:
				return Dec{}, false
			}
		}
		break
	}
	// b is now [H]H:MM:SS.
	n := len(b)
	if n != 7 && n != 8 || b[n-3] != ':' || b[n-6] != ':' {
		return Dec{}, false
	}
	var secs int64
	for _, part := range [][]byte{b[:n-6], b[n-5 : n-3], b[n-2:]} {
		var v int64
		for _, c := range part {
			if c < '0' || c > '9' {
				return Dec{}, false
			}
			v = v*10 + int64(c-'0')
		}
		secs = secs*60 + v
	}
	if days == nil {
		return Dec{i: secs}, true
	}
	d, ok := ReadNumber(days)
	if !ok {
		return Dec{}, false
	}
	d = d.Mul(Int(86400)).Add(Int(secs))
	return d, d.Fits()
}

// rescale returns d with scale s >= d.s.
func (d Dec) rescale(s int32) Dec {
	if s == d.s {
		return d
	}
	if i, ok := d.UnscaledAt(s); ok {
		return Dec{i: i, s: s}
	}
	v := d.big()
	v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s-d.s)), nil))
	return Dec{b: v, s: s}
}

func abs(v int64) uint64 {
	if v < 0 {
		return uint64(-v) // MinInt64 stays 1<<63, which is right as a uint64
	}
	return uint64(v)
}

// align returns a and b at the same scale, the larger of the two.
func align(a, b Dec) (Dec, Dec) {
	s := max(a.s, b.s)
	return a.rescale(s), b.rescale(s)
}

// Cmp compares a and b exactly: -1, 0 or +1. Two int64s of one scale
// (the common case: ratings, counts) compare without aligning.
func (d Dec) Cmp(e Dec) int {
	if d.s == e.s && d.b == nil && e.b == nil {
		return cmp.Compare(d.i, e.i)
	}
	a, b := align(d, e)
	if a.b == nil && b.b == nil {
		return cmp.Compare(a.i, b.i)
	}
	return a.big().Cmp(b.big())
}

// Sign returns -1, 0 or +1.
func (d Dec) Sign() int {
	if d.b != nil {
		return d.b.Sign()
	}
	switch {
	case d.i < 0:
		return -1
	case d.i > 0:
		return 1
	}
	return 0
}

// The arithmetic is exact, whatever the digits: the engine makes a
// result that does not Fit NULL. Of operands within MaxStoredDigits the
// results are bounded too (a product at most twice as wide, a scale at
// most twice MaxDigits), so no value grows without bound.

// Add returns d + e, at the larger scale of the two. Two int64s of one
// scale add without aligning, while the sum fits.
func (d Dec) Add(e Dec) Dec {
	if d.s == e.s && d.b == nil && e.b == nil {
		if s, o := addOverflows(d.i, e.i); !o {
			return Dec{i: s, s: d.s}
		}
	}
	a, b := align(d, e)
	if a.b == nil && b.b == nil {
		if s, o := addOverflows(a.i, b.i); !o {
			return Dec{i: s, s: a.s}
		}
	}
	return fromBig(new(big.Int).Add(a.big(), b.big()), a.s)
}

func addOverflows(a, b int64) (int64, bool) {
	s := a + b
	return s, (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0)
}

// Neg returns -d.
func (d Dec) Neg() Dec {
	if d.b == nil && d.i != math.MinInt64 {
		return Dec{i: -d.i, s: d.s}
	}
	return fromBig(new(big.Int).Neg(d.big()), d.s)
}

// Sub returns d - e, at the larger scale of the two.
func (d Dec) Sub(e Dec) Dec { return d.Add(e.Neg()) }

// Mul returns d × e, at the sum of the two scales.
func (d Dec) Mul(e Dec) Dec {
	s := d.s + e.s
	if d.b == nil && e.b == nil {
		hi, lo := bits.Mul64(abs(d.i), abs(e.i))
		if hi == 0 && lo <= math.MaxInt64 {
			v := int64(lo)
			if (d.i < 0) != (e.i < 0) {
				v = -v
			}
			return Dec{i: v, s: s}
		}
	}
	return fromBig(new(big.Int).Mul(d.big(), e.big()), s)
}

// DivScale is how many digits a quotient has beyond its dividend's scale.
const DivScale = 4

// Div returns d / e rounded half away from zero to d's scale + DivScale
// digits (MySQL's rule), and false when e is zero. A dividend of scale
// above MaxDigits - DivScale gives a quotient that does not Fit.
func (d Dec) Div(e Dec) (Dec, bool) {
	if e.Sign() == 0 {
		return Dec{}, false
	}
	// q = d.unscaled × 10^(s + e.s - d.s) / e.unscaled, with s the result scale.
	s := d.s + DivScale
	if q, ok := div64(d, e); ok {
		return Dec{i: q, s: s}, true
	}
	num := d.big()
	num.Mul(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s+e.s-d.s)), nil))
	den := e.big()
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	// Round half away from zero: |2r| >= |den|.
	r.Abs(r).Lsh(r, 1)
	if r.Cmp(new(big.Int).Abs(den)) >= 0 {
		if num.Sign()*den.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return fromBig(q, s), true
}

// div64 is Div's unscaled quotient of two int64s (e not zero) in 128-bit
// unsigned arithmetic, without math/big (a rating / 200 of every row),
// and false when the scaled dividend or the quotient does not fit: then
// Div's big.Int path, whose result this one equals.
func div64(d, e Dec) (int64, bool) {
	k := int(DivScale + e.s)
	if d.b != nil || e.b != nil || k >= len(pow10) {
		return 0, false
	}
	den := abs(e.i)
	hi, lo := bits.Mul64(abs(d.i), uint64(pow10[k]))
	if hi >= den {
		return 0, false // the quotient needs more than 64 bits
	}
	q, r := bits.Div64(hi, lo, den)
	if r >= den-r { // round half away from zero: 2r >= den, without overflow
		q++
	}
	if q > math.MaxInt64 {
		return 0, false
	}
	if (d.i < 0) != (e.i < 0) {
		return -int64(q), true
	}
	return int64(q), true
}

// Normal returns d with no trailing zero after the point: the one form
// of its value, used for grouping keys.
func (d Dec) Normal() Dec {
	for d.s > 0 {
		if d.b == nil {
			if d.i%10 != 0 {
				return d
			}
			d = Dec{i: d.i / 10, s: d.s - 1}
			continue
		}
		q, r := new(big.Int).QuoRem(d.b, big.NewInt(10), new(big.Int))
		if r.Sign() != 0 {
			return d
		}
		d = fromBig(q, d.s-1)
	}
	return d
}

// Append appends d in decimal with exactly Scale digits after the point
// (none and no point at scale 0), a '-' for a negative value, never "-0".
func (d Dec) Append(dst []byte) []byte {
	var buf [20]byte // a uint64's digits: no allocation for the common case
	var digits []byte
	neg := d.Sign() < 0
	if d.b == nil {
		digits = strconv.AppendUint(buf[:0], abs(d.i), 10)
	} else {
		digits = new(big.Int).Abs(d.b).Append(nil, 10)
	}
	if neg {
		dst = append(dst, '-')
	}
	if d.s == 0 {
		return append(dst, digits...)
	}
	s := int(d.s)
	if len(digits) <= s {
		dst = append(dst, '0', '.')
		for range s - len(digits) {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-s]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-s:]...)
}

// String is Append as a string.
func (d Dec) String() string { return string(d.Append(nil)) }

// Float64 returns the double nearest to d (round half to even).
func (d Dec) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// Percent is 100 × part / whole as the percentage of q3 of docs/queries.md
// computes it: 100 × part exactly, rounded to the nearest double; whole
// rounded to the nearest double; their quotient in double arithmetic,
// written with exactly four decimals (Go's %.4f: the exact binary value
// rounded half to even). The result is that text read back as a Dec of
// scale 4. It is false when whole is zero, the quotient is not finite or
// it is past MaxDigits digits (a double can be 309 digits long).
func Percent(part, whole Dec) (Dec, bool) {
	w := whole.Float64()
	if w == 0 {
		return Dec{}, false
	}
	q := part.Mul(Int(100)).Float64() / w
	if math.IsInf(q, 0) || math.IsNaN(q) {
		return Dec{}, false
	}
	return ReadNumber(strconv.AppendFloat(nil, q, 'f', 4, 64))
}

// Avg is AVG's result of an exact sum of count values (count > 0): the
// exact quotient sum / count rounded to the nearest double, then that
// double as the shortest decimal that reads back as it, with at least
// one digit after the point ("2.0", "0.1617283945061725",
// "1.6666666666666667"). It is DuckDB's AVG of a DECIMAL or an integer (a
// DOUBLE) and its text, but for the exponent DuckDB writes below 1e-4 and
// from 1e16 on (1e-05, 1e+16), where a Dec has none: the same digits are
// written in full (0.00001, 10000000000000000.0). The sum being exact and
// the quotient rounded once, the result depends neither on the order of
// the values nor on how the shards split them. It is false when count is
// not positive; a result past MaxDigits digits does not Fit.
func Avg(sum Dec, count int64) (Dec, bool) {
	if count <= 0 {
		return Dec{}, false
	}
	var f float64
	const exact = 1 << 53 // integers up to it are exact doubles, and so is their quotient's rounding
	if den, ok := Int(count).UnscaledAt(sum.s); ok && sum.b == nil && abs(sum.i) <= exact && den <= exact {
		f = float64(sum.i) / float64(den)
	} else {
		den := new(big.Int).Mul(big.NewInt(count), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(sum.s)), nil))
		f, _ = new(big.Rat).SetFrac(sum.big(), den).Float64()
	}
	text := strconv.AppendFloat(nil, f, 'f', -1, 64)
	if !bytes.ContainsRune(text, '.') {
		text = append(text, '.', '0')
	}
	return readNumber(text, MaxStoredDigits)
}

// StddevSamp is the sample standard deviation of n values whose sum is
// sum and whose squares' sum is squares: the square root of
// (n × squares − sum²) / (n × (n − 1)), computed exactly and rounded half
// away from zero to sum's scale + DivScale digits (the division rule's
// scale). It is
// false for fewer than two values, and when sum, squares or the result
// does not Fit.
func StddevSamp(n, sum, squares Dec) (Dec, bool) {
	if n.Cmp(Int(2)) < 0 || !sum.Fits() || !squares.Fits() {
		return Dec{}, false
	}
	s := sum.s + DivScale
	// The variance × 10^(2s) is num / den: with sum = u / 10^a and
	// squares = q / 10^b, num = (n q 10^(2a) − u² 10^b) 10^(2s) and
	// den = n (n − 1) 10^(b + 2a).
	pow := func(e int32) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil) }
	nb, u := n.big(), sum.big()
	num := new(big.Int).Mul(nb, squares.big())
	num.Mul(num, pow(2*sum.s))
	num.Sub(num, new(big.Int).Mul(new(big.Int).Mul(u, u), pow(squares.s)))
	num.Mul(num, pow(2*s))
	den := new(big.Int).Mul(nb, new(big.Int).Sub(nb, big.NewInt(1)))
	den.Mul(den, pow(squares.s+2*sum.s))
	if num.Sign() < 0 { // not the squares of values of this sum
		return Dec{}, false
	}
	// r = ⌊√⌊num/den⌋⌋ = ⌊√(num/den)⌋, one more when √(num/den) ≥ r + ½,
	// that is when 4 num ≥ (2r + 1)² den.
	r := new(big.Int).Sqrt(new(big.Int).Quo(num, den))
	odd := new(big.Int).Lsh(r, 1)
	odd.Add(odd, big.NewInt(1))
	if new(big.Int).Lsh(num, 2).Cmp(odd.Mul(odd, odd).Mul(odd, den)) >= 0 {
		r.Add(r, big.NewInt(1))
	}
	d := fromBig(r, s)
	return d, d.Fits()
}
