package reference

import (
	"math/big"
	"regexp"
	"strings"
)

// The accepted forms of docs/queries.md; anything else is a missing value.
var (
	numberRE   = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	durationRE = regexp.MustCompile(`^(?:([0-9]+) days?, )?([0-9]{1,2}):([0-9]{2}):([0-9]{2})$`)
)

// isNumber reports whether s is a present number.
func isNumber(s string) bool { return numberRE.MatchString(s) }

// parseNumber returns the exact value of s, or ok false when s is missing.
// It builds the rational from base-10 digits itself so that no prefix rule
// (0x, 0o, leading 0) of a general parser can apply.
func parseNumber(s string) (v *big.Rat, ok bool) {
	if !numberRE.MatchString(s) {
		return nil, false
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	num, ok := new(big.Int).SetString(whole+frac, 10)
	if !ok {
		return nil, false // unreachable: the regexp admits digits only
	}
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	v = new(big.Rat).SetFrac(num, den)
	if neg {
		v.Neg(v)
	}
	return v, true
}

// parseBool accepts true/false/1/0 in any ASCII letter case.
func parseBool(s string) (v, ok bool) {
	switch {
	case s == "1" || asciiEqualFold(s, "true"):
		return true, true
	case s == "0" || asciiEqualFold(s, "false"):
		return false, true
	}
	return false, false
}

// asciiEqualFold compares s with the lower-case ASCII word w, ignoring the
// case of ASCII letters only (strings.EqualFold would also fold non-ASCII
// runes such as U+017F into "s").
func asciiEqualFold(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// parseDuration returns the duration in seconds, exactly, or ok false when
// s is missing. Minutes and seconds are not range-checked.
func parseDuration(s string) (seconds *big.Int, ok bool) {
	m := durationRE.FindStringSubmatch(s)
	if m == nil {
		return nil, false
	}
	total := new(big.Int)
	for i, unit := range []int64{86400, 3600, 60, 1} {
		part := m[i+1]
		if part == "" { // no day prefix
			continue
		}
		n, _ := new(big.Int).SetString(part, 10)
		total.Add(total, n.Mul(n, big.NewInt(unit)))
	}
	return total, true
}
