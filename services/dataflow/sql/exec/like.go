package exec

import (
	"bytes"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// likeToken is one character of a LIKE pattern: a literal rune, or the
// wildcards _ (any one character) and % (any characters).
type likeToken struct {
	r    rune
	wild byte // 0, '_' or '%'
}

// likePattern reads a LIKE pattern: \ makes the next character literal
// (PostgreSQL's default escape); lower folds letters, for ILIKE.
func likePattern(p []byte, lower bool) ([]likeToken, error) {
	var out []likeToken
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		p = p[size:]
		switch r {
		case '%', '_':
			out = append(out, likeToken{wild: byte(r)})
			continue
		case '\\':
			if len(p) == 0 {
				return nil, fmt.Errorf("LIKE pattern ends with the escape character")
			}
			r, size = utf8.DecodeRune(p)
			p = p[size:]
		}
		if lower {
			r = unicode.ToLower(r)
		}
		out = append(out, likeToken{r: r})
	}
	return out, nil
}

// likeMatch reports whether s, as runes (a byte that is not UTF-8 is one
// character), matches the pattern: a scan that goes back only to the
// last %, so linear in s per % of the pattern.
func likeMatch(pat []likeToken, s []byte, lower bool) bool {
	pi, si := 0, 0
	star, starS := -1, 0
	for si < len(s) {
		r, size := utf8.DecodeRune(s[si:])
		if lower {
			r = unicode.ToLower(r)
		}
		switch {
		case pi < len(pat) && pat[pi].wild == '%':
			star, starS = pi, si
			pi++
			continue
		case pi < len(pat) && (pat[pi].wild == '_' || pat[pi].wild == 0 && pat[pi].r == r):
			pi++
			si += size
			continue
		case star >= 0:
			_, size = utf8.DecodeRune(s[starS:])
			starS += size
			pi, si = star+1, starS
			continue
		}
		return false
	}
	for pi < len(pat) && pat[pi].wild == '%' {
		pi++
	}
	return pi == len(pat)
}

// likeVec is x LIKE pattern (ILIKE when lower), pattern a constant:
// NULL where x or the pattern is NULL.
func likeVec(x, pattern *Vec, lower bool, n int) (*Vec, error) {
	out := newBools(n)
	if pattern.N != 1 || pattern.IsNull(0) {
		for i := range n {
			setNull(out, i)
		}
		if pattern.N != 1 {
			return nil, fmt.Errorf("LIKE pattern is not a constant")
		}
		return out, nil
	}
	pat, err := likePattern(pattern.Text(0), lower)
	if err != nil {
		return nil, err
	}
	for i := range n {
		if j := at(x, i); x.IsNull(j) {
			setNull(out, i)
		} else {
			out.Bools[i] = likeMatch(pat, x.Text(j), lower)
		}
	}
	return out, nil
}

// startsWithVec is STARTS_WITH(s, p): s begins with p's bytes; NULL
// where either is NULL.
func startsWithVec(s, p *Vec, n int) *Vec {
	out := newBools(n)
	for i := range n {
		j, k := at(s, i), at(p, i)
		if s.IsNull(j) || p.IsNull(k) {
			setNull(out, i)
		} else {
			out.Bools[i] = bytes.HasPrefix(s.Text(j), p.Text(k))
		}
	}
	return out
}

// scalarCall evaluates LIKE, STARTS_WITH, then the string and number
// functions (stringCall, numberCall); ok false when fn is
// none of them.
func scalarCall(fn string, args []*Vec, n int) (v *Vec, ok bool, err error) {
	switch fn {
	case plan.FnLike, plan.FnILike:
		if len(args) != 2 {
			return nil, true, fmt.Errorf("%s of %d arguments", fn, len(args))
		}
		v, err = likeVec(args[0], args[1], fn == plan.FnILike, n)
		return v, true, err
	case plan.FnStarts:
		if len(args) != 2 {
			return nil, true, fmt.Errorf("%s of %d arguments", fn, len(args))
		}
		return startsWithVec(args[0], args[1], n), true, nil
	}
	return stringCall(fn, args, n)
}
