package schema

import (
	"strings"
	"testing"
)

// TestMalformedLimitExceeded: the rule a job is failed by at the end of a
// file, at its edges: a small file's few bad rows are tolerated, a file of
// nothing but bad rows never is (below a limit of 1), a limit of 0
// tolerates none, a limit of 1 all.
func TestMalformedLimitExceeded(t *testing.T) {
	for _, c := range []struct {
		limit           MalformedLimit
		rows, malformed int64
		want            bool
	}{
		{0.1, 0, 0, false},             // an empty file
		{0.1, 10000, 0, false},         // a clean one
		{0.1, 10000, 1000, false},      // at the limit
		{0.1, 10000, 1001, true},       // past it
		{0.1, 10000, 9812, true},       // nearly all garbage
		{0.1, 3, 1, false},             // a typo in a small file: under the grace count
		{0.1, 3, 2, false},             // still
		{0.1, 3, 3, true},              // all garbage, however small
		{0.1, 1, 1, true},              // one record, malformed
		{0.1, 50, 10, false},           // 20%, but only MalformedGrace records
		{0.1, 50, 11, true},            // 22%, past the grace count
		{0.1, 200, 11, false},          // past the grace count, under the share
		{0.5, 100, 50, false},          // at a looser limit
		{0.5, 100, 51, true},           // past it
		{0, 1000000, 1, true},          // 0: not one tolerated
		{0, 1000000, 0, false},         // nor needed
		{1, 1000, 1000, false},         // 1: no limit, even all garbage
		{1, 1, 1, false},               // still
		{0.1, 1 << 40, 1 << 36, false}, // 6.25% of a very large file
		{0.1, 1 << 40, 1 << 38, true},  // 25% of it
	} {
		if got := c.limit.Exceeded(c.rows, c.malformed); got != c.want {
			t.Errorf("limit %v, %d of %d malformed: Exceeded = %v, want %v", float64(c.limit), c.malformed, c.rows, got, c.want)
		}
	}
}

func TestMalformedLimitValid(t *testing.T) {
	for _, l := range []float64{0, 0.1, 0.5, 1} {
		if err := MalformedLimit(l).Valid(); err != nil {
			t.Errorf("%v: %v", l, err)
		}
	}
	nan := 0.0
	nan /= nan
	for _, l := range []float64{-0.1, 1.5, 10, nan} {
		if err := MalformedLimit(l).Valid(); err == nil || !strings.Contains(err.Error(), "--max-malformed") {
			t.Errorf("%v: %v, want an error naming --max-malformed", l, err)
		}
	}
}

// TestMalformedLimitCheck: the message says which file, how many of how
// many, the share, the limit, and the first bad record.
func TestMalformedLimitCheck(t *testing.T) {
	r := FileReport{Rows: 10000, Malformed: 9812}
	r.AddReject(1234, RejectFieldCount, []byte("garbage;with;semicolons\n"))
	err := MalformedLimit(0.1).Check(Matches, r)
	want := `matches.csv: 9,812 of 10,000 records malformed (98.1%), more than --max-malformed 10%; first at byte 1234 (field-count): "garbage;with;semicolons\n"`
	if err == nil || err.Error() != want {
		t.Errorf("Check = %v\nwant %s", err, want)
	}
	if err := MalformedLimit(0.1).Check(Players, FileReport{Rows: 10000, Malformed: 1000}); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	if err := MalformedLimit(0.25).Check(Players, FileReport{Rows: 3, Malformed: 3}); err == nil || err.Error() != "match_players.csv: 3 of 3 records malformed (100%), more than --max-malformed 25%" {
		t.Errorf("no reject listed: %v", err)
	}
}

// TestAddRejectIsBounded: at most MaxRejectsListed records, at most
// RejectHeadBytes of each, copied.
func TestAddRejectIsBounded(t *testing.T) {
	var r FileReport
	rec := []byte(strings.Repeat("x", 200))
	for i := range MaxRejectsListed + 5 {
		r.AddReject(int64(i), RejectQuoting, rec)
	}
	if len(r.Rejects) != MaxRejectsListed {
		t.Fatalf("%d listed, want %d", len(r.Rejects), MaxRejectsListed)
	}
	rec[0] = 'y'
	if h := r.Rejects[0].Head; len(h) != RejectHeadBytes || h[0] != 'x' {
		t.Errorf("head %q: want %d bytes of the record as it was", h, RejectHeadBytes)
	}
	for _, n := range []int64{0, 7, 999, 1000, 12345, 1234567, -1234} {
		want := map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 12345: "12,345", 1234567: "1,234,567", -1234: "-1,234"}[n]
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
