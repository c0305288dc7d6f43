package gateway

import "math"

// sumSizes adds byte counts (declared file sizes, offsets, chunk lengths)
// and reports whether the sum is a size: false if any count is negative or
// the sum overflows int64. Every sum of sizes on the job path goes through
// it, so that no quota or "more than declared" comparison is ever made
// against a sum that wrapped around to a small or negative number (two
// files declared as 2^63-1 bytes each add up to -2).
func sumSizes(sizes ...int64) (int64, bool) {
	var sum int64
	for _, s := range sizes {
		if s < 0 || s > math.MaxInt64-sum {
			return 0, false
		}
		sum += s
	}
	return sum, true
}
