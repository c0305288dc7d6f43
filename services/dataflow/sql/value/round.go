package value

import "math/big"

// Rounding modes of Round.
type Rounding int

const (
	HalfAway Rounding = iota // to the nearest, a tie away from zero (SQL's ROUND of a decimal)
	Floor                    // towards minus infinity
	Ceil                     // towards plus infinity
)

// Abs returns |d|, at d's scale.
func (d Dec) Abs() Dec {
	if d.Sign() < 0 {
		return d.Neg()
	}
	return d
}

// Round returns d rounded by mode to digits decimals (a negative digits
// rounds to a multiple of 10^-digits): at scale digits, 0 when digits is
// negative, or d itself when d has no more than digits decimals.
func (d Dec) Round(digits int32, mode Rounding) Dec {
	if digits >= d.s {
		return d
	}
	k := d.s - digits // the digits to drop, > 0
	var q Dec
	if d.b == nil && int(k) < len(pow10) {
		p := pow10[k]
		i, r := d.i/p, d.i%p
		i += roundingStep(d.i, r, p, mode)
		q = Dec{i: i}
	} else {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil)
		v, r := new(big.Int).QuoRem(d.big(), p, new(big.Int))
		switch {
		case r.Sign() == 0:
		case mode == Floor && r.Sign() < 0:
			v.Sub(v, big.NewInt(1))
		case mode == Ceil && r.Sign() > 0:
			v.Add(v, big.NewInt(1))
		case mode == HalfAway && new(big.Int).Lsh(new(big.Int).Abs(r), 1).Cmp(p) >= 0:
			v.Add(v, big.NewInt(int64(d.Sign())))
		}
		q = fromBig(v, 0)
	}
	if digits >= 0 {
		q.s = digits
		return q
	}
	return q.Mul(fromBig(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-digits)), nil), 0))
}

// roundingStep is what the truncated quotient of v / p gains by mode: r
// is the remainder (of v's sign).
func roundingStep(v, r, p int64, mode Rounding) int64 {
	switch {
	case r == 0:
		return 0
	case mode == Floor && r < 0:
		return -1
	case mode == Ceil && r > 0:
		return 1
	case mode == HalfAway && abs(r)*2 >= uint64(p):
		if v < 0 {
			return -1
		}
		return 1
	}
	return 0
}
