package value

import "testing"

// TestRem: PostgreSQL's and DuckDB's remainder, of the dividend's sign
// at the larger scale; none by zero.
func TestRem(t *testing.T) {
	wide := "123456789012345678901234567.5"
	for _, c := range []struct{ a, b, want string }{
		{"7", "3", "1"}, {"-7", "3", "-1"}, {"7", "-3", "1"}, {"-7", "-3", "-1"},
		{"7.5", "2", "1.5"}, {"10.0", "3", "1.0"}, {"5.25", "0.5", "0.25"}, {"6", "1.5", "0.0"},
		{"5", "0", ""}, {"5", "0.00", ""}, {"-9223372036854775808", "-1", "0"},
		{wide, "10", "7.5"}, {"-" + wide, "10", "-7.5"}, {"10", wide, "10.0"},
	} {
		d, ok := num(t, c.a).Rem(num(t, c.b))
		if ok != (c.want != "") || ok && d.String() != c.want {
			t.Errorf("%s %% %s = %s, %v; want %q", c.a, c.b, d, ok, c.want)
		}
	}
}

// TestCasts: a number cast to an integer type rounds half away from
// zero, as DuckDB's cast of a DECIMAL (2.5 is 3), within the type's
// range; to a DECIMAL(p, s) it rounds or widens to scale s, within p
// digits.
func TestCasts(t *testing.T) {
	for _, c := range []struct {
		a    string
		bits int32
		want string
	}{
		{"2.5", 32, "3"}, {"-2.5", 32, "-3"}, {"1.49", 64, "1"}, {"7", 16, "7"}, {"32767.4", 16, "32767"},
		{"32767.5", 16, ""}, {"-32768", 16, "-32768"}, {"2147483648", 32, ""}, {"-2147483648.4", 32, "-2147483648"},
		{"9223372036854775807", 64, "9223372036854775807"}, {"9223372036854775807.5", 64, ""}, {"1", 8, ""},
	} {
		d, ok := num(t, c.a).CastInt(c.bits)
		if ok != (c.want != "") || ok && d.String() != c.want {
			t.Errorf("CastInt(%s, %d) = %s, %v; want %q", c.a, c.bits, d, ok, c.want)
		}
	}
	for _, c := range []struct {
		a    string
		p, s int32
		want string
	}{
		{"1.255", 5, 2, "1.26"}, {"-1.255", 5, 2, "-1.26"}, {"1.5", 10, 3, "1.500"}, {"2.5", 3, 0, "3"},
		{"999.995", 5, 2, ""}, {"999.994", 5, 2, "999.99"}, {"0.5", 1, 1, "0.5"}, {"1", 1, 1, ""}, {"1", 39, 0, ""}, {"1", 2, 3, ""},
		{"-99999", 5, 0, "-99999"}, {"-100000", 5, 0, ""}, {"12345678901234567890", 20, 0, "12345678901234567890"}, {"123456789012345678901", 20, 0, ""}, {"1.5", 19, 18, "1.500000000000000000"},
	} {
		d, ok := num(t, c.a).CastDecimal(c.p, c.s)
		if ok != (c.want != "") || ok && d.String() != c.want {
			t.Errorf("CastDecimal(%s, %d, %d) = %s, %v; want %q", c.a, c.p, c.s, d, ok, c.want)
		}
	}
}
