package schema

import (
	"errors"
	"strings"
	"testing"
)

func header(s string) [][]byte {
	if s == "" {
		return nil
	}
	var out [][]byte
	for _, f := range strings.Split(s, ",") {
		out = append(out, []byte(f))
	}
	return out
}

func TestFileString(t *testing.T) {
	if Matches.String() != "matches.csv" || Players.String() != "match_players.csv" || File(7).String() != "File(7)" {
		t.Fatalf("got %q %q %q", Matches, Players, File(7))
	}
}

func TestParseMatchHeader(t *testing.T) {
	cases := []struct {
		name, header string
		want         MatchColumns
		missing      string
	}{
		{"dataset order", "token,winning_team,mirror,ladder,patch,average_rating,map,map_size,num_players,server,duration",
			MatchColumns{Token: 0, Mirror: 2, Ladder: 3, AverageRating: 5, Map: 6, Server: 9, Duration: 10, Fields: 11}, ""},
		{"shuffled with extra", "duration,extra,server,map,average_rating,mirror,ladder,token",
			MatchColumns{Duration: 0, Server: 2, Map: 3, AverageRating: 4, Mirror: 5, Ladder: 6, Token: 7, Fields: 8}, ""},
		{"a repeated extra column is fine", "token,ladder,mirror,average_rating,map,server,duration,x,x",
			MatchColumns{Token: 0, Ladder: 1, Mirror: 2, AverageRating: 3, Map: 4, Server: 5, Duration: 6, Fields: 9}, ""},
		{"a repeated required column is refused", "token,ladder,mirror,average_rating,map,server,duration,token,map", MatchColumns{}, "twice:token"},
		{"no duration", "token,ladder,mirror,average_rating,map,server", MatchColumns{}, "duration"},
		{"case-sensitive", "Token,ladder,mirror,average_rating,map,server,duration", MatchColumns{}, "token"},
		{"no trimming", "token,ladder ,mirror,average_rating,map,server,duration", MatchColumns{}, "ladder"},
		{"empty header", "", MatchColumns{}, "token"},
		{"one empty field", ",", MatchColumns{}, "token"},
		{"first missing reported", "token,map", MatchColumns{}, "ladder"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMatchHeader(header(tc.header))
			checkHeader(t, Matches, got, tc.want, err, tc.missing)
		})
	}
}

func TestParsePlayerHeader(t *testing.T) {
	cases := []struct {
		name, header string
		want         PlayerColumns
		missing      string
	}{
		{"dataset order", "token,match,rating,color,civ,team,winner", PlayerColumns{Match: 1, Rating: 2, Civ: 4, Winner: 6, Fields: 7}, ""},
		{"shuffled", "winner,civ,rating,match", PlayerColumns{Winner: 0, Civ: 1, Rating: 2, Match: 3, Fields: 4}, ""},
		{"no winner", "match,rating,civ", PlayerColumns{}, "winner"},
		{"empty header", "", PlayerColumns{}, "match"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePlayerHeader(header(tc.header))
			checkHeader(t, Players, got, tc.want, err, tc.missing)
		})
	}
}

func checkHeader[C comparable](t *testing.T, file File, got, want C, err error, missing string) {
	t.Helper()
	if missing == "" {
		if err != nil || got != want {
			t.Fatalf("got %+v, %v; want %+v", got, err, want)
		}
		return
	}
	twice := strings.HasPrefix(missing, "twice:")
	missing = strings.TrimPrefix(missing, "twice:")
	var he *HeaderError
	if !errors.As(err, &he) || he.File != file || he.Column != missing || he.Twice != twice || !errors.Is(err, ErrMissingColumn) {
		t.Fatalf("err = %#v, want a HeaderError for %s column %q (twice: %v)", err, file, missing, twice)
	}
	wantMsg := file.String() + `: header has no "` + missing + `" column`
	if twice {
		wantMsg = file.String() + `: header has the "` + missing + `" column twice`
	}
	if err.Error() != wantMsg {
		t.Fatalf("message %q, want %q", err.Error(), wantMsg)
	}
	var zero C
	if got != zero {
		t.Fatalf("columns %+v with an error", got)
	}
}

func TestRequiredColumnsIsACopy(t *testing.T) {
	RequiredColumns[Matches][0] = "changed"
	defer func() { RequiredColumns[Matches][0] = "token" }()
	if _, err := ParseMatchHeader(header("token,ladder,mirror,average_rating,map,server,duration")); err != nil {
		t.Fatal(err)
	}
}

func TestFiles(t *testing.T) {
	if Files != [...]File{Matches, Players} {
		t.Errorf("Files = %v, want matches then players", Files)
	}
}
