package schema

import (
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"
)

func TestParseBool(t *testing.T) {
	accept := map[string]bool{
		"true": true, "True": true, "TRUE": true, "tRuE": true, "1": true,
		"false": false, "False": false, "FALSE": false, "fAlSe": false, "0": false,
	}
	for in, want := range accept {
		if v, ok := ParseBool([]byte(in)); !ok || v != want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v, true", in, v, ok, want)
		}
	}
	for _, in := range []string{"", " ", "t", "f", "yes", "no", "2", "01", "00", " true", "true ", "truee", "fals", "\x14RUE", "TRU\x05", "tru\xc5", "-1", "1.0"} {
		if v, ok := ParseBool([]byte(in)); ok || v {
			t.Errorf("ParseBool(%q) = %v, %v; want false, false", in, v, ok)
		}
	}
}

func FuzzParseBool(f *testing.F) {
	for _, s := range []string{"true", "FALSE", "1", "0", "", "yes", "\x14RUE"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := ParseBool(b)
		s := string(b)
		isTrue := s == "1" || (len(s) == 4 && strings.EqualFold(s, "true"))
		isFalse := s == "0" || (len(s) == 5 && strings.EqualFold(s, "false"))
		if ok != (isTrue || isFalse) || v != isTrue {
			t.Fatalf("ParseBool(%q) = %v, %v", b, v, ok)
		}
	})
}

func TestParseDuration(t *testing.T) {
	accept := map[string]int64{
		"0:00:00":                        0,
		"2:00:00":                        7200,
		"2:00:01":                        7201,
		"02:00:00":                       7200,
		"1:59:59":                        7199,
		"0:27:44":                        1664,
		"99:99:99":                       99*3600 + 99*60 + 99,
		"1:75:00":                        8100,
		"1 day, 2:03:04":                 86400 + 2*3600 + 3*60 + 4,
		"1 days, 0:00:00":                86400,
		"2 day, 0:00:00":                 2 * 86400,
		"0 days, 12:00:00":               43200,
		"007 days, 1:00:00":              7*86400 + 3600,
		"106751991167300 days, 15:30:07": math.MaxInt64, // exactly MaxInt64
		"106751991167300 days, 15:30:08": math.MaxInt64, // one more: saturates
		"99999999999999999999999999 days, 0:00:00": math.MaxInt64,
	}
	for in, want := range accept {
		if got, ok := ParseDuration([]byte(in)); !ok || got != want {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d, true", in, got, ok, want)
		}
	}
	refuse := []string{
		"", "2:00", "200:00:00", "123:00:00", "2:0:00", "2:00:0", "2:000:00", ":00:00",
		" 2:00:00", "2:00:00 ", "2:00:00\n", "+2:00:00", "-2:00:00", "2.00:00", "2:00.00", "a:00:00", "2:0a:00",
		"1 days,0:00:00", "1 day,2:03:04", "1 day 2:03:04", "1  day, 2:03:04", "1 day,  2:03:04",
		"day, 2:03:04", " day, 2:03:04", "1 Day, 2:03:04", "1 dayss, 2:03:04", "x day, 2:03:04",
		"-1 day, 2:03:04", "1 day, ", "1 day, 2:03", "1.5 days, 2:03:04", "１:00:00", "7200", "PT2H",
		"1 day, 1 day, 2:03:04",
	}
	for _, in := range refuse {
		if got, ok := ParseDuration([]byte(in)); ok || got != 0 {
			t.Errorf("ParseDuration(%q) = %d, %v; want 0, false", in, got, ok)
		}
	}
}

var durationRE = regexp.MustCompile(`^(?:([0-9]+) days?, )?([0-9]{1,2}):([0-9]{2}):([0-9]{2})$`)

// durationOracle is an independent ParseDuration: a regexp and math/big.
func durationOracle(s string) (int64, bool) {
	m := durationRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	num := func(d string) *big.Int {
		v, _ := new(big.Int).SetString(d, 10)
		return v
	}
	total := new(big.Int).Mul(num(m[2]), big.NewInt(3600))
	total.Add(total, new(big.Int).Mul(num(m[3]), big.NewInt(60)))
	total.Add(total, num(m[4]))
	if m[1] != "" {
		total.Add(total, new(big.Int).Mul(num(m[1]), big.NewInt(86400)))
	}
	if !total.IsInt64() {
		return math.MaxInt64, true
	}
	return total.Int64(), true
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"2:00:00", "12:34:56", "1 day, 2:03:04", "3 days, 23:59:59", "1 days,0:00:00",
		"123:00:00", "99999999999999999999 days, 0:00:00", "106751991167300 days, 15:30:08"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := ParseDuration(b)
		want, wantOK := durationOracle(string(b))
		if got != want || ok != wantOK {
			t.Fatalf("ParseDuration(%q) = %d, %v; oracle %d, %v", b, got, ok, want, wantOK)
		}
	})
}

func BenchmarkParseDuration(b *testing.B) {
	inputs := [][]byte{[]byte("0:27:44"), []byte("12:03:59"), []byte("1 day, 2:03:04"), []byte("")}
	b.ReportAllocs()
	for b.Loop() {
		for _, in := range inputs {
			ParseDuration(in)
		}
	}
}

func BenchmarkParseBool(b *testing.B) {
	inputs := [][]byte{[]byte("True"), []byte("false"), []byte("1"), []byte("")}
	b.ReportAllocs()
	for b.Loop() {
		for _, in := range inputs {
			ParseBool(in)
		}
	}
}
