package operators

import (
	"errors"
	"strings"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// q1 is a match that qualifies for Q1 and no other query; cases change one
// thing.
var q1 = mr{token: "t", ladder: "RM_1v1", mapName: "arena", server: "eastus", mirror: T, rating: "2001", duration: 7201}

func TestIsQ1(t *testing.T) {
	with := func(f func(r *mr)) mr { r := q1; f(&r); return r }
	cases := []struct {
		name  string
		match mr
		want  bool
	}{
		{"base case qualifies", q1, true},
		// average_rating > 2000, strictly.
		{"rating exactly 2000", with(func(r *mr) { r.rating = "2000" }), false},
		{"rating 2000.0 is 2000", with(func(r *mr) { r.rating = "2000.000" }), false},
		{"rating 2000.000001", with(func(r *mr) { r.rating = "2000.000001" }), true},
		{"rating 2000 plus 1e-10 (wide)", with(func(r *mr) { r.rating = "2000.0000000001" }), true},
		{"rating 2000 minus 1e-10 (wide)", with(func(r *mr) { r.rating = "1999.9999999999" }), false},
		{"rating 1999.999999", with(func(r *mr) { r.rating = "1999.999999" }), false},
		{"rating huge (wide)", with(func(r *mr) { r.rating = "123456789012345.1234567" }), true},
		{"rating negative", with(func(r *mr) { r.rating = "-3000" }), false},
		{"rating missing", with(func(r *mr) { r.rating = "" }), false},
		// duration > 7200 s, strictly.
		{"duration 7200", with(func(r *mr) { r.duration = 7200 }), false},
		{"duration 7201", with(func(r *mr) { r.duration = 7201 }), true},
		{"duration 7199", with(func(r *mr) { r.duration = 7199 }), false},
		{"duration one day", with(func(r *mr) { r.duration = 86400 }), true},
		{"duration missing", with(func(r *mr) { r.duration = -1 }), false},
		{"duration zero", with(func(r *mr) { r.duration = 0 }), false},
		// server in the list, exactly.
		{"server koreacentral", with(func(r *mr) { r.server = "koreacentral" }), true},
		{"server southeastasia", with(func(r *mr) { r.server = "southeastasia" }), true},
		{"server eastus", with(func(r *mr) { r.server = "eastus" }), true},
		{"server westeurope", with(func(r *mr) { r.server = "westeurope" }), false},
		{"server ukwest", with(func(r *mr) { r.server = "ukwest" }), false},
		{"server in other case", with(func(r *mr) { r.server = "EastUS" }), false},
		{"server with a space", with(func(r *mr) { r.server = "eastus " }), false},
		{"server prefix", with(func(r *mr) { r.server = "east" }), false},
		{"server empty", with(func(r *mr) { r.server = "" }), false},
		// Other columns do not matter.
		{"any ladder, map and mirror", with(func(r *mr) { r.ladder, r.mapName, r.mirror = "", "", X }), true},
		{"empty token", with(func(r *mr) { r.token = "" }), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := c.match.row(t)
			if got := IsQ1(&row); got != c.want {
				t.Errorf("IsQ1(%+v) = %v, want %v", c.match, got, c.want)
			}
		})
	}
}

// TestIsQ1MissingRatingIgnoresValue: a missing rating never qualifies, even
// if the Number field holds a large value.
func TestIsQ1MissingRatingIgnoresValue(t *testing.T) {
	row := q1.row(t)
	row.AverageRating, _ = num(t, "5000")
	row.HasAverageRating = false
	if IsQ1(&row) {
		t.Errorf("IsQ1 with HasAverageRating false = true, want false")
	}
}

func TestIsQ3AndQ4Match(t *testing.T) {
	cases := []struct {
		name           string
		ladder, map_   string
		mirror         batch.Tri
		wantQ3, wantQ4 bool
	}{
		{"1v1 arena not mirror", "RM_1v1", "arena", F, true, false},
		{"1v1 arena mirror", "RM_1v1", "arena", T, false, false},
		{"1v1 arena mirror missing", "RM_1v1", "arena", X, false, false},
		{"1v1 ladder lower case", "rm_1v1", "arena", F, false, false},
		{"arena capitalised", "RM_1v1", "Arena", F, false, false},
		{"arena with trailing space", "RM_1v1", "arena ", F, false, false},
		{"1v1 on islands", "RM_1v1", "islands", F, false, false},
		{"team islands", "RM_TEAM", "islands", F, false, true},
		{"team islands mirror", "RM_TEAM", "islands", T, false, true},
		{"team islands mirror missing", "RM_TEAM", "islands", X, false, true},
		{"team ladder lower case", "rm_team", "islands", F, false, false},
		{"islands capitalised", "RM_TEAM", "Islands", F, false, false},
		{"team on arena", "RM_TEAM", "arena", F, false, false},
		{"other ladder", "RM_TEAM_DM", "islands", F, false, false},
		{"empty ladder and map", "", "", F, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := mr{token: "t", ladder: c.ladder, mapName: c.map_, server: "eastus", mirror: c.mirror, rating: "2500", duration: 9000}.row(t)
			if got := IsQ3Match(&row); got != c.wantQ3 {
				t.Errorf("IsQ3Match = %v, want %v", got, c.wantQ3)
			}
			if got := IsQ4Match(&row); got != c.wantQ4 {
				t.Errorf("IsQ4Match = %v, want %v", got, c.wantQ4)
			}
		})
	}
}

func TestMatchesFilter(t *testing.T) {
	cases := []struct {
		name string
		rows []mr
		want []string
	}{
		{"empty batch", nil, nil},
		{
			"q1 only",
			[]mr{{"a", "RM_TEAM", "arena", "koreacentral", F, "2500", 7300}},
			[]string{`token q1-tokens "a"`},
		},
		{
			"q1 and q3, in stream order",
			[]mr{{"b", "RM_1v1", "arena", "eastus", F, "2500", 7300}},
			[]string{`token q1-tokens "b"`, `token q3-matches "b"`},
		},
		{
			"q1 and q4",
			[]mr{{"c", "RM_TEAM", "islands", "southeastasia", X, "2000.5", 86400}},
			[]string{`token q1-tokens "c"`, `token q4-matches "c"`},
		},
		{
			"none",
			[]mr{{"d", "RM_1v1", "arena", "westeurope", T, "", -1}},
			nil,
		},
		{
			"rows keep their order and duplicates",
			[]mr{
				{"z", "RM_1v1", "arena", "ukwest", F, "1000", 60},
				{"y", "RM_TEAM", "islands", "ukwest", F, "1000", 60},
				{"z", "RM_1v1", "arena", "ukwest", F, "1000", 60},
				{"x", "RM_1v1", "arena", "eastus", X, "2001", 7201},
			},
			[]string{`token q3-matches "z"`, `token q4-matches "y"`, `token q3-matches "z"`, `token q1-tokens "x"`},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var f MatchesFilter
			out := &fakeEmitter{}
			apply(t, &f, out, input{Matches, matchBatch(t, c.rows...)})
			if err := f.Finish(out); err != nil {
				t.Fatal(err)
			}
			sameCalls(t, "emitted", out.take(), c.want)
		})
	}
}

func TestPlayersFilter(t *testing.T) {
	cases := []struct {
		name string
		rows []pr
		want []string
	}{
		{"empty batch", nil, nil},
		{
			"every query, each with its own columns",
			[]pr{{"m1", "Aztecs", "2100", T}},
			[]string{
				`player q2-players match="m1" civ="" rating=2100 winner=true`,
				`player q3-players match="m1" civ="Aztecs" rating=missing winner=true`,
				`player q4-players match="m1" civ="Aztecs" rating=missing winner=missing`,
			},
		},
		{
			"rating exactly 2000 is not q4",
			[]pr{{"m1", "Aztecs", "2000", F}},
			[]string{
				`player q2-players match="m1" civ="" rating=2000 winner=false`,
				`player q3-players match="m1" civ="Aztecs" rating=missing winner=false`,
			},
		},
		{
			"rating 2000.000001 is q4",
			[]pr{{"m1", "Aztecs", "2000.000001", F}},
			[]string{
				`player q2-players match="m1" civ="" rating=2000.000001 winner=false`,
				`player q3-players match="m1" civ="Aztecs" rating=missing winner=false`,
				`player q4-players match="m1" civ="Aztecs" rating=missing winner=missing`,
			},
		},
		{
			"wide rating",
			[]pr{{"m1", "Celts", "123456789012345.1234567", T}},
			[]string{
				`player q2-players match="m1" civ="" rating=123456789012345.1234567 winner=true`,
				`player q3-players match="m1" civ="Celts" rating=missing winner=true`,
				`player q4-players match="m1" civ="Celts" rating=missing winner=missing`,
			},
		},
		{
			"rating missing: q2 and q3",
			[]pr{{"m1", "Aztecs", "", T}},
			[]string{
				`player q2-players match="m1" civ="" rating=missing winner=true`,
				`player q3-players match="m1" civ="Aztecs" rating=missing winner=true`,
			},
		},
		{
			"winner missing: q2 and q4",
			[]pr{{"m1", "Aztecs", "2500", X}},
			[]string{
				`player q2-players match="m1" civ="" rating=2500 winner=missing`,
				`player q4-players match="m1" civ="Aztecs" rating=missing winner=missing`,
			},
		},
		{
			"civ empty: q2 only",
			[]pr{{"m1", "", "2500", T}},
			[]string{`player q2-players match="m1" civ="" rating=2500 winner=true`},
		},
		{
			"everything missing: q2 still counts the row",
			[]pr{{"m1", "", "", X}},
			[]string{`player q2-players match="m1" civ="" rating=missing winner=missing`},
		},
		{
			"low rating loser",
			[]pr{{"m1", "Goths", "900", F}},
			[]string{
				`player q2-players match="m1" civ="" rating=900 winner=false`,
				`player q3-players match="m1" civ="Goths" rating=missing winner=false`,
			},
		},
		{
			"rows in order, civ case kept",
			[]pr{{"m2", "franks", "3000", T}, {"m1", "", "1", F}},
			[]string{
				`player q2-players match="m2" civ="" rating=3000 winner=true`,
				`player q3-players match="m2" civ="franks" rating=missing winner=true`,
				`player q4-players match="m2" civ="franks" rating=missing winner=missing`,
				`player q2-players match="m1" civ="" rating=1 winner=false`,
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var f PlayersFilter
			out := &fakeEmitter{}
			apply(t, &f, out, input{Players, playerBatch(t, c.rows...)})
			if err := f.Finish(out); err != nil {
				t.Fatal(err)
			}
			sameCalls(t, "emitted", out.take(), c.want)
		})
	}
}

// TestOperatorsRefuseWrongInput: a batch of the wrong kind is an error
// naming the stream, and a malformed batch is ErrBadBatch; neither emits.
func TestOperatorsRefuseWrongInput(t *testing.T) {
	badPlayers := &wololov1.RowBatch{Rows: &wololov1.RowBatch_Players{Players: &wololov1.PlayerRows{
		Match: &wololov1.TextColumn{Data: []byte("m"), Ends: []uint32{1}},
	}}}
	badMatches := &wololov1.RowBatch{Rows: &wololov1.RowBatch_Matches{Matches: &wololov1.MatchRows{
		Token: &wololov1.TextColumn{Data: []byte("m"), Ends: []uint32{2}},
	}}}
	badTokens := &wololov1.RowBatch{Rows: &wololov1.RowBatch_Tokens{Tokens: &wololov1.TokenRows{
		Token: &wololov1.TextColumn{Data: []byte("m"), Ends: []uint32{2}},
	}}}
	badCivs := &wololov1.RowBatch{Rows: &wololov1.RowBatch_Civs{Civs: &wololov1.CivRows{Civ: [][]byte{[]byte("a")}}}}
	cases := []struct {
		name     string
		op       stage.Operator
		stream   string
		rows     *wololov1.RowBatch
		badBatch bool // want ErrBadBatch; else a wrong-kind error
	}{
		{"matches filter given players", &MatchesFilter{}, Matches, playerBatch(t, pr{"m", "a", "1", T}), false},
		{"matches filter given bad matches", &MatchesFilter{}, Matches, badMatches, true},
		{"players filter given matches", &PlayersFilter{}, Players, matchBatch(t, q1), false},
		{"players filter given bad players", &PlayersFilter{}, Players, badPlayers, true},
		{"grouper given tokens", NewQ2Grouper(), Q2Players, tokenBatch("m"), false},
		{"grouper given bad players", NewQ2Grouper(), Q2Players, badPlayers, true},
		{"joiner match stream given players", NewJoiner(Q3Matches, Q3Players, Q3Partials), Q3Matches, playerBatch(t, pr{"m", "a", "1", T}), false},
		{"joiner match stream given bad tokens", NewJoiner(Q3Matches, Q3Players, Q3Partials), Q3Matches, badTokens, true},
		{"joiner player stream given tokens", NewJoiner(Q3Matches, Q3Players, Q3Partials), Q3Players, tokenBatch("m"), false},
		{"joiner player stream given bad players", NewJoiner(Q3Matches, Q3Players, Q3Partials), Q3Players, badPlayers, true},
		{"aggregator given tokens", NewAggregator(Q4Civs, 5), Q4Partials, tokenBatch("m"), false},
		{"aggregator given bad civs", NewAggregator(Q4Civs, 5), Q4Partials, badCivs, true},
		{"results q1 given civs", NewResults(), Q1Tokens, civBatch(cr{"a", 1, 1}), false},
		{"results q3 given tokens", NewResults(), Q3Civs, tokenBatch("m"), false},
		{"results q2 given bad tokens", NewResults(), Q2Tokens, badTokens, true},
		{"results q4 given bad civs", NewResults(), Q4Civs, badCivs, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := &fakeEmitter{}
			err := c.op.Apply(c.stream, c.rows, out)
			switch {
			case err == nil:
				t.Fatalf("Apply = nil, want an error")
			case c.badBatch && !errors.Is(err, batch.ErrBadBatch):
				t.Errorf("err = %v, want ErrBadBatch", err)
			case !c.badBatch && !strings.Contains(err.Error(), "stream "+c.stream+":"):
				t.Errorf("err = %q, want it to name stream %s", err, c.stream)
			}
			sameCalls(t, "emitted", out.take(), nil)
		})
	}
}
