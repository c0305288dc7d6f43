package exec

import "testing"

// TestDoubledGrowth: a slice under largeGrowth bytes at least doubles
// its capacity when it grows, one past it grows by about a quarter
// (standing state lives in a few such slices: doubling left up to half
// of each unused), and either has room for what is asked.
func TestDoubledGrowth(t *testing.T) {
	for _, c := range []struct {
		name     string
		cap, n   int
		min, max int // the capacity after, bounds
	}{
		{"small: doubled", 1000, 1, 2000, 3000},
		{"small, more asked than doubling gives", 1000, 5000, 6000, 7000},
		{"just under the threshold: doubled", largeGrowth/8 - 1, 1, 2 * (largeGrowth/8 - 1), 3 * largeGrowth / 8},
		{"large: a quarter", largeGrowth / 8, 1, largeGrowth/8 + largeGrowth/32, largeGrowth/8 + largeGrowth/16},
		{"large, more asked than a quarter", largeGrowth / 8, largeGrowth / 4, 3 * largeGrowth / 8, largeGrowth / 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := make([]int64, c.cap) // 8 bytes a value
			got := cap(doubled(s, c.n))
			if got < c.min || got > c.max {
				t.Fatalf("cap %d, %d more: %d, want %d..%d", c.cap, c.n, got, c.min, c.max)
			}
		})
	}
}
