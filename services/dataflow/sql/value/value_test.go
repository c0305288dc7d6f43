package value

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"
)

func TestReadNumber(t *testing.T) {
	cases := []struct {
		in, out string // out "" when not a number
		scale   int32
	}{
		{"2034", "2034", 0}, {"2034.0", "2034.0", 1}, {"-5.25", "-5.25", 2}, {"02001", "2001", 0},
		{"-0", "0", 0}, {"0.000", "0.000", 3},
		{"123456789012345678", "123456789012345678", 0},
		{"1234567890123456789", "1234567890123456789", 0},                                            // 19 digits: big
		{"-99999999.000000000000000000000000000001", "-99999999.000000000000000000000000000001", 30}, // 38 digits
		{"-99999999999999999999999999999.000000000000000000001", "", 0},                              // 50 digits
		{strings.Repeat("9", 38), strings.Repeat("9", 38), 0}, {"-" + strings.Repeat("9", 38), "-" + strings.Repeat("9", 38), 0},
		{strings.Repeat("9", 39), "", 0}, {"1" + strings.Repeat("0", 38), "", 0}, {strings.Repeat("9", 2000), "", 0},
		{strings.Repeat("0", 50) + "1", "1", 0}, // leading zeros are not digits of the value
		{"0." + strings.Repeat("0", 37) + "1", "0." + strings.Repeat("0", 37) + "1", 38},
		{"0." + strings.Repeat("0", 38) + "1", "", 0}, {"0." + strings.Repeat("0", 39), "", 0}, // scale 39
		{"9." + strings.Repeat("9", 37), "9." + strings.Repeat("9", 37), 37}, {"99." + strings.Repeat("9", 37), "", 0},
		{"", "", 0}, {" ", "", 0}, {"+5", "", 0}, {"1e3", "", 0}, {"1.", "", 0}, {".5", "", 0},
		{"-", "", 0}, {"1,500", "", 0}, {"1.5.5", "", 0}, {"--1", "", 0}, {"2034 ", "", 0}, {"١٢", "", 0},
	}
	for _, c := range cases {
		d, ok := ReadNumber([]byte(c.in))
		if ok != (c.out != "") || ok && (d.String() != c.out || d.Scale() != c.scale) {
			t.Errorf("ReadNumber(%q) = %s (scale %d), %v; want %q scale %d", c.in, d, d.Scale(), ok, c.out, c.scale)
		}
	}
}

func TestReadBool(t *testing.T) {
	for in, want := range map[string]int{"true": 1, "TRUE": 1, "tRuE": 1, "1": 1, "false": 0, "False": 0, "0": 0,
		"": -1, "yes": -1, "t": -1, " true": -1, "truee": -1, "ſalse": -1, "2": -1, "01": -1} {
		v, ok := ReadBool([]byte(in))
		got := -1
		if ok {
			got = map[bool]int{true: 1, false: 0}[v]
		}
		if got != want {
			t.Errorf("ReadBool(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestReadDuration(t *testing.T) {
	for in, want := range map[string]string{
		"2:00:00": "7200", "02:00:01": "7201", "1:75:00": "8100", "1 day, 2:03:04": "93784", "0 days, 2:00:00": "7200",
		"99999999999999999999999999 days, 0:00:00":       "8639999999999999999999999913600",
		"1" + strings.Repeat("0", 33) + " days, 0:00:00": "864" + strings.Repeat("0", 35), // 38 digits
		"1" + strings.Repeat("0", 34) + " days, 0:00:00": "", "1" + strings.Repeat("0", 40) + " days, 0:00:00": "",
		"3:00": "", "123:00:00": "", " 3:00:00": "", "1 Day, 0:00:00": "", "1 days,0:00:00": "", "": "", "a:00:00": "",
		"1 day, 1:0a:00": "", "day, 1:00:00": "",
	} {
		d, ok := ReadDuration([]byte(in))
		if ok != (want != "") || ok && d.String() != want {
			t.Errorf("ReadDuration(%q) = %s, %v; want %q", in, d, ok, want)
		}
	}
}

func num(t *testing.T, s string) Dec {
	t.Helper()
	d, ok := ReadNumber([]byte(s))
	if !ok {
		t.Fatalf("bad number %q", s)
	}
	return d
}

// TestArithmetic checks every operation against math/big.Rat, across the
// int64 fast path, its overflow and the big.Int path.
func TestArithmetic(t *testing.T) {
	vals := []string{"0", "1", "-1", "2.5", "-0.75", "9223372036854775807", "-9223372036854775808", "922337203685477580.7",
		"99999999999999999999999.123", "0.000000000000000000001", "7", "3", "2000", "-2000", "-2.5", "92233720368547758.07"}
	rat := func(s string) *big.Rat { r, _ := new(big.Rat).SetString(s); return r }
	for _, a := range vals {
		for _, b := range vals {
			x, y := num(t, a), num(t, b)
			ra, rb := rat(a), rat(b)
			check := func(op string, got Dec, want *big.Rat, scale int32) {
				if rat(got.String()).Cmp(want) != 0 || got.Scale() != scale {
					t.Errorf("%s %s %s = %s (scale %d), want %s (scale %d)", a, op, b, got, got.Scale(), want.FloatString(int(scale)), scale)
				}
			}
			check("+", x.Add(y), new(big.Rat).Add(ra, rb), max(x.Scale(), y.Scale()))
			check("-", x.Sub(y), new(big.Rat).Sub(ra, rb), max(x.Scale(), y.Scale()))
			check("*", x.Mul(y), new(big.Rat).Mul(ra, rb), x.Scale()+y.Scale())
			if got, want := x.Cmp(y), ra.Cmp(rb); got != want {
				t.Errorf("Cmp(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func TestDivAndFormat(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"1", "3", "0.3333"}, {"2", "3", "0.6667"}, {"-2", "3", "-0.6667"}, {"7", "2", "3.5000"}, {"1.00", "3", "0.333333"},
		{"1", "8", "0.1250"}, {"1", "-8", "-0.1250"}, {"5", "100000", "0.0001"}, {"-5", "100000", "-0.0001"}, {"4", "100000", "0.0000"},
		{"1", "0", ""}, {"99999999999999999999", "0.5", "199999999999999999998.0000"},
	} {
		d, ok := num(t, c.a).Div(num(t, c.b))
		if ok != (c.want != "") || ok && d.String() != c.want {
			t.Errorf("%s / %s = %s, %v; want %q", c.a, c.b, d, ok, c.want)
		}
	}
	for in, want := range map[string]string{"2034.000": "2034", "-0.50": "-0.5", "10": "10", "0.0": "0", "100000000000000000000.10": "100000000000000000000.1"} {
		if got := num(t, in).Normal().String(); got != want {
			t.Errorf("Normal(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestDivInt64: Div of two int64s (div64, no math/big) equals the
// big.Int path's quotient, value and form, at the edges of 64 bits and of
// the rounding, and allocates nothing.
func TestDivInt64(t *testing.T) {
	vals := []int64{0, 1, -1, 2, 3, -3, 5, 7, 199, 200, -200, 1999, 1e4, 99999, 1e14, 1e15 - 1, 922337203685477, 922337203685478,
		math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1 << 62, -(1 << 62), 12345678901234567}
	for x := int64(1); x < 1<<62; x = x*7 + 3 {
		vals = append(vals, x, -x)
	}
	for _, a := range vals {
		for _, b := range vals {
			if b == 0 {
				continue
			}
			for _, sa := range []int32{0, 1, 4} {
				for _, sb := range []int32{0, 2, 14, 15} {
					got, ok1 := FromUnscaled(a, sa).Div(FromUnscaled(b, sb))
					want, ok2 := Dec{b: big.NewInt(a), s: sa}.Div(Dec{b: big.NewInt(b), s: sb})
					if ok1 != ok2 || got.Cmp(want) != 0 || got.s != want.s || (got.b == nil) != (want.b == nil) {
						t.Fatalf("%d/10^%d / %d/10^%d = %v (%v), want %v (%v)", a, sa, b, sb, got, got.b != nil, want, want.b != nil)
					}
				}
			}
		}
	}
	x, y := Int(1600), Int(200)
	if n := testing.AllocsPerRun(100, func() { x.Div(y) }); n != 0 {
		t.Errorf("1600 / 200: %v allocations, want 0", n)
	}
}

// TestStddevSamp: the sample standard deviation of a count, a sum and a
// sum of squares, exact and rounded half away from zero to the sum's scale
// + 4; NULL for fewer than two values and past the bounds.
func TestStddevSamp(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   string
	}{
		{[]string{"1", "2", "4"}, "1.5275"},                          // √(7/3)
		{[]string{"2", "4", "4", "4", "5", "5", "7", "9"}, "2.1381"}, // √(32/7)
		{[]string{"1.5", "1.50"}, "0.000000"},
		{[]string{"0", "1"}, "0.7071"},            // √(1/2) = 0.70710678...
		{[]string{"0", "0.00011"}, "0.000077782"}, // 0.00011 / √2 = 0.0000777817459..., at scale 9
		{[]string{"-3", "-1"}, "1.4142"},
		{[]string{"0", "0.0001"}, "0.00007071"}, // half of the unit below rounds down
		{[]string{"1"}, ""},                     // fewer than two
		{nil, ""},
		{[]string{"1", "9999999999999999999.9"}, ""},                        // a square of 40 digits
		{[]string{"0.00000000000000000001", "0"}, ""},                       // a square of scale 40
		{[]string{"-1", "9999999999999999999"}, "7071067811865475244.0084"}, // 10^19 / √2: squares of 38 digits
	} {
		n, sum, squares := Int(int64(len(c.values))), Dec{}, Dec{}
		for _, v := range c.values {
			d := num(t, v)
			sum, squares = sum.Add(d), squares.Add(d.Mul(d))
		}
		got, ok := StddevSamp(n, sum, squares)
		if ok != (c.want != "") || ok && got.String() != c.want {
			t.Errorf("StddevSamp(%q) = %s, %v; want %q", c.values, got, ok, c.want)
		}
	}
	// Of two values of sum 0, the variance is their squares' sum: a root
	// of exactly half a unit (0.00005) rounds up, just below it down.
	for squares, want := range map[string]string{"0.0000000025": "0.0001", "0.0000000024": "0.0000"} {
		if got, ok := StddevSamp(Int(2), num(t, "0"), num(t, squares)); !ok || got.String() != want {
			t.Errorf("StddevSamp(2, 0, %s) = %s, %v; want %s", squares, got, ok, want)
		}
	}
}

// TestPercent: the q3 percentage is the reference's fmt.Sprintf("%.4f",
// float64(100*wins)/float64(played)), ties of the binary value included.
func TestPercent(t *testing.T) {
	for _, c := range [][2]int64{{412, 801}, {1, 3}, {2, 3}, {1, 128}, {3, 128}, {1, 32}, {0, 5}, {5, 5}, {1, 160000}, {123456789, 987654321}, {1 << 40, 3 << 41}} {
		want := fmt.Sprintf("%.4f", float64(100*c[0])/float64(c[1]))
		got, ok := Percent(Int(c[0]), Int(c[1]))
		if !ok || got.String() != want {
			t.Errorf("Percent(%d, %d) = %s, %v; want %s", c[0], c[1], got, ok, want)
		}
	}
	if _, ok := Percent(Int(1), Int(0)); ok {
		t.Error("Percent(1, 0) is not NULL")
	}
}

// TestUnscaledAt: a number's unscaled value at a scale at or above its
// own, while it fits an int64 (-2^63 does, 2^63 does not).
func TestUnscaledAt(t *testing.T) {
	cases := []struct {
		d     Dec
		scale int32
		want  int64
		ok    bool
	}{
		{FromUnscaled(2000, 0), 0, 2000, true}, {FromUnscaled(2000, 0), 2, 200000, true},
		{FromUnscaled(-15, 1), 3, -1500, true}, {FromUnscaled(15, 1), 0, 0, false},
		{FromUnscaled(2000, 0), 15, 2000e15, true}, {FromUnscaled(2000, 0), 16, 0, false},
		{FromUnscaled(-1<<63, 0), 0, -1 << 63, true}, {FromUnscaled(-1<<62, 0), 1, 0, false},
		{FromUnscaled(1, 0), 19, 0, false}, {FromUnscaled(1, 0), 18, 1e18, true},
	}
	for _, c := range cases {
		if got, ok := c.d.UnscaledAt(c.scale); got != c.want || ok != c.ok {
			t.Errorf("%s.UnscaledAt(%d) = %d, %v; want %d, %v", c.d, c.scale, got, ok, c.want, c.ok)
		}
	}
	wide := Int(1 << 62).Mul(Int(4)) // 2^64: not an int64
	if _, ok := wide.UnscaledAt(0); ok {
		t.Errorf("%s.UnscaledAt(0) fits an int64", wide)
	}
}

// BenchmarkReadNumber reads the numbers of the dataset's rating columns
// (an integer, one or two decimals), and one that is not a number.
func BenchmarkReadNumber(b *testing.B) {
	vals := [][]byte{[]byte("1432.0"), []byte("1411"), []byte("1465.5"), []byte("1599.25"), []byte("987"), []byte("n/a")}
	for b.Loop() {
		for _, v := range vals {
			ReadNumber(v)
		}
	}
}

// TestReadStored: the engine's own numbers (a SUM's running total) are
// read up to MaxStoredDigits digits, and no further.
func TestReadStored(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{strings.Repeat("9", MaxStoredDigits), true}, {"-" + strings.Repeat("9", MaxStoredDigits), true},
		{strings.Repeat("9", MaxStoredDigits+1), false}, {"0." + strings.Repeat("1", MaxStoredDigits), true},
		{"0." + strings.Repeat("1", MaxStoredDigits+1), false}, {"1e3", false},
	} {
		d, ok := ReadStored([]byte(c.in))
		if ok != c.ok || ok && d.String() != c.in {
			t.Errorf("ReadStored(%q) = %s, %v; want %v", c.in, d, ok, c.ok)
		}
	}
}

// TestFits: at most MaxDigits digits at the number's scale, on the int64
// path and the big.Int path, and what the arithmetic makes of the widest
// numbers.
func TestFits(t *testing.T) {
	nines := num(t, strings.Repeat("9", MaxDigits))
	tiny := num(t, "0."+strings.Repeat("0", MaxDigits-1)+"1")
	for _, c := range []struct {
		name string
		d    Dec
		fits bool
	}{
		{"0", Dec{}, true}, {"an int64", Int(-1 << 63), true},
		{"scale 38 on the int64 path", FromUnscaled(5, MaxDigits), true},
		{"scale 39 on the int64 path", FromUnscaled(5, MaxDigits+1), false},
		{"38 nines", nines, true}, {"-38 nines", nines.Neg(), true},
		{"38 nines + 1", nines.Add(Int(1)), false}, {"-38 nines - 1", nines.Neg().Sub(Int(1)), false},
		{"38 nines - 1", nines.Sub(Int(1)), true},
		{"38 nines × 38 nines", nines.Mul(nines), false}, {"38 nines × 1.0", nines.Mul(num(t, "1.0")), false},
		{"38 nines × 0.1", nines.Mul(num(t, "0.1")), true},
		{"10^-38 × 10^-38", tiny.Mul(tiny), false}, {"10^-38 × 1", tiny.Mul(Int(1)), true},
		{"1 / 3 at scale 34", mustDiv(t, FromUnscaled(1, MaxDigits-DivScale), Int(3)), true},
		{"1 / 3 at scale 35", mustDiv(t, FromUnscaled(1, MaxDigits-DivScale+1), Int(3)), false},
		{"38 nines / 0.5", mustDiv(t, nines, num(t, "0.5")), false},
	} {
		if got := c.d.Fits(); got != c.fits {
			t.Errorf("%s: %s (scale %d) Fits = %v, want %v", c.name, c.d, c.d.Scale(), got, c.fits)
		}
	}
	// Percent of numbers that fit can be past the bound: a double of
	// 10^40 is written with 41 digits and four decimals.
	if d, ok := Percent(nines, tiny); ok {
		t.Errorf("Percent(38 nines, 10^-38) = %s, want false", d)
	}
}

func mustDiv(t *testing.T, a, b Dec) Dec {
	t.Helper()
	d, ok := a.Div(b)
	if !ok {
		t.Fatalf("%s / %s: false", a, b)
	}
	return d
}

var numberSyntax = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// FuzzReadNumber: ReadNumber reads exactly the texts of the number syntax
// whose value has at most MaxDigits digits at their scale (counted here
// with math/big.Rat), as the value of the text at its scale, and never
// panics; ReadStored the same up to MaxStoredDigits.
func FuzzReadNumber(f *testing.F) {
	for _, s := range []string{"2034", "2034.0", "-5.25", "-0", "0.000", "1.", ".5", "+5", "1e3", "--1", "",
		strings.Repeat("9", 38), strings.Repeat("9", 39), "0." + strings.Repeat("0", 38), strings.Repeat("0", 60) + "7",
		"-99999999999999999999999999999.000000000000000000001", "1234567890123456789"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range []struct {
			read  func([]byte) (Dec, bool)
			limit int
		}{{ReadNumber, MaxDigits}, {ReadStored, MaxStoredDigits}} {
			d, ok := c.read([]byte(s))
			want := false
			var r *big.Rat
			scale := 0
			if numberSyntax.MatchString(s) {
				r, _ = new(big.Rat).SetString(s)
				if i := strings.IndexByte(s, '.'); i >= 0 {
					scale = len(s) - i - 1
				}
				unscaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
				width := len(new(big.Int).Abs(unscaled.Num()).String())
				if unscaled.Sign() == 0 {
					width = 0
				}
				want = scale <= c.limit && width <= c.limit
			}
			if ok != want {
				t.Fatalf("read(%q) ok = %v, want %v (limit %d)", s, ok, want, c.limit)
			}
			if !ok {
				continue
			}
			if got, _ := new(big.Rat).SetString(d.String()); got.Cmp(r) != 0 || d.Scale() != int32(scale) {
				t.Fatalf("read(%q) = %s scale %d, want the value at scale %d", s, d, d.Scale(), scale)
			}
			if c.limit == MaxDigits && !d.Fits() {
				t.Fatalf("ReadNumber(%q) = %s, which does not Fit", s, d)
			}
		}
	})
}

// TestAvg: AVG's result is DuckDB's (a DOUBLE, the exact quotient rounded
// once) written as DuckDB writes it (the shortest text that reads back,
// "2.0" for a whole number), its exponent aside: DuckDB's texts of these
// sums and counts, taken with its Go module (tools/duckdb). An AVG of
// 15-decimal values used to be written with 19 decimals (the division
// rule: the sum's scale + 4).
func TestAvg(t *testing.T) {
	for _, c := range []struct {
		sum   string
		count int64
		want  string // DuckDB's text, where it differs as its note says
	}{
		{"4", 2, "2.0"},
		{"3.0", 2, "1.5"},
		{"0.323456789012345", 2, "0.1617283945061725"}, // AVG of DECIMAL(18,15) values
		{"5", 3, "1.6666666666666667"},
		{"-3.000000", 2, "-1.5"},
		{"0.002000", 2, "0.001"},
		{"0.000200", 2, "0.0001"},
		{"0.000020", 2, "0.00001"},                                            // DuckDB: 1e-05
		{"2000000000000000", 2, "1000000000000000.0"},                         //
		{"20000000000000000", 2, "10000000000000000.0"},                       // DuckDB: 1e+16
		{"0", 5, "0.0"},                                                       //
		{"1486733035935001185500", 1000000000000000000, "1486.7330359350012"}, // a sum past 2^53: the exact quotient, rounded once
		{"99999999999999999999999999999999999999", 3, "33333333333333333000000000000000000000.0"}, // DuckDB: 3.3333333333333333e+37; past MaxDigits
	} {
		got, ok := Avg(num(t, c.sum), c.count)
		if !ok || got.String() != c.want {
			t.Errorf("Avg(%s, %d) = %s, %v; want %s", c.sum, c.count, got, ok, c.want)
		}
	}
	if d, ok := Avg(num(t, "99999999999999999999999999999999999999"), 3); !ok || d.Fits() {
		t.Errorf("Avg of 38 nines by 3 = %s, %v: want a number that does not Fit (a NULL answer)", d, ok)
	}
	if _, ok := Avg(Int(1), 0); ok {
		t.Error("Avg of no values is not NULL")
	}
}
