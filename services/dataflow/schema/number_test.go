package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

func mustNumber(t testing.TB, s string) Number {
	t.Helper()
	n, ok := ParseNumber([]byte(s))
	if !ok {
		t.Fatalf("ParseNumber(%q) refused", s)
	}
	return n
}

func TestParseNumber(t *testing.T) {
	accept := []struct {
		in, canon string
		fast      bool
		units     int64
	}{
		{"0", "0", true, 0},
		{"-0", "0", true, 0},
		{"-0.000", "0", true, 0},
		{"007", "7", true, 7_000_000},
		{"2034", "2034", true, 2034_000_000},
		{"2034.0", "2034", true, 2034_000_000},
		{"2034.50", "2034.5", true, 2034_500_000},
		{"-1.5", "-1.5", true, -1_500_000},
		{"0.000001", "0.000001", true, 1},
		{"-0.000001", "-0.000001", true, -1},
		{"0.0000010000", "0.000001", true, 1},
		{"2000.0000001", "2000.0000001", false, 0},
		{"99999999999.999999", "99999999999.999999", true, 99999999999_999999},
		{"-99999999999.999999", "-99999999999.999999", true, -99999999999_999999},
		{"000099999999999", "99999999999", true, 99999999999_000000},
		{"100000000000", "100000000000", false, 0},
		{"-100000000000.5", "-100000000000.5", false, 0},
		{"123456789012345678901234567890.123456789", "123456789012345678901234567890.123456789", false, 0},
		{"0.1234567", "0.1234567", false, 0},
	}
	for _, tc := range accept {
		n, ok := ParseNumber([]byte(tc.in))
		if !ok {
			t.Errorf("ParseNumber(%q) refused", tc.in)
			continue
		}
		if got := n.String(); got != tc.canon {
			t.Errorf("ParseNumber(%q).String() = %q, want %q", tc.in, got, tc.canon)
		}
		if u, fast := n.Units(); fast != tc.fast || u != tc.units {
			t.Errorf("ParseNumber(%q).Units() = %d, %v; want %d, %v", tc.in, u, fast, tc.units, tc.fast)
		}
	}
	for _, in := range []string{"", "-", "1.", ".5", "-.5", "+1", " 1", "1 ", "1e3", "1E3", "1,5", "1.2.3", "--1", "0x10",
		"NaN", "Inf", "1_000", "١", "1.-5", "- 1", "1\n", "2034.0 "} {
		if n, ok := ParseNumber([]byte(in)); ok {
			t.Errorf("ParseNumber(%q) = %v, want refused", in, n)
		}
	}
}

func TestNumberCompare(t *testing.T) {
	n := func(s string) Number { return mustNumber(t, s) }
	cmps := []struct {
		a, b string
		want int
	}{
		{"2000", "2000.0000001", -1},
		{"2000.0000001", "2000", 1},
		{"2000", "2000.000", 0},
		{"-0", "0", 0},
		{"-1", "0", -1},
		{"-2000.0000001", "-2000", -1},
		{"100000000000", "99999999999.999999", 1},
		{"-100000000000", "-99999999999.999999", -1},
		{"0.0000001", "0", 1},
		{"-0.0000001", "0", -1},
		{"-0.0000001", "0.000001", -1},
		{"12345678901234567890.5", "12345678901234567890.49", 1},
		{"12345678901234567890", "1234567890123456789", 1},
	}
	for _, tc := range cmps {
		if got := n(tc.a).Cmp(n(tc.b)); got != tc.want {
			t.Errorf("%s Cmp %s = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	ints := []struct {
		a    string
		k    int64
		want int
	}{
		{"2000", 2000, 0},
		{"2000.0000001", 2000, 1},
		{"2000.000001", 2000, 1},
		{"1999.999999", 2000, -1},
		{"1000", 1000, 0},
		{"1000.5", 1000, 1},
		{"-5", -5, 0},
		{"0", 0, 0},
		{"-0.5", 0, -1},
		{"5", math.MaxInt64, -1},
		{"5", math.MinInt64, 1},
		{"-99999999999.999999", -100000000000, 1},
		{"99999999999.999999", 100000000000, -1},
		{"9223372036854775807", math.MaxInt64, 0},
		{"9223372036854775807.1", math.MaxInt64, 1},
		{"-9223372036854775808", math.MinInt64, 0},
		{"-9223372036854775808.5", math.MinInt64, -1},
		{"0.0000001", 0, 1},
	}
	for _, tc := range ints {
		if got := n(tc.a).CmpInt(tc.k); got != tc.want {
			t.Errorf("%s CmpInt %d = %d, want %d", tc.a, tc.k, got, tc.want)
		}
	}
	muls := []struct {
		ka   int64
		a    string
		kb   int64
		b    string
		want int
	}{
		{10, "700", 7, "1000", 0}, // exactly 30% below: qualifies (<= 0)
		{10, "700.000001", 7, "1000", 1},
		{10, "699.999999", 7, "1000", -1},
		{10, "700.0000001", 7, "1000", 1},
		{10, "700", 7, "1000.0000001", -1},
		{10, "1001", 7, "1430", 0},
		{10, "-5", 7, "-5", -1},
		{0, "5", 0, "-7", 0},
		{math.MaxInt64, "99999999999.999999", math.MaxInt64, "99999999999.999998", 1},
		{math.MinInt64, "99999999999.999999", math.MinInt64, "99999999999.999998", -1},
		{3, "123456789012345678901234567890", 2, "185185183518518518351851851835", 0},
		{3, "0.3333333333", 1, "0.9999999999", 0},
		{3, "0.3333333333", 1, "1", -1},
	}
	for _, tc := range muls {
		if got := MulCmp(tc.ka, n(tc.a), tc.kb, n(tc.b)); got != tc.want {
			t.Errorf("MulCmp(%d, %s, %d, %s) = %d, want %d", tc.ka, tc.a, tc.kb, tc.b, got, tc.want)
		}
	}
}

func TestNumberFromUnits(t *testing.T) {
	cases := map[int64]string{
		0:                    "0",
		1:                    "0.000001",
		-1:                   "-0.000001",
		2034_500_000:         "2034.5",
		99999999999_999999:   "99999999999.999999",
		100000000000_000000:  "100000000000",
		-100000000000_000001: "-100000000000.000001",
		math.MaxInt64:        "9223372036854.775807",
		math.MinInt64:        "-9223372036854.775808",
	}
	for u, want := range cases {
		n := NumberFromUnits(u)
		if n.String() != want {
			t.Errorf("NumberFromUnits(%d) = %s, want %s", u, n, want)
		}
		parsed := mustNumber(t, want)
		if n.Cmp(parsed) != 0 {
			t.Errorf("NumberFromUnits(%d) != ParseNumber(%q)", u, want)
		}
		// Canonical: the same form as parsing gives.
		pu, pfast := parsed.Units()
		nu, nfast := n.Units()
		if pu != nu || pfast != nfast {
			t.Errorf("NumberFromUnits(%d).Units() = %d, %v; parsed %d, %v", u, nu, nfast, pu, pfast)
		}
	}
}

func TestNumberNoAllocs(t *testing.T) {
	in := []byte("2034.25")
	a, b := mustNumber(t, "700"), mustNumber(t, "1000")
	var buf [32]byte
	allocs := testing.AllocsPerRun(100, func() {
		n, _ := ParseNumber(in)
		_ = n.Cmp(a) + n.CmpInt(2000) + MulCmp(10, a, 7, b)
		_ = n.Append(buf[:0])
	})
	if allocs != 0 {
		t.Fatalf("fast path allocates %.1f times", allocs)
	}
}

// ---- property and fuzz tests against math/big ----

var numberRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

func ratOf(t testing.TB, s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("big.Rat refuses %q", s)
	}
	return r
}

// randomDecimal returns decimal text, short or very long, with leading
// and trailing zeros now and then, near the fast path's limits.
func randomDecimal(rng *rand.Rand) string {
	var b strings.Builder
	if rng.IntN(2) == 0 {
		b.WriteByte('-')
	}
	digits := func(n int) {
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
	}
	lengths := []int{1, 2, 4, 6, 7, 10, 11, 12, 13, 18, 19, 20, 40, 300}
	if rng.IntN(4) == 0 {
		b.WriteString(strings.Repeat("0", rng.IntN(3)))
	}
	digits(lengths[rng.IntN(len(lengths))])
	if rng.IntN(3) != 0 {
		b.WriteByte('.')
		digits(lengths[rng.IntN(len(lengths))])
		if rng.IntN(4) == 0 {
			b.WriteString(strings.Repeat("0", 1+rng.IntN(3)))
		}
	}
	s := b.String()
	if rng.IntN(5) == 0 { // a small value, often equal to another
		s = []string{"0", "-0", "700", "1000", "1000.0", "999.9999999", "2000", "2000.000001", "-0.000001"}[rng.IntN(9)]
	}
	return s
}

func checkNumberPair(t testing.TB, sa, sb string, ka, kb int64) {
	a, b := mustNumber(t, sa), mustNumber(t, sb)
	ra, rb := ratOf(t, sa), ratOf(t, sb)
	if got, want := a.Cmp(b), ra.Cmp(rb); got != want {
		t.Fatalf("%s Cmp %s = %d, big.Rat says %d", sa, sb, got, want)
	}
	ka_, kb_ := new(big.Rat).SetInt64(ka), new(big.Rat).SetInt64(kb)
	want := new(big.Rat).Mul(ka_, ra).Cmp(new(big.Rat).Mul(kb_, rb))
	if got := MulCmp(ka, a, kb, b); got != want {
		t.Fatalf("MulCmp(%d, %s, %d, %s) = %d, big.Rat says %d", ka, sa, kb, sb, got, want)
	}
	if got, want := a.CmpInt(kb), ra.Cmp(kb_); got != want {
		t.Fatalf("%s CmpInt %d = %d, big.Rat says %d", sa, kb, got, want)
	}
}

func TestNumberAgainstBigRat(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	ks := []int64{1, 7, 10, 3, 0, -1, -7, 1_000_000, math.MaxInt64, math.MinInt64}
	for range 20000 {
		sa, sb := randomDecimal(rng), randomDecimal(rng)
		checkNumberPair(t, sa, sb, ks[rng.IntN(len(ks))], ks[rng.IntN(len(ks))])
		if rng.IntN(2) == 0 { // compare a value with its own canonical form
			checkNumberPair(t, sa, mustNumber(t, sa).String(), 10, 10)
		}
	}
}

func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"2034", "2034.0", "-0", "007", "1.", ".5", "+1", " 1", "1e3", "2000.0000001",
		"99999999999.999999", "100000000000", "-123456789012345678901234567890.000000000100"} {
		f.Add([]byte(s), "700", int64(10), int64(7))
	}
	f.Fuzz(func(t *testing.T, b []byte, other string, ka, kb int64) {
		n, ok := ParseNumber(b)
		if ok != numberRE.Match(b) {
			t.Fatalf("ParseNumber(%q) ok = %v, want %v", b, ok, !ok)
		}
		if !ok {
			if n != (Number{}) {
				t.Fatalf("refused %q but returned %v", b, n)
			}
			return
		}
		s := n.String()
		back, ok := ParseNumber([]byte(s))
		if !ok || back.Cmp(n) != 0 || back.String() != s {
			t.Fatalf("%q: String %q does not round-trip", b, s)
		}
		if r := ratOf(t, string(b)); r.Cmp(ratOf(t, s)) != 0 {
			t.Fatalf("%q: String %q has another value", b, s)
		}
		// The fast path holds exactly the values with at most 6 fractional
		// digits and |value| < 10^11, as value × 10^6.
		r := ratOf(t, s)
		scaled := new(big.Rat).Mul(r, big.NewRat(1_000_000, 1))
		wantFast := scaled.IsInt() && new(big.Rat).Abs(r).Cmp(big.NewRat(100_000_000_000, 1)) < 0
		if u, fast := n.Units(); fast != wantFast || (fast && scaled.Num().Int64() != u) {
			t.Fatalf("%q: Units() = %d, %v", b, u, fast)
		}
		if numberRE.MatchString(other) {
			checkNumberPair(t, string(b), other, ka, kb)
		}
	})
}

func ExampleMulCmp() {
	winner, _ := ParseNumber([]byte("700"))
	loser, _ := ParseNumber([]byte("1000.0"))
	// The winner's rating is at least 30% below the loser's.
	fmt.Println(winner.CmpInt(1000) > 0, MulCmp(10, winner, 7, loser) <= 0)
	// Output: false true
}

func BenchmarkParseNumber(b *testing.B) {
	inputs := [][]byte{[]byte("2034"), []byte("1040.0"), []byte("1523.333333"), []byte(""), []byte("-12")}
	b.ReportAllocs()
	for b.Loop() {
		for _, in := range inputs {
			ParseNumber(in)
		}
	}
}

func BenchmarkMulCmp(b *testing.B) {
	w, l := NumberFromUnits(700_000_000), NumberFromUnits(1000_000_000)
	b.ReportAllocs()
	for b.Loop() {
		MulCmp(10, w, 7, l)
	}
}

func TestNumberText(t *testing.T) {
	type row struct{ Rating Number }
	for _, s := range []string{"0", "2034.5", "-1", "123456789012345678901234567890.000000000001"} {
		b, err := json.Marshal(row{mustNumber(t, s)})
		if err != nil || string(b) != `{"Rating":"`+s+`"}` {
			t.Fatalf("json.Marshal(%s) = %s, %v", s, b, err)
		}
		var back row
		if err := json.Unmarshal(b, &back); err != nil || back.Rating.String() != s {
			t.Fatalf("json.Unmarshal(%s) = %v, %v", b, back.Rating, err)
		}
	}
	var n Number
	if err := n.UnmarshalText([]byte("1e3")); err == nil || !strings.Contains(err.Error(), `"1e3"`) {
		t.Fatalf("UnmarshalText(1e3) err = %v", err)
	}
}
