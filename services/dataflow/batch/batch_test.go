package batch_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/schema"
)

// ---- helpers ----

// num parses a number field; "" is a missing value.
func num(t testing.TB, s string) (schema.Number, bool) {
	t.Helper()
	if s == "" {
		return schema.Number{}, false
	}
	n, ok := schema.ParseNumber([]byte(s))
	if !ok {
		t.Fatalf("bad test number %q", s)
	}
	return n, true
}

func match(t testing.TB, token, ladder, mapName, server string, mirror batch.Tri, rating string, dur int64) batch.Match {
	t.Helper()
	n, ok := num(t, rating)
	return batch.Match{
		Token: []byte(token), Ladder: []byte(ladder), Map: []byte(mapName), Server: []byte(server),
		Mirror: mirror, AverageRating: n, HasAverageRating: ok, DurationSeconds: dur,
	}
}

func player(t testing.TB, matchToken, civ, rating string, winner batch.Tri) batch.Player {
	t.Helper()
	n, ok := num(t, rating)
	return batch.Player{Match: []byte(matchToken), Civ: []byte(civ), Rating: n, HasRating: ok, Winner: winner}
}

// numString renders a number with its path: "fast:2034", "wide:1.0000001"
// or "missing".
func numString(n schema.Number, ok bool) string {
	if !ok {
		return "missing"
	}
	if _, fast := n.Units(); fast {
		return "fast:" + n.String()
	}
	return "wide:" + n.String()
}

func triString(v batch.Tri) string {
	switch v {
	case batch.Missing:
		return "missing"
	case batch.False:
		return "false"
	case batch.True:
		return "true"
	}
	return fmt.Sprintf("Tri(%d)", v)
}

func matchString(m *batch.Match) string {
	return fmt.Sprintf("%q %q %q %q mirror=%s rating=%s duration=%d", m.Token, m.Ladder, m.Map, m.Server,
		triString(m.Mirror), numString(m.AverageRating, m.HasAverageRating), m.DurationSeconds)
}

func playerString(p *batch.Player) string {
	return fmt.Sprintf("%q %q rating=%s winner=%s", p.Match, p.Civ, numString(p.Rating, p.HasRating), triString(p.Winner))
}

// wire marshals and unmarshals a batch, the way it travels between stages.
func wire(t testing.TB, rb *wololov1.RowBatch) *wololov1.RowBatch {
	t.Helper()
	b, err := proto.Marshal(rb)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	var out wololov1.RowBatch
	if err := proto.Unmarshal(b, &out); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	return &out
}

func readMatches(t testing.TB, rb *wololov1.RowBatch) []string {
	t.Helper()
	m := rb.GetMatches()
	if m == nil {
		t.Fatalf("batch holds %T, want matches", rb.GetRows())
	}
	got := []string{}
	if err := batch.EachMatch(m, func(m *batch.Match) { got = append(got, matchString(m)) }); err != nil {
		t.Fatalf("EachMatch: %v", err)
	}
	return got
}

func readPlayers(t testing.TB, rb *wololov1.RowBatch) []string {
	t.Helper()
	p := rb.GetPlayers()
	if p == nil {
		t.Fatalf("batch holds %T, want players", rb.GetRows())
	}
	got := []string{}
	if err := batch.EachPlayer(p, func(p *batch.Player) { got = append(got, playerString(p)) }); err != nil {
		t.Fatalf("EachPlayer: %v", err)
	}
	return got
}

func readTokens(t testing.TB, rb *wololov1.RowBatch) []string {
	t.Helper()
	tk := rb.GetTokens()
	if tk == nil {
		t.Fatalf("batch holds %T, want tokens", rb.GetRows())
	}
	got := []string{}
	if err := batch.EachToken(tk, func(token []byte) { got = append(got, string(token)) }); err != nil {
		t.Fatalf("EachToken: %v", err)
	}
	return got
}

func readCivs(t testing.TB, rb *wololov1.RowBatch) []string {
	t.Helper()
	c := rb.GetCivs()
	if c == nil {
		t.Fatalf("batch holds %T, want civs", rb.GetRows())
	}
	got := []string{}
	if err := batch.EachCiv(c, func(civ string, wins, count int64) {
		got = append(got, fmt.Sprintf("%q wins=%d count=%d", civ, wins, count))
	}); err != nil {
		t.Fatalf("EachCiv: %v", err)
	}
	return got
}

func sameStrings(t testing.TB, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d rows, want %d\ngot:  %q\nwant: %q", what, len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s row %d:\ngot:  %s\nwant: %s", what, i, got[i], want[i])
		}
	}
}

func sameBatch(t testing.TB, got, want *wololov1.RowBatch) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Errorf("batch:\ngot:  %v\nwant: %v", got, want)
	}
}

// ---- TriOf ----

func TestTriOf(t *testing.T) {
	cases := []struct {
		name  string
		v, ok bool
		want  batch.Tri
	}{
		{"true", true, true, batch.True},
		{"false", false, true, batch.False},
		{"missing", false, false, batch.Missing},
		{"missing ignores value", true, false, batch.Missing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := batch.TriOf(c.v, c.ok); got != c.want {
				t.Errorf("TriOf(%v, %v) = %d, want %d", c.v, c.ok, got, c.want)
			}
		})
	}
	// The wire form is fixed by batch.proto: 0 missing, 1 false, 2 true.
	if batch.Missing != 0 || batch.False != 1 || batch.True != 2 {
		t.Errorf("Tri wire values = %d/%d/%d, want 0/1/2", batch.Missing, batch.False, batch.True)
	}
}

// ---- round trips ----

func TestMatchRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		rows func(t testing.TB) []batch.Match
		want []string
	}{
		{
			name: "empty batch",
			rows: func(t testing.TB) []batch.Match { return nil },
			want: []string{},
		},
		{
			name: "fast numbers",
			rows: func(t testing.TB) []batch.Match {
				return []batch.Match{
					match(t, "t1", "RM_1v1", "arena", "eastus", batch.False, "2034.0", 7201),
					match(t, "t2", "RM_TEAM", "islands", "koreacentral", batch.True, "-1.5", 0),
					match(t, "t3", "RM_1v1", "arena", "eastus", batch.False, "99999999999.999999", 1),
					match(t, "t4", "RM_1v1", "arena", "eastus", batch.False, "-99999999999.999999", 86400),
					match(t, "t5", "RM_1v1", "arena", "eastus", batch.False, "-0", 5),
				}
			},
			want: []string{
				`"t1" "RM_1v1" "arena" "eastus" mirror=false rating=fast:2034 duration=7201`,
				`"t2" "RM_TEAM" "islands" "koreacentral" mirror=true rating=fast:-1.5 duration=0`,
				`"t3" "RM_1v1" "arena" "eastus" mirror=false rating=fast:99999999999.999999 duration=1`,
				`"t4" "RM_1v1" "arena" "eastus" mirror=false rating=fast:-99999999999.999999 duration=86400`,
				`"t5" "RM_1v1" "arena" "eastus" mirror=false rating=fast:0 duration=5`,
			},
		},
		{
			name: "wide numbers",
			rows: func(t testing.TB) []batch.Match {
				return []batch.Match{
					match(t, "w1", "RM_1v1", "arena", "eastus", batch.False, "123456789012345.1234567", 7201),
					match(t, "w2", "RM_1v1", "arena", "eastus", batch.False, "2000", 7201),
					match(t, "w3", "RM_1v1", "arena", "eastus", batch.False, "-123456789012345.1234567", 7201),
					match(t, "w4", "RM_1v1", "arena", "eastus", batch.False, "0.0000001", 7201),
					match(t, "w5", "RM_1v1", "arena", "eastus", batch.False, "100000000000", 7201),
				}
			},
			want: []string{
				`"w1" "RM_1v1" "arena" "eastus" mirror=false rating=wide:123456789012345.1234567 duration=7201`,
				`"w2" "RM_1v1" "arena" "eastus" mirror=false rating=fast:2000 duration=7201`,
				`"w3" "RM_1v1" "arena" "eastus" mirror=false rating=wide:-123456789012345.1234567 duration=7201`,
				`"w4" "RM_1v1" "arena" "eastus" mirror=false rating=wide:0.0000001 duration=7201`,
				`"w5" "RM_1v1" "arena" "eastus" mirror=false rating=wide:100000000000 duration=7201`,
			},
		},
		{
			name: "missing values and empty text",
			rows: func(t testing.TB) []batch.Match {
				return []batch.Match{
					match(t, "", "", "", "", batch.Missing, "", -1),
					match(t, "m2", "RM_1v1", "", "eastus", batch.Missing, "1500", -1),
				}
			},
			want: []string{
				`"" "" "" "" mirror=missing rating=missing duration=-1`,
				`"m2" "RM_1v1" "" "eastus" mirror=missing rating=fast:1500 duration=-1`,
			},
		},
		{
			name: "text with separators and non-ASCII",
			rows: func(t testing.TB) []batch.Match {
				return []batch.Match{
					match(t, "a,b\"c\r\n", "RM 1v1", "Black Forest", "été", batch.True, "1", 2),
				}
			},
			want: []string{
				`"a,b\"c\r\n" "RM 1v1" "Black Forest" "été" mirror=true rating=fast:1 duration=2`,
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			roundTrip(t, "matches", &batch.MatchBuilder{}, c.rows(t), c.want, readMatches)
		})
	}
}

// roundTrip adds rows to a builder of their kind, checks its Len, builds
// the batch, sends it through the wire encoding and checks its row count
// and what read gives back.
func roundTrip[R any, B interface {
	*batch.MatchBuilder | *batch.PlayerBuilder
	Add(*R)
	Len() int
	Build() *wololov1.RowBatch
}](t *testing.T, what string, b B, rows []R, want []string, read func(testing.TB, *wololov1.RowBatch) []string) {
	t.Helper()
	for i := range rows {
		b.Add(&rows[i])
	}
	if b.Len() != len(rows) {
		t.Errorf("Len = %d, want %d", b.Len(), len(rows))
	}
	rb := wire(t, b.Build())
	if got := batch.Rows(rb); got != len(want) {
		t.Errorf("Rows = %d, want %d", got, len(want))
	}
	sameStrings(t, what, read(t, rb), want)
}

func TestPlayerRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		rows func(t testing.TB) []batch.Player
		want []string
	}{
		{
			name: "empty batch",
			rows: func(t testing.TB) []batch.Player { return nil },
			want: []string{},
		},
		{
			name: "every winner value and fast ratings",
			rows: func(t testing.TB) []batch.Player {
				return []batch.Player{
					player(t, "m1", "Aztecs", "2034.5", batch.True),
					player(t, "m1", "Britons", "1000", batch.False),
					player(t, "m2", "Aztecs", "0", batch.Missing),
				}
			},
			want: []string{
				`"m1" "Aztecs" rating=fast:2034.5 winner=true`,
				`"m1" "Britons" rating=fast:1000 winner=false`,
				`"m2" "Aztecs" rating=fast:0 winner=missing`,
			},
		},
		{
			name: "wide ratings between fast and missing ones",
			rows: func(t testing.TB) []batch.Player {
				return []batch.Player{
					player(t, "m1", "Franks", "123456789012345.1234567", batch.True),
					player(t, "m2", "Franks", "", batch.False),
					player(t, "m3", "Goths", "1.0000001", batch.True),
					player(t, "m4", "Goths", "7", batch.True),
				}
			},
			want: []string{
				`"m1" "Franks" rating=wide:123456789012345.1234567 winner=true`,
				`"m2" "Franks" rating=missing winner=false`,
				`"m3" "Goths" rating=wide:1.0000001 winner=true`,
				`"m4" "Goths" rating=fast:7 winner=true`,
			},
		},
		{
			name: "empty civ and match",
			rows: func(t testing.TB) []batch.Player {
				return []batch.Player{
					player(t, "", "", "", batch.Missing),
					player(t, "m", "", "5", batch.True),
				}
			},
			want: []string{
				`"" "" rating=missing winner=missing`,
				`"m" "" rating=fast:5 winner=true`,
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			roundTrip(t, "players", &batch.PlayerBuilder{}, c.rows(t), c.want, readPlayers)
		})
	}
}

func TestTokenRoundTrip(t *testing.T) {
	cases := []struct {
		name   string
		tokens []string
	}{
		{"empty batch", []string{}},
		{"one token", []string{"abc"}},
		{"empty tokens among others", []string{"", "a", "", "bc", ""}},
		{"repeated tokens stay repeated", []string{"x", "x", "x"}},
		{"binary bytes", []string{"\x00\xff", "\n,\""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b batch.TokenBuilder
			for _, tk := range c.tokens {
				b.Add([]byte(tk))
			}
			if b.Len() != len(c.tokens) {
				t.Errorf("Len = %d, want %d", b.Len(), len(c.tokens))
			}
			rb := wire(t, b.Build())
			if got := batch.Rows(rb); got != len(c.tokens) {
				t.Errorf("Rows = %d, want %d", got, len(c.tokens))
			}
			sameStrings(t, "tokens", readTokens(t, rb), c.tokens)
		})
	}
}

func TestCivRoundTrip(t *testing.T) {
	type civ struct {
		name        string
		wins, count int64
	}
	cases := []struct {
		name string
		rows []civ
		want []string
	}{
		{"empty batch", nil, []string{}},
		{
			"counters kept as given",
			[]civ{{"Aztecs", 3, 7}, {"", 0, 1}, {"Civ, The", 0, 0}, {"Big", 1 << 40, 1<<62 + 1}},
			[]string{`"Aztecs" wins=3 count=7`, `"" wins=0 count=1`, `"Civ, The" wins=0 count=0`, `"Big" wins=1099511627776 count=4611686018427387905`},
		},
		{
			"same civ twice is not merged",
			[]civ{{"Aztecs", 1, 2}, {"Aztecs", 3, 4}},
			[]string{`"Aztecs" wins=1 count=2`, `"Aztecs" wins=3 count=4`},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b batch.CivBuilder
			for _, r := range c.rows {
				b.Add(r.name, r.wins, r.count)
			}
			if b.Len() != len(c.rows) {
				t.Errorf("Len = %d, want %d", b.Len(), len(c.rows))
			}
			rb := wire(t, b.Build())
			if got := batch.Rows(rb); got != len(c.rows) {
				t.Errorf("Rows = %d, want %d", got, len(c.rows))
			}
			sameStrings(t, "civs", readCivs(t, rb), c.want)
		})
	}
}

// ---- wire layout ----

// TestMatchColumns pins the columns a MatchBuilder writes: text blob and
// ends, per-batch dictionaries with reused codes, tri bytes, number kinds
// with units and the wide list in row order.
func TestMatchColumns(t *testing.T) {
	var b batch.MatchBuilder
	rows := []batch.Match{
		match(t, "a", "RM_1v1", "arena", "eastus", batch.False, "2034.0", 7201),
		match(t, "", "RM_TEAM", "arena", "eastus", batch.True, "", -1),
		match(t, "bc", "RM_1v1", "islands", "", batch.Missing, "123456789012345.1234567", 0),
		match(t, "d", "RM_1v1", "arena", "eastus", batch.False, "-1.5", 60),
		match(t, "e", "RM_TEAM", "islands", "", batch.False, "0.0000001", 61),
	}
	for i := range rows {
		b.Add(&rows[i])
	}
	want := &wololov1.RowBatch{Rows: &wololov1.RowBatch_Matches{Matches: &wololov1.MatchRows{
		Token:  &wololov1.TextColumn{Data: []byte("abcde"), Ends: []uint32{1, 1, 3, 4, 5}},
		Ladder: &wololov1.DictColumn{Dict: [][]byte{[]byte("RM_1v1"), []byte("RM_TEAM")}, Codes: []uint32{0, 1, 0, 0, 1}},
		Map:    &wololov1.DictColumn{Dict: [][]byte{[]byte("arena"), []byte("islands")}, Codes: []uint32{0, 0, 1, 0, 1}},
		Server: &wololov1.DictColumn{Dict: [][]byte{[]byte("eastus"), []byte("")}, Codes: []uint32{0, 0, 1, 0, 1}},
		Mirror: []byte{1, 2, 0, 1, 1},
		AverageRating: &wololov1.NumberColumn{
			Kinds: []byte{1, 0, 2, 1, 2},
			Units: []int64{2034_000000, 0, 0, -1_500000, 0},
			Wide:  []string{"123456789012345.1234567", "0.0000001"},
		},
		DurationSeconds: []int64{7201, -1, 0, 60, 61},
	}}}
	got := b.Build()
	sameBatch(t, got, want)
	sameBatch(t, wire(t, got), want)
}

func TestPlayerColumns(t *testing.T) {
	var b batch.PlayerBuilder
	rows := []batch.Player{
		player(t, "m1", "Aztecs", "2100", batch.True),
		player(t, "m1", "Britons", "", batch.False),
		player(t, "m22", "Aztecs", "99999999999.9999999", batch.Missing),
	}
	for i := range rows {
		b.Add(&rows[i])
	}
	want := &wololov1.RowBatch{Rows: &wololov1.RowBatch_Players{Players: &wololov1.PlayerRows{
		Match:  &wololov1.TextColumn{Data: []byte("m1m1m22"), Ends: []uint32{2, 4, 7}},
		Civ:    &wololov1.DictColumn{Dict: [][]byte{[]byte("Aztecs"), []byte("Britons")}, Codes: []uint32{0, 1, 0}},
		Rating: &wololov1.NumberColumn{Kinds: []byte{1, 0, 2}, Units: []int64{2100_000000, 0, 0}, Wide: []string{"99999999999.9999999"}},
		Winner: []byte{2, 1, 0},
	}}}
	sameBatch(t, b.Build(), want)
}

func TestTokenAndCivColumns(t *testing.T) {
	var tb batch.TokenBuilder
	for _, s := range []string{"ab", "", "c"} {
		tb.Add([]byte(s))
	}
	sameBatch(t, tb.Build(), &wololov1.RowBatch{Rows: &wololov1.RowBatch_Tokens{Tokens: &wololov1.TokenRows{
		Token: &wololov1.TextColumn{Data: []byte("abc"), Ends: []uint32{2, 2, 3}},
	}}})

	var cb batch.CivBuilder
	cb.Add("Aztecs", 1, 2)
	cb.Add("Britons", 0, 5)
	sameBatch(t, cb.Build(), &wololov1.RowBatch{Rows: &wololov1.RowBatch_Civs{Civs: &wololov1.CivRows{
		Civ: [][]byte{[]byte("Aztecs"), []byte("Britons")}, Wins: []int64{1, 0}, Count: []int64{2, 5},
	}}})
}

// ---- Build resets the builder ----

func TestMatchBuilderResets(t *testing.T) {
	var b batch.MatchBuilder
	m1 := match(t, "t1", "RM_1v1", "arena", "eastus", batch.False, "123456789012345.1234567", 7201)
	m2 := match(t, "t2", "RM_TEAM", "islands", "westeurope", batch.True, "1500", 60)
	b.Add(&m1)
	b.Add(&m1)
	first := b.Build()
	firstWire, err := proto.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() != 0 {
		t.Fatalf("Len after Build = %d, want 0", b.Len())
	}

	// The next batch has its own dictionaries, codes from 0 in the order
	// of this batch, and none of the earlier rows.
	b.Add(&m2)
	b.Add(&m1)
	second := b.Build()
	sameBatch(t, second, &wololov1.RowBatch{Rows: &wololov1.RowBatch_Matches{Matches: &wololov1.MatchRows{
		Token:           &wololov1.TextColumn{Data: []byte("t2t1"), Ends: []uint32{2, 4}},
		Ladder:          &wololov1.DictColumn{Dict: [][]byte{[]byte("RM_TEAM"), []byte("RM_1v1")}, Codes: []uint32{0, 1}},
		Map:             &wololov1.DictColumn{Dict: [][]byte{[]byte("islands"), []byte("arena")}, Codes: []uint32{0, 1}},
		Server:          &wololov1.DictColumn{Dict: [][]byte{[]byte("westeurope"), []byte("eastus")}, Codes: []uint32{0, 1}},
		Mirror:          []byte{2, 1},
		AverageRating:   &wololov1.NumberColumn{Kinds: []byte{1, 2}, Units: []int64{1500_000000, 0}, Wide: []string{"123456789012345.1234567"}},
		DurationSeconds: []int64{60, 7201},
	}}})
	sameStrings(t, "second batch", readMatches(t, wire(t, second)), []string{
		`"t2" "RM_TEAM" "islands" "westeurope" mirror=true rating=fast:1500 duration=60`,
		`"t1" "RM_1v1" "arena" "eastus" mirror=false rating=wide:123456789012345.1234567 duration=7201`,
	})

	// Rows added after a Build do not leak into the batch built before.
	for range 100 {
		b.Add(&m2)
	}
	again, err := proto.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(firstWire) {
		t.Errorf("first batch changed after more rows were added")
	}
	sameStrings(t, "first batch", readMatches(t, wire(t, first)), []string{
		`"t1" "RM_1v1" "arena" "eastus" mirror=false rating=wide:123456789012345.1234567 duration=7201`,
		`"t1" "RM_1v1" "arena" "eastus" mirror=false rating=wide:123456789012345.1234567 duration=7201`,
	})

	// An empty build after that is empty.
	b.Build()
	empty := b.Build()
	if got := batch.Rows(empty); got != 0 {
		t.Errorf("Rows of empty build = %d, want 0", got)
	}
	sameStrings(t, "empty batch", readMatches(t, wire(t, empty)), []string{})
}

func TestPlayerBuilderResets(t *testing.T) {
	var b batch.PlayerBuilder
	p1 := player(t, "m1", "Aztecs", "1.0000001", batch.True)
	p2 := player(t, "m2", "Britons", "2", batch.False)
	b.Add(&p1)
	first := b.Build()
	if b.Len() != 0 {
		t.Fatalf("Len after Build = %d, want 0", b.Len())
	}
	b.Add(&p2)
	b.Add(&p1)
	b.Add(&p2)
	second := b.Build()
	sameBatch(t, second, &wololov1.RowBatch{Rows: &wololov1.RowBatch_Players{Players: &wololov1.PlayerRows{
		Match:  &wololov1.TextColumn{Data: []byte("m2m1m2"), Ends: []uint32{2, 4, 6}},
		Civ:    &wololov1.DictColumn{Dict: [][]byte{[]byte("Britons"), []byte("Aztecs")}, Codes: []uint32{0, 1, 0}},
		Rating: &wololov1.NumberColumn{Kinds: []byte{1, 2, 1}, Units: []int64{2_000000, 0, 2_000000}, Wide: []string{"1.0000001"}},
		Winner: []byte{1, 2, 1},
	}}})
	sameStrings(t, "first batch", readPlayers(t, wire(t, first)), []string{`"m1" "Aztecs" rating=wide:1.0000001 winner=true`})
}

func TestTokenAndCivBuildersReset(t *testing.T) {
	var tb batch.TokenBuilder
	tb.Add([]byte("a"))
	first := tb.Build()
	if tb.Len() != 0 {
		t.Errorf("TokenBuilder Len after Build = %d, want 0", tb.Len())
	}
	tb.Add([]byte("b"))
	sameStrings(t, "second tokens", readTokens(t, tb.Build()), []string{"b"})
	sameStrings(t, "first tokens", readTokens(t, first), []string{"a"})

	var cb batch.CivBuilder
	cb.Add("Aztecs", 1, 1)
	firstCivs := cb.Build()
	if cb.Len() != 0 {
		t.Errorf("CivBuilder Len after Build = %d, want 0", cb.Len())
	}
	cb.Add("Britons", 2, 2)
	sameStrings(t, "second civs", readCivs(t, cb.Build()), []string{`"Britons" wins=2 count=2`})
	sameStrings(t, "first civs", readCivs(t, firstCivs), []string{`"Aztecs" wins=1 count=1`})
}

// TestReaderReusesRow documents that the row passed to fn is reused: a
// caller that keeps rows must copy them. The byte slices it holds still
// point at the batch, so their contents stay valid.
func TestReaderReusesRow(t *testing.T) {
	var b batch.PlayerBuilder
	p1 := player(t, "m1", "Aztecs", "1", batch.True)
	p2 := player(t, "m2", "Britons", "2", batch.False)
	b.Add(&p1)
	b.Add(&p2)
	var ptrs []*batch.Player
	var matches [][]byte
	if err := batch.EachPlayer(b.Build().GetPlayers(), func(p *batch.Player) {
		ptrs = append(ptrs, p)
		matches = append(matches, p.Match)
	}); err != nil {
		t.Fatal(err)
	}
	if len(ptrs) != 2 || ptrs[0] != ptrs[1] {
		t.Errorf("EachPlayer passed %d distinct rows, want one reused row", len(ptrs))
	}
	if string(matches[0]) != "m1" || string(matches[1]) != "m2" {
		t.Errorf("match slices = %q, want m1, m2", matches)
	}
}

// ---- Rows ----

func TestRowsOfOtherBatches(t *testing.T) {
	cases := []struct {
		name string
		rb   *wololov1.RowBatch
		want int
	}{
		{"nil batch", nil, 0},
		{"no rows set", &wololov1.RowBatch{}, 0},
		{"matches without token column", &wololov1.RowBatch{Rows: &wololov1.RowBatch_Matches{Matches: &wololov1.MatchRows{}}}, 0},
		{"tokens", &wololov1.RowBatch{Rows: &wololov1.RowBatch_Tokens{Tokens: &wololov1.TokenRows{Token: &wololov1.TextColumn{Ends: []uint32{0, 0, 0}}}}}, 3},
		{"civs count civ names", &wololov1.RowBatch{Rows: &wololov1.RowBatch_Civs{Civs: &wololov1.CivRows{Civ: [][]byte{[]byte("a"), []byte("b")}}}}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := batch.Rows(c.rb); got != c.want {
				t.Errorf("Rows = %d, want %d", got, c.want)
			}
		})
	}
}

// ---- rejection of inconsistent batches ----

// validMatches is a consistent two-row batch that each case below breaks in
// one way.
func validMatches() *wololov1.MatchRows {
	return &wololov1.MatchRows{
		Token:           &wololov1.TextColumn{Data: []byte("t1t2"), Ends: []uint32{2, 4}},
		Ladder:          &wololov1.DictColumn{Dict: [][]byte{[]byte("RM_1v1")}, Codes: []uint32{0, 0}},
		Map:             &wololov1.DictColumn{Dict: [][]byte{[]byte("arena"), []byte("islands")}, Codes: []uint32{0, 1}},
		Server:          &wololov1.DictColumn{Dict: [][]byte{[]byte("eastus")}, Codes: []uint32{0, 0}},
		Mirror:          []byte{1, 2},
		AverageRating:   &wololov1.NumberColumn{Kinds: []byte{1, 2}, Units: []int64{5, 0}, Wide: []string{"123456789012345.1234567"}},
		DurationSeconds: []int64{7201, -1},
	}
}

func validPlayers() *wololov1.PlayerRows {
	return &wololov1.PlayerRows{
		Match:  &wololov1.TextColumn{Data: []byte("m1m2"), Ends: []uint32{2, 4}},
		Civ:    &wololov1.DictColumn{Dict: [][]byte{[]byte("Aztecs")}, Codes: []uint32{0, 0}},
		Rating: &wololov1.NumberColumn{Kinds: []byte{0, 1}, Units: []int64{0, 7}},
		Winner: []byte{0, 2},
	}
}

func TestValidBatchesPass(t *testing.T) {
	sameStrings(t, "matches", readMatches(t, &wololov1.RowBatch{Rows: &wololov1.RowBatch_Matches{Matches: validMatches()}}), []string{
		`"t1" "RM_1v1" "arena" "eastus" mirror=false rating=fast:0.000005 duration=7201`,
		`"t2" "RM_1v1" "islands" "eastus" mirror=true rating=wide:123456789012345.1234567 duration=-1`,
	})
	sameStrings(t, "players", readPlayers(t, &wololov1.RowBatch{Rows: &wololov1.RowBatch_Players{Players: validPlayers()}}), []string{
		`"m1" "Aztecs" rating=missing winner=missing`,
		`"m2" "Aztecs" rating=fast:0.000007 winner=true`,
	})
}

func TestEachMatchRejects(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(m *wololov1.MatchRows)
		column string // named in the error
	}{
		{"token end beyond data", func(m *wololov1.MatchRows) { m.Token.Ends = []uint32{2, 5} }, "token"},
		{"token ends decreasing", func(m *wololov1.MatchRows) { m.Token.Ends = []uint32{3, 2} }, "token"},
		{"ladder codes short", func(m *wololov1.MatchRows) { m.Ladder.Codes = []uint32{0} }, "ladder"},
		{"ladder column absent", func(m *wololov1.MatchRows) { m.Ladder = nil }, "ladder"},
		{"map code out of range", func(m *wololov1.MatchRows) { m.Map.Codes = []uint32{0, 2} }, "map"},
		{"server codes long", func(m *wololov1.MatchRows) { m.Server.Codes = []uint32{0, 0, 0} }, "server"},
		{"server code with empty dictionary", func(m *wololov1.MatchRows) { m.Server.Dict = nil }, "server"},
		{"mirror short", func(m *wololov1.MatchRows) { m.Mirror = []byte{1} }, "mirror"},
		{"mirror tri value 3", func(m *wololov1.MatchRows) { m.Mirror = []byte{1, 3} }, "mirror"},
		{"rating kinds short", func(m *wololov1.MatchRows) { m.AverageRating.Kinds = []byte{1} }, "average_rating"},
		{"rating units long", func(m *wololov1.MatchRows) { m.AverageRating.Units = []int64{5, 0, 0} }, "average_rating"},
		{"rating kind 3", func(m *wololov1.MatchRows) { m.AverageRating.Kinds = []byte{3, 2} }, "average_rating"},
		{"rating wide count low", func(m *wololov1.MatchRows) { m.AverageRating.Wide = nil }, "average_rating"},
		{"rating wide count high", func(m *wololov1.MatchRows) {
			m.AverageRating.Wide = []string{"123456789012345.1234567", "1.0000001"}
		}, "average_rating"},
		{"rating wide not a number", func(m *wololov1.MatchRows) { m.AverageRating.Wide = []string{"1e20"} }, "average_rating"},
		{"rating wide empty", func(m *wololov1.MatchRows) { m.AverageRating.Wide = []string{""} }, "average_rating"},
		{"duration short", func(m *wololov1.MatchRows) { m.DurationSeconds = []int64{1} }, "duration"},
		{"duration long", func(m *wololov1.MatchRows) { m.DurationSeconds = []int64{1, 2, 3} }, "duration"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := validMatches()
			c.break_(m)
			calls := 0
			err := batch.EachMatch(m, func(*batch.Match) { calls++ })
			if !errors.Is(err, batch.ErrBadBatch) {
				t.Fatalf("err = %v, want ErrBadBatch", err)
			}
			if !strings.Contains(err.Error(), c.column) {
				t.Errorf("err = %q, want it to name column %s", err, c.column)
			}
			if calls != 0 {
				t.Errorf("fn called %d times on a bad batch, want 0", calls)
			}
		})
	}
}

func TestEachPlayerRejects(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(p *wololov1.PlayerRows)
		column string
	}{
		{"match end beyond data", func(p *wololov1.PlayerRows) { p.Match.Data = []byte("m1m") }, "match"},
		{"match ends decreasing", func(p *wololov1.PlayerRows) { p.Match.Ends = []uint32{4, 2} }, "match"},
		{"civ code out of range", func(p *wololov1.PlayerRows) { p.Civ.Codes = []uint32{1, 0} }, "civ"},
		{"civ column absent", func(p *wololov1.PlayerRows) { p.Civ = nil }, "civ"},
		{"rating column absent", func(p *wololov1.PlayerRows) { p.Rating = nil }, "rating"},
		{"rating wide count mismatch", func(p *wololov1.PlayerRows) { p.Rating.Kinds = []byte{2, 1} }, "rating"},
		{"rating stray wide", func(p *wololov1.PlayerRows) { p.Rating.Wide = []string{"1"} }, "rating"},
		{"winner tri value 3", func(p *wololov1.PlayerRows) { p.Winner = []byte{3, 0} }, "winner"},
		{"winner tri value 255", func(p *wololov1.PlayerRows) { p.Winner = []byte{0, 255} }, "winner"},
		{"winner long", func(p *wololov1.PlayerRows) { p.Winner = []byte{0, 1, 2} }, "winner"},
		{"winner absent", func(p *wololov1.PlayerRows) { p.Winner = nil }, "winner"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := validPlayers()
			c.break_(p)
			calls := 0
			err := batch.EachPlayer(p, func(*batch.Player) { calls++ })
			if !errors.Is(err, batch.ErrBadBatch) {
				t.Fatalf("err = %v, want ErrBadBatch", err)
			}
			if !strings.Contains(err.Error(), c.column) {
				t.Errorf("err = %q, want it to name column %s", err, c.column)
			}
			if calls != 0 {
				t.Errorf("fn called %d times on a bad batch, want 0", calls)
			}
		})
	}
}

func TestEachTokenRejects(t *testing.T) {
	cases := []struct {
		name string
		col  *wololov1.TextColumn
	}{
		{"end beyond data", &wololov1.TextColumn{Data: []byte("ab"), Ends: []uint32{1, 3}}},
		{"ends decreasing", &wololov1.TextColumn{Data: []byte("ab"), Ends: []uint32{2, 1}}},
		{"end with no data", &wololov1.TextColumn{Ends: []uint32{1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			err := batch.EachToken(&wololov1.TokenRows{Token: c.col}, func([]byte) { calls++ })
			if !errors.Is(err, batch.ErrBadBatch) {
				t.Fatalf("err = %v, want ErrBadBatch", err)
			}
			if calls != 0 {
				t.Errorf("fn called %d times on a bad batch, want 0", calls)
			}
		})
	}
}

func TestEachCivRejects(t *testing.T) {
	cases := []struct {
		name string
		rows *wololov1.CivRows
	}{
		{"wins short", &wololov1.CivRows{Civ: [][]byte{[]byte("a"), []byte("b")}, Wins: []int64{1}, Count: []int64{1, 2}}},
		{"count long", &wololov1.CivRows{Civ: [][]byte{[]byte("a")}, Wins: []int64{1}, Count: []int64{1, 2}}},
		{"counters without names", &wololov1.CivRows{Wins: []int64{1}, Count: []int64{1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			err := batch.EachCiv(c.rows, func(string, int64, int64) { calls++ })
			if !errors.Is(err, batch.ErrBadBatch) {
				t.Fatalf("err = %v, want ErrBadBatch", err)
			}
			if calls != 0 {
				t.Errorf("fn called %d times on a bad batch, want 0", calls)
			}
		})
	}
}

// TestNilRowsAreEmpty: an absent message reads as a batch of no rows.
func TestNilRowsAreEmpty(t *testing.T) {
	calls := 0
	if err := batch.EachMatch(nil, func(*batch.Match) { calls++ }); err != nil {
		t.Errorf("EachMatch(nil) = %v", err)
	}
	if err := batch.EachPlayer(nil, func(*batch.Player) { calls++ }); err != nil {
		t.Errorf("EachPlayer(nil) = %v", err)
	}
	if err := batch.EachToken(nil, func([]byte) { calls++ }); err != nil {
		t.Errorf("EachToken(nil) = %v", err)
	}
	if err := batch.EachCiv(nil, func(string, int64, int64) { calls++ }); err != nil {
		t.Errorf("EachCiv(nil) = %v", err)
	}
	if calls != 0 {
		t.Errorf("fn called %d times, want 0", calls)
	}
}
