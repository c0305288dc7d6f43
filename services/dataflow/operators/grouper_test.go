package operators

import (
	"strings"
	"testing"
)

func q2Out(tokens ...string) []string {
	out := []string{}
	for _, t := range tokens {
		out = append(out, `token q2-tokens "`+t+`"`)
	}
	return out
}

func TestQ2Grouper(t *testing.T) {
	long := strings.Repeat("L", 40)
	cases := []struct {
		name    string
		batches [][]pr // each inner slice is one batch
		want    []string
	}{
		{"no rows", nil, q2Out()},
		// 10 × winner ≤ 7 × loser, exactly: 10×1400 = 7×2000.
		{"ratio exactly 10x = 7y qualifies", [][]pr{{{"m", "a", "1400", T}, {"m", "b", "2000", F}}}, q2Out("m")},
		{"ratio 10x700 = 7x1000 scaled by 1.5", [][]pr{{{"m", "a", "1050", T}, {"m", "b", "1500", F}}}, q2Out("m")},
		{"winner one unit too strong", [][]pr{{{"m", "a", "1400.000001", T}, {"m", "b", "2000", F}}}, q2Out()},
		{"loser one unit too weak", [][]pr{{{"m", "a", "1400", T}, {"m", "b", "1999.999999", F}}}, q2Out()},
		{"winner exactly 1000 does not qualify", [][]pr{{{"m", "a", "1000", T}, {"m", "b", "5000", F}}}, q2Out()},
		{"winner 1000.000001 qualifies", [][]pr{{{"m", "a", "1000.000001", T}, {"m", "b", "5000", F}}}, q2Out("m")},
		{"winner below 1000", [][]pr{{{"m", "a", "700", T}, {"m", "b", "1000", F}}}, q2Out()},
		{"winner stronger than loser", [][]pr{{{"m", "a", "2000", T}, {"m", "b", "1500", F}}}, q2Out()},
		{"loser listed first", [][]pr{{{"m", "b", "2000", F}, {"m", "a", "1400", T}}}, q2Out("m")},
		{"rows in two batches", [][]pr{{{"m", "a", "1400", T}}, {{"m", "b", "2000", F}}}, q2Out("m")},
		{"civ does not matter", [][]pr{{{"m", "", "1400", T}, {"m", "", "2000", F}}}, q2Out("m")},
		{"a third row disqualifies", [][]pr{{{"m", "a", "1400", T}, {"m", "b", "2000", F}, {"m", "c", "2000", F}}}, q2Out()},
		{"a third row in a later batch disqualifies", [][]pr{{{"m", "a", "1400", T}, {"m", "b", "2000", F}}, {{"m", "c", "", X}}}, q2Out()},
		{"four rows disqualify", [][]pr{{{"m", "a", "1400", T}, {"m", "b", "2000", F}}, {{"m", "a", "1400", T}, {"m", "b", "2000", F}}}, q2Out()},
		{"a single row", [][]pr{{{"m", "a", "1400", T}}}, q2Out()},
		{"two winners", [][]pr{{{"m", "a", "1400", T}, {"m", "b", "2000", T}}}, q2Out()},
		{"two losers", [][]pr{{{"m", "a", "1400", F}, {"m", "b", "2000", F}}}, q2Out()},
		{"winner rating missing", [][]pr{{{"m", "a", "", T}, {"m", "b", "2000", F}}}, q2Out()},
		{"loser rating missing", [][]pr{{{"m", "a", "1400", T}, {"m", "b", "", F}}}, q2Out()},
		{"winner flag missing", [][]pr{{{"m", "a", "1400", X}, {"m", "b", "2000", F}}}, q2Out()},
		{"loser flag missing", [][]pr{{{"m", "a", "1400", T}, {"m", "b", "2000", X}}}, q2Out()},
		{"wide ratings qualify", [][]pr{{{"m", "a", "123456789012345", T}, {"m", "b", "200000000000000", F}}}, q2Out("m")},
		{"wide ratings, exact boundary", [][]pr{{{"m", "a", "140000000000000.0000007", T}, {"m", "b", "200000000000000.000001", F}}}, q2Out("m")},
		{"wide ratings, just over", [][]pr{{{"m", "a", "140000000000000.0000008", T}, {"m", "b", "200000000000000.000001", F}}}, q2Out()},
		{"wide winner, fast loser", [][]pr{{{"m", "a", "1400.0000001", T}, {"m", "b", "2000.000001", F}}}, q2Out("m")},
		{"fast winner, wide loser", [][]pr{{{"m", "a", "1400.000001", T}, {"m", "b", "2000.0000015", F}}}, q2Out("m")},
		{"fast winner, wide loser just short", [][]pr{{{"m", "a", "1400.000001", T}, {"m", "b", "2000.0000014", F}}}, q2Out()},
		{"wide winner below 1000", [][]pr{{{"m", "a", "999.9999999", T}, {"m", "b", "5000", F}}}, q2Out()},
		{
			"matches are grouped apart",
			[][]pr{{{"m1", "a", "1400", T}, {"m2", "a", "1400", T}, {"m1", "b", "2000", F}, {"m2", "b", "1000", F}}},
			q2Out("m1"),
		},
		{
			"output sorted by byte value",
			[][]pr{
				{{"m10", "", "1100", T}, {"m2", "", "1100", T}, {"B", "", "1100", T}, {"a", "", "1100", T}, {"m1", "", "1100", T}},
				{{"m1", "", "9000", F}, {"a", "", "9000", F}, {"B", "", "9000", F}, {"m2", "", "9000", F}, {"m10", "", "9000", F}},
			},
			q2Out("B", "a", "m1", "m10", "m2"),
		},
		{
			"tokens around the short key length",
			[][]pr{{
				{strings.Repeat("x", 23), "", "1400", T}, {strings.Repeat("x", 24), "", "1400", T}, {long, "", "1400", T},
				{strings.Repeat("x", 23), "", "2000", F}, {strings.Repeat("x", 24), "", "2000", F}, {long, "", "2000", F},
			}},
			q2Out(long, strings.Repeat("x", 23), strings.Repeat("x", 24)),
		},
		{
			"a long token with a third row",
			[][]pr{{{long, "", "1400", T}, {long, "", "2000", F}, {long, "", "2000", F}}},
			q2Out(),
		},
		{
			"tokens differing by a trailing NUL are distinct",
			[][]pr{{{"a", "", "1400", T}, {"a\x00", "", "1400", T}, {"a", "", "2000", F}}},
			q2Out("a"),
		},
		{
			"empty token is a match like any other",
			[][]pr{{{"", "", "1400", T}, {"", "", "2000", F}}},
			q2Out(""),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewQ2Grouper()
			out := &fakeEmitter{}
			for _, b := range c.batches {
				apply(t, g, out, input{Q2Players, playerBatch(t, b...)})
			}
			sameCalls(t, "emitted before Finish", out.take(), nil)
			if err := g.Finish(out); err != nil {
				t.Fatal(err)
			}
			sameCalls(t, "emitted by Finish", out.take(), c.want)
		})
	}
}

func TestQ2Weaker(t *testing.T) {
	cases := []struct {
		name          string
		winner, loser string
		want          bool
	}{
		{"boundary", "1400", "2000", true},
		{"winner 1000", "1000", "2000", false},
		{"winner just above 1000", "1000.000001", "1428.571430", true},
		{"winner just above 1000, loser short", "1000.000001", "1428.571429", false},
		{"equal ratings", "1500", "1500", false},
		{"wide both", "1000.0000001", "1428.5714288", true},
		{"wide both, loser short", "1000.0000001", "1428.5714287", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, _ := num(t, c.winner)
			l, _ := num(t, c.loser)
			if got := Q2Weaker(w, l); got != c.want {
				t.Errorf("Q2Weaker(%s, %s) = %v, want %v", c.winner, c.loser, got, c.want)
			}
		})
	}
}
