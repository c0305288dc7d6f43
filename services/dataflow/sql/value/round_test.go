package value

import "testing"

// TestRound pins ROUND (half away from zero), FLOOR and CEIL of exact
// decimals, on the int64 path and the big one, and Abs.
func TestRound(t *testing.T) {
	big := "123456789012345678901234567.5"
	cases := []struct {
		x      string
		digits int32
		mode   Rounding
		want   string
	}{
		{"2.5", 0, HalfAway, "3"},
		{"-2.5", 0, HalfAway, "-3"},
		{"2.49", 0, HalfAway, "2"},
		{"2.567", 2, HalfAway, "2.57"},
		{"-2.565", 2, HalfAway, "-2.57"},
		{"12.3", 5, HalfAway, "12.3"},
		{"1250", -2, HalfAway, "1300"},
		{"-1249.9", -2, HalfAway, "-1200"},
		{"0.4", 0, HalfAway, "0"},
		{"-0.4", 0, HalfAway, "0"},
		{"2.1", 0, Floor, "2"},
		{"-2.1", 0, Floor, "-3"},
		{"-2.0", 0, Floor, "-2"},
		{"2.1", 0, Ceil, "3"},
		{"-2.9", 0, Ceil, "-2"},
		{"7", 0, Ceil, "7"},
		{big, 0, HalfAway, "123456789012345678901234568"},
		{"-" + big, 0, HalfAway, "-123456789012345678901234568"},
		{"-" + big, 0, Floor, "-123456789012345678901234568"},
		{big, 0, Floor, "123456789012345678901234567"},
		{"-" + big, 0, Ceil, "-123456789012345678901234567"},
		{"0.0000000000000000000000001", 0, Ceil, "1"},
	}
	for _, c := range cases {
		d, ok := ReadNumber([]byte(c.x))
		if !ok {
			t.Fatalf("ReadNumber(%q)", c.x)
		}
		if got := d.Round(c.digits, c.mode).String(); got != c.want {
			t.Errorf("Round(%s, %d, %d) = %s, want %s", c.x, c.digits, c.mode, got, c.want)
		}
	}
	for x, want := range map[string]string{"-2.50": "2.50", "3": "3", "-" + big: big, "0": "0"} {
		d, _ := ReadNumber([]byte(x))
		if got := d.Abs().String(); got != want {
			t.Errorf("Abs(%s) = %s, want %s", x, got, want)
		}
	}
}
