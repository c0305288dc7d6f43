package value

import (
	"math"
	"math/big"
)

// Rem returns d % e, PostgreSQL's and DuckDB's remainder of exact
// decimals: d - e × trunc(d / e), at the larger scale of the two, of d's
// sign (-7 % 3 is -1, 7 % -3 is 1, 7.5 % 2 is 1.5); false when e is zero
// (the engine's NULL, as for a division by zero).
func (d Dec) Rem(e Dec) (Dec, bool) {
	if e.Sign() == 0 {
		return Dec{}, false
	}
	a, b := align(d, e)
	if a.b == nil && b.b == nil {
		if b.i == -1 { // MinInt64 % -1 would overflow: every integer % -1 is 0
			return Dec{s: a.s}, true
		}
		return Dec{i: a.i % b.i, s: a.s}, true
	}
	return fromBig(new(big.Int).Rem(a.big(), b.big()), a.s), true // Rem truncates: the dividend's sign
}

// castBits are the integer types a number is cast to, by their bits:
// SMALLINT 16, INTEGER 32, BIGINT 64.
var castBits = map[int32][2]int64{
	16: {math.MinInt16, math.MaxInt16},
	32: {math.MinInt32, math.MaxInt32},
	64: {math.MinInt64, math.MaxInt64},
}

// CastInt returns d as an integer of bits (16, 32 or 64: SMALLINT,
// INTEGER, BIGINT), rounded half away from zero as DuckDB casts a
// DECIMAL (2.5 is 3, -2.5 is -3), and false when it is out of that
// type's range (or bits is none of them).
func (d Dec) CastInt(bits int32) (Dec, bool) {
	r, ok := castBits[bits]
	if !ok {
		return Dec{}, false
	}
	q := d.Round(0, HalfAway)
	if q.b != nil || q.i < r[0] || q.i > r[1] {
		return Dec{}, false
	}
	return q, true
}

// CastDecimal returns d as a DECIMAL(precision, scale): rounded half
// away from zero to scale digits after the point, or written with scale
// digits when it has fewer (1.5 is 1.500 at scale 3), and false when it
// needs more than precision digits in all or precision and scale are
// not a DECIMAL's (1 <= precision <= MaxDigits, 0 <= scale <= precision).
func (d Dec) CastDecimal(precision, scale int32) (Dec, bool) {
	if precision < 1 || precision > MaxDigits || scale < 0 || scale > precision {
		return Dec{}, false
	}
	q := d.Round(scale, HalfAway)
	if q.s < scale {
		q = q.rescale(scale)
	}
	if q.b == nil && int(precision) < len(pow10) { // no big.Int per row where an int64 holds both
		if abs(q.i) >= uint64(pow10[precision]) {
			return Dec{}, false
		}
		return q, true
	}
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(precision)), nil)
	if q.big().CmpAbs(limit) >= 0 {
		return Dec{}, false
	}
	return q, true
}
