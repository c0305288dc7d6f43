package exec

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// mapRows is a Vec of type t made by f row by row, NULL where an argument
// is NULL: f gets the rows' values (at) of the arguments, in order.
func mapRows(t plan.Type, args []*Vec, n int, f func(out *builder, js []int) error) (*Vec, error) {
	out := newBuilder(t, n)
	js := make([]int, len(args))
rows:
	for i := range n {
		for k, a := range args {
			js[k] = at(a, i)
			if a.IsNull(js[k]) {
				out.null()
				continue rows
			}
		}
		if err := f(out, js); err != nil {
			return nil, err
		}
	}
	return out.v, nil
}

// mapRunes is s with each rune through f; a byte that is not UTF-8 is
// kept as it is.
func mapRunes(dst, s []byte, f func(rune) rune) []byte {
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[0])
		} else {
			dst = utf8.AppendRune(dst, f(r))
		}
		s = s[size:]
	}
	return dst
}

// wholeNumber is d as an int, false when it is not a whole number or is
// out of the int's range.
func wholeNumber(d value.Dec) (int, bool) {
	i, ok := d.Normal().UnscaledAt(0)
	return int(i), ok && int64(int(i)) == i
}

// runeOffset is the byte offset of character k (0-based) of s, len(s)
// past its end.
func runeOffset(s []byte, k int) int {
	off := 0
	for ; k > 0 && off < len(s); k-- {
		_, size := utf8.DecodeRune(s[off:])
		off += size
	}
	return off
}

// substr is PostgreSQL's SUBSTR(s, start, count): the characters at
// positions start .. start+count-1 (1-based) that s has; all of them
// from start when count is absent (has false).
func substr(s []byte, start, count int, has bool) ([]byte, error) {
	if has && count < 0 {
		return nil, fmt.Errorf("SUBSTR: negative length %d", count)
	}
	from, to := start, 0
	if has {
		to = start + count // one past the last position
		if to < start {    // overflow
			has = false
		}
	}
	from = max(from, 1)
	if has && to <= from {
		return nil, nil
	}
	begin := runeOffset(s, from-1)
	if !has {
		return s[begin:], nil
	}
	return s[begin : begin+runeOffset(s[begin:], to-from)], nil
}

// leftRight is LEFT(s, k) (left) or RIGHT(s, k), PostgreSQL's and
// DuckDB's: the first (last) k characters of s, all of them when it has
// fewer; for k < 0, all but the last (first) -k.
func leftRight(s []byte, k int, left bool) []byte {
	n := utf8.RuneCount(s)
	if k < 0 {
		k = max(n+k, 0)
	}
	k = min(k, n)
	if left {
		return s[:runeOffset(s, k)]
	}
	return s[runeOffset(s, n-k):]
}

// splitPart is SPLIT_PART(s, d, k) as DuckDB's: field k (1-based) of s
// split at every d, counted from the end when k < 0 (-1 the last); ”
// when s has no such field or k is 0. An empty d splits s into its
// characters (PostgreSQL's would keep s whole).
func splitPart(s, d []byte, k int) []byte {
	var fields [][]byte
	if len(d) == 0 {
		for off := 0; off < len(s); {
			_, size := utf8.DecodeRune(s[off:])
			fields = append(fields, s[off:off+size])
			off += size
		}
	} else {
		fields = bytes.Split(s, d)
	}
	if k < 0 {
		k += len(fields) + 1
	}
	if k < 1 || k > len(fields) {
		return nil
	}
	return fields[k-1]
}

// stringCall evaluates the string functions of plan, ok false when fn
// is none of them.
func stringCall(fn string, args []*Vec, n int) (v *Vec, ok bool, err error) {
	var f func(out *builder, js []int) error
	t := plan.Text
	var scratch []byte
	switch fn {
	case plan.FnLower, plan.FnUpper:
		fold := unicode.ToLower
		if fn == plan.FnUpper {
			fold = unicode.ToUpper
		}
		f = func(out *builder, js []int) error {
			scratch = mapRunes(scratch[:0], args[0].Text(js[0]), fold)
			out.text(scratch)
			return nil
		}
	case plan.FnLength:
		t = plan.Number
		f = func(out *builder, js []int) error {
			out.num(value.Int(int64(utf8.RuneCount(args[0].Text(js[0])))))
			return nil
		}
	case plan.FnTrim:
		f = func(out *builder, js []int) error {
			out.text(bytes.Trim(args[0].Text(js[0]), " "))
			return nil
		}
	case plan.FnReplace:
		f = func(out *builder, js []int) error {
			s, from := args[0].Text(js[0]), args[1].Text(js[1])
			if len(from) == 0 {
				out.text(s)
				return nil
			}
			out.text(bytes.ReplaceAll(s, from, args[2].Text(js[2])))
			return nil
		}
	case plan.FnConcat:
		f = func(out *builder, js []int) error {
			scratch = append(append(scratch[:0], args[0].Text(js[0])...), args[1].Text(js[1])...)
			out.text(scratch)
			return nil
		}
	case plan.FnSubstr:
		f = func(out *builder, js []int) error {
			start, ok := wholeNumber(args[1].Nums[js[1]])
			if !ok {
				return fmt.Errorf("SUBSTR: start %s is not a whole number", args[1].Nums[js[1]])
			}
			count, has := 0, len(args) == 3
			if has {
				if count, ok = wholeNumber(args[2].Nums[js[2]]); !ok {
					return fmt.Errorf("SUBSTR: length %s is not a whole number", args[2].Nums[js[2]])
				}
			}
			sub, err := substr(args[0].Text(js[0]), start, count, has)
			if err != nil {
				return err
			}
			out.text(sub)
			return nil
		}
	case plan.FnLeft, plan.FnRight:
		f = func(out *builder, js []int) error {
			k, ok := wholeNumber(args[1].Nums[js[1]])
			if !ok {
				return fmt.Errorf("%s: length %s is not a whole number", strings.ToUpper(fn), args[1].Nums[js[1]])
			}
			out.text(leftRight(args[0].Text(js[0]), k, fn == plan.FnLeft))
			return nil
		}
	case plan.FnSplitPart:
		f = func(out *builder, js []int) error {
			k, ok := wholeNumber(args[2].Nums[js[2]])
			if !ok {
				return fmt.Errorf("SPLIT_PART: field %s is not a whole number", args[2].Nums[js[2]])
			}
			out.text(splitPart(args[0].Text(js[0]), args[1].Text(js[1]), k))
			return nil
		}
	default:
		return numberCall(fn, args, n)
	}
	v, err = mapRows(t, args, n, f)
	return v, true, err
}

// numberCall evaluates the number functions of plan, ok false when fn
// is none of them.
func numberCall(fn string, args []*Vec, n int) (v *Vec, ok bool, err error) {
	var f func(d value.Dec, js []int) (value.Dec, error)
	switch fn {
	case plan.FnAbs:
		f = func(d value.Dec, _ []int) (value.Dec, error) { return d.Abs(), nil }
	case plan.FnFloor:
		f = func(d value.Dec, _ []int) (value.Dec, error) { return d.Round(0, value.Floor), nil }
	case plan.FnCeil:
		f = func(d value.Dec, _ []int) (value.Dec, error) { return d.Round(0, value.Ceil), nil }
	case plan.FnRound:
		f = func(d value.Dec, js []int) (value.Dec, error) {
			digits := 0
			if len(args) == 2 {
				var ok bool
				if digits, ok = wholeNumber(args[1].Nums[js[1]]); !ok || digits < -value.MaxDigits || digits > value.MaxDigits {
					return d, fmt.Errorf("ROUND: digits %s is not a whole number from -%d to %d", args[1].Nums[js[1]], value.MaxDigits, value.MaxDigits)
				}
			}
			return d.Round(int32(digits), value.HalfAway), nil
		}
	case plan.FnExtract:
		f = func(d value.Dec, js []int) (value.Dec, error) {
			return extractField(d, string(args[1].Text(js[1])))
		}
	case plan.FnCastInt, plan.FnCastDecimal:
		f = func(d value.Dec, js []int) (value.Dec, error) {
			a, _ := wholeNumber(args[1].Nums[js[1]]) // the binder's Consts
			var ok bool
			if fn == plan.FnCastInt {
				d, ok = d.CastInt(int32(a))
			} else {
				s, _ := wholeNumber(args[2].Nums[js[2]])
				d, ok = d.CastDecimal(int32(a), int32(s))
			}
			if !ok {
				return outOfRange, nil // NULL (docs/sql.md "Casts"), as a result past 38 digits is
			}
			return d, nil
		}
	default:
		return nil, false, nil
	}
	v, err = mapRows(plan.Number, args, n, func(out *builder, js []int) error {
		d, err := f(args[0].Nums[js[0]], js)
		if d.Fits() {
			out.num(d)
		} else {
			out.null() // as arithmetic's: ROUND(99.9, -2) of 38 nines is 10^38
		}
		return err
	})
	return v, true, err
}

// extractField is EXTRACT(field FROM d) of a duration of secs seconds
// (whole, not negative: the duration rule's): its seconds (epoch), its
// whole days, the hours of its last day, the minutes of its last hour,
// the seconds of its last minute.
func extractField(secs value.Dec, field string) (value.Dec, error) {
	// whole is a / k of a multiple a of k, exactly.
	whole := func(a value.Dec, k int64) value.Dec {
		q, _ := a.Div(value.Int(k))
		return q.Round(0, value.HalfAway)
	}
	rem := func(a value.Dec, k int64) value.Dec {
		r, _ := a.Rem(value.Int(k))
		return r
	}
	switch field {
	case "epoch":
		return secs, nil
	case "day":
		return whole(secs.Sub(rem(secs, 86400)), 86400), nil
	case "hour":
		day := rem(secs, 86400)
		return whole(day.Sub(rem(day, 3600)), 3600), nil
	case "minute":
		hour := rem(secs, 3600)
		return whole(hour.Sub(rem(hour, 60)), 60), nil
	case "second":
		return rem(secs, 60), nil
	}
	return secs, fmt.Errorf("EXTRACT: no field %q of a duration", field)
}

// outOfRange is a number that does not Fit, which numberCall makes NULL:
// a cast's value outside its type's range.
var outOfRange = value.FromUnscaled(1, value.MaxDigits+1)
