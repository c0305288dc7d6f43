package reference

import (
	"math/big"
	"testing"
)

func TestParseNumber(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // exact value as a fraction, "" for missing
	}{
		{"2034", "2034/1"}, {"2034.0", "2034/1"}, {"010", "10/1"}, {"-0", "0/1"},
		{"1050.7", "10507/10"}, {"-12.50", "-25/2"},
		{"123456789012345678901234567890.000000000000000000001", "123456789012345678901234567890000000000000000000001/1000000000000000000000"},
		{"", ""}, {"+1", ""}, {"1.", ""}, {".5", ""}, {"1e3", ""}, {"1,500", ""}, {" 1", ""}, {"1 ", ""},
		{"0x10", ""}, {"1/2", ""}, {"1500\n", ""}, {"\u0661", ""}, {"NaN", ""}, {"--1", ""},
	} {
		v, ok := parseNumber(c.in)
		got := ""
		if ok {
			got = v.String()
		}
		if got != c.want {
			t.Errorf("parseNumber(%q) = %q, want %q", c.in, got, c.want)
		}
		if isNumber(c.in) != (c.want != "") {
			t.Errorf("isNumber(%q) = %v", c.in, !(c.want != ""))
		}
	}
}

func TestParseBool(t *testing.T) {
	for _, c := range []struct {
		in    string
		v, ok bool
	}{
		{"true", true, true}, {"TRUE", true, true}, {"tRuE", true, true}, {"1", true, true},
		{"false", false, true}, {"False", false, true}, {"0", false, true},
		{"", false, false}, {"yes", false, false}, {"t", false, false}, {"01", false, false},
		{" true", false, false}, {"fal\u017fe", false, false}, {"true\n", false, false},
	} {
		v, ok := parseBool(c.in)
		if v != c.v || ok != c.ok {
			t.Errorf("parseBool(%q) = %v, %v; want %v, %v", c.in, v, ok, c.v, c.ok)
		}
	}
}

func TestParseDuration(t *testing.T) {
	huge, _ := new(big.Int).SetString("99999999999999999999999999999999999999", 10)
	huge.Mul(huge, big.NewInt(86400))
	for _, c := range []struct {
		in   string
		want *big.Int // nil for missing
	}{
		{"2:00:00", big.NewInt(7200)}, {"02:00:01", big.NewInt(7201)}, {"0:00:00", big.NewInt(0)},
		{"1 day, 0:00:00", big.NewInt(86400)}, {"2 days, 1:02:03", big.NewInt(2*86400 + 3723)},
		{"0 days, 2:00:00", big.NewInt(7200)}, {"1 days, 0:00:01", big.NewInt(86401)},
		{"1:99:99", big.NewInt(3600 + 99*60 + 99)},
		{"99999999999999999999999999999999999999 days, 0:00:00", huge},
		{"", nil}, {"2:00", nil}, {"123:00:00", nil}, {"2:0:00", nil}, {"2:00:0", nil},
		{"1 day 0:00:00", nil}, {"1 Day, 0:00:00", nil}, {"1 day,  0:00:00", nil}, {"-1 day, 0:00:00", nil},
		{" 2:00:00", nil}, {"2:00:00 ", nil}, {"2:00:00\n", nil}, {"7200", nil}, {"PT2H", nil},
	} {
		got, ok := parseDuration(c.in)
		if ok != (c.want != nil) || ok && got.Cmp(c.want) != 0 {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", c.in, got, ok, c.want)
		}
	}
}
