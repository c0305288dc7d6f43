package reference

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/schema"
)

func TestQ4(t *testing.T) {
	runCases(t, []evalCase{
		{
			name: "ties and rating boundary",
			matches: mh +
				"I1,RM_TEAM,,,islands,,\n" +
				"I2,RM_TEAM,true,,islands,,\n" + // mirror does not matter
				"I3,RM_TEAM,,,Islands,,\n" +
				"I4,RM_1v1,,,islands,,\n" +
				"I1,RM_TEAM,,,islands,,\n", // duplicate: I1 counts once
			players: ph +
				"I1,2100,Goths,true\nI1,2100,Goths,false\nI2,2001,Goths,\nI2,2000.5,Goths,x\n" +
				"I1,2100,Britons,true\nI1,2100,Britons,true\nI2,3000,Britons,false\n" +
				"I1,2100,Franks,true\nI2,2100,Franks,true\nI2,2100,Franks,true\n" +
				"I1,2100,Celts,true\nI2,2100,Celts,true\n" +
				"I1,2100,Mayans,true\nI2,2100,Mayans,true\n" +
				"I1,2100,Aztecs,true\nI2,2100,Aztecs,true\n" +
				"I1,2100,Huns,true\n" +
				"I1,2000,Huns,true\nI1,2000.0,Huns,true\n" + // exactly 2000
				"I1,,Huns,true\nI1,n/a,Huns,true\n" + // missing rating
				"I1,2100,,true\nI1,2100,,true\nI1,2100,,true\nI1,2100,,true\nI1,2100,,true\n" + // empty civ
				"I3,2100,Huns,true\nI3,2100,Huns,true\nI4,2100,Huns,true\nI4,2100,Huns,true\n" +
				"I5,2100,Huns,true\nI5,2100,Huns,true\n",
			q1: q1Empty, q2: q2Empty, q3: q3Empty,
			q4: "rank,civ,players\n" +
				"1,Goths,4\n" +
				"2,Britons,3\n" +
				"3,Franks,3\n" +
				"4,Aztecs,2\n" +
				"5,Celts,2\n",
			report: rep(5, 0, 32, 0),
		},
		{
			name:    "fewer than five civs",
			matches: mh + "I1,RM_TEAM,false,2500,islands,eastus,0:40:00\n",
			players: ph + "I1,2100,Vikings,true\nI1,2200,Aztecs,false\nI1,2300,Vikings,true\n",
			q1:      q1Empty, q2: q2Empty, q3: q3Empty,
			q4:     "rank,civ,players\n1,Vikings,2\n2,Aztecs,1\n",
			report: rep(1, 0, 3, 0),
		},
	})
}

// A small dataset in the public shape, used by the layout tests below.
const (
	fullMatches = "token,winning_team,mirror,ladder,patch,average_rating,map,map_size,num_players,server,duration\n" +
		"t1,1,False,RM_1v1,37906,2100,arena,tiny,2,eastus,\"0 days, 02:30:00\"\n" +
		"t2,2,False,RM_TEAM,37906,1900,islands,medium,4,ukwest,0:40:00\n" +
		"t3,1,True,RM_1v1,37906,2300,arena,tiny,2,koreacentral,2:00:00\n"
	fullPlayers = "token,match,rating,color,civ,team,winner\n" +
		"p1,t1,1100,Blue,Franks,1,True\n" +
		"p2,t1,1600,Red,Britons,2,False\n" +
		"p3,t2,2100,Blue,Vikings,1,True\n" +
		"p4,t2,2200,Red,Vikings,1,True\n" +
		"p5,t2,2300,Green,Malians,2,False\n" +
		"p6,t2,1900,Yellow,Malians,2,False\n" +
		"p7,t3,1200,Blue,Huns,1,True\n" +
		"p8,t3,1800,Red,Huns,2,False\n"
	fullQ1 = "token\nt1\n"
	fullQ2 = "token\nt1\nt3\n"
	fullQ3 = "civ,wins,played,win_pct\nBritons,0,1,0.0000\nFranks,1,1,100.0000\n"
	fullQ4 = "rank,civ,players\n1,Vikings,2\n2,Malians,1\n"
)

func TestLayout(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	runCases(t, []evalCase{
		{
			name:    "public column order with extra columns",
			matches: fullMatches, players: fullPlayers,
			q1: fullQ1, q2: fullQ2, q3: fullQ3, q4: fullQ4,
			report: rep(3, 0, 8, 0),
		},
		{
			name: "shuffled columns",
			matches: "duration,server,extra,map,average_rating,mirror,ladder,token\n" +
				"\"0 days, 02:30:00\",eastus,zz,arena,2100,False,RM_1v1,t1\n" +
				"0:40:00,ukwest,zz,islands,1900,False,RM_TEAM,t2\n" +
				"2:00:00,koreacentral,zz,arena,2300,True,RM_1v1,t3\n",
			players: "winner,civ,note,rating,match\n" +
				"True,Franks,,1100,t1\nFalse,Britons,,1600,t1\n" +
				"True,Vikings,,2100,t2\nTrue,Vikings,,2200,t2\nFalse,Malians,,2300,t2\nFalse,Malians,,1900,t2\n" +
				"True,Huns,,1200,t3\nFalse,Huns,,1800,t3\n",
			q1: fullQ1, q2: fullQ2, q3: fullQ3, q4: fullQ4,
			report: rep(3, 0, 8, 0),
		},
		{
			name:    "CRLF line endings",
			matches: crlf(fullMatches), players: crlf(fullPlayers),
			q1: fullQ1, q2: fullQ2, q3: fullQ3, q4: fullQ4,
			report: rep(3, 0, 8, 0),
		},
		{
			name:    "UTF-8 BOM at the start of both files",
			matches: "\uFEFF" + fullMatches, players: "\uFEFF" + fullPlayers,
			q1: fullQ1, q2: fullQ2, q3: fullQ3, q4: fullQ4,
			report: rep(3, 0, 8, 0),
		},
		{
			name:    "UTF-8 BOM before a quoted header",
			matches: "\uFEFF\"token\",ladder,mirror,average_rating,map,server,duration\r\nq,x,,2001,m,eastus,3:00:00\r\n",
			players: "\uFEFF\"match\",\"rating\",\"civ\",\"winner\"\r\n",
			q1:      "token\nq\n", q2: q2Empty, q3: q3Empty, q4: q4Empty,
			report: rep(1, 0, 0, 0),
		},
		{
			name: "quoted fields, CRLF, no final newline",
			matches: "\"token\",\"ladder\",\"mirror\",\"average_rating\",\"map\",\"server\",\"duration\"\r\n" +
				"\"t1\",\"RM_1v1\",\"false\",\"2100\",\"arena\",\"eastus\",\"0 days, 02:30:00\"\r\n" +
				"\"t2\",\"RM_TEAM\",\"\",\"\",\"islands\",\"\",\"\"",
			players: "match,rating,civ,winner\r\n" +
				"t1,\"1100\",\"Franks\",\"true\"\r\n" +
				"t1,1600,\"Britons\",false\r\n" +
				"t2,2100,\"Vikings\",true\r\n" +
				"t2,2300,\"Vikings\",false",
			q1: fullQ1, q2: "token\nt1\n", q3: fullQ3, q4: "rank,civ,players\n1,Vikings,2\n",
			report: rep(2, 0, 4, 0),
		},
		{
			name:    "header name match is exact",
			matches: "token,ladder,mirror,average_rating,map,server,duration,Token\n" + "a,x,,2001,m,eastus,3:00:00,b\n",
			players: ph,
			q1:      "token\na\n", q2: q2Empty, q3: q3Empty, q4: q4Empty,
			report: rep(1, 0, 0, 0),
		},
	})
}

func TestMalformed(t *testing.T) {
	runCases(t, []evalCase{{
		name: "wrong field counts and invalid CSV are skipped and counted",
		matches: mh +
			"a,x,,2001,m,eastus,3:00:00\n" +
			"b,x,,2001,m,eastus\n" + // too few
			"c,x,,2001,m,eastus,3:00:00,extra\n" + // too many
			"d,x,,2001,m,eastus,3:0\"0:00\n" + // bare quote: csv.ParseError
			"e,x,,2001,m,eastus,\"3:00:00\"x\n" + // text after a closing quote
			"f,x,,2001,m,eastus,3:00:00\n" + // reading goes on after the errors
			"\n" + // a blank line is no record
			"g,x,,2001,m,eastus,3:00:00\n",
		players: ph +
			"m1,1100,a,true\n" +
			"m1,2000,b,false\n" +
			"m1,2000,b,false,extra\n" + // malformed: m1 still has exactly two rows
			"m1,2000\n" +
			"m2,1100,a,true\n" +
			"m2,2000,b,false\n" +
			"m2,2000,b,\"false\n" + // unterminated quote: one ParseError up to the end
			"m3,1100,a,true\n",
		q1:     "token\na\nf\ng\n",
		q2:     "token\nm1\nm2\n",
		q3:     q3Empty,
		q4:     q4Empty,
		report: rep(7, 4, 7, 3),
	}})
}

func TestOutputQuoting(t *testing.T) {
	runCases(t, []evalCase{{
		name: "fields with comma, quote, line breaks; empty token",
		matches: mh +
			"\"a,b\",x,,2001,m,eastus,3:00:00\n" +
			"\"say \"\"hi\"\"\",x,,2001,m,eastus,3:00:00\n" +
			"\"line\nbreak\",x,,2001,m,eastus,3:00:00\n" +
			"\"cr\rhere\",x,,2001,m,eastus,3:00:00\n" +
			",x,,2001,m,eastus,3:00:00\n" + // the empty token qualifies too
			"plain space,x,,2001,m,eastus,3:00:00\n" +
			"A1,RM_1v1,false,,arena,,\n" +
			"I1,RM_TEAM,,,islands,,\n",
		players: ph +
			"A1,,\"Holy, Roman\",true\n" +
			"A1,,\"The \"\"Best\"\"\",false\n" +
			"I1,2100,\"Holy, Roman\",true\n" +
			"I1,2100,\"multi\r\nline\",true\n", // \r\n inside quotes reads as \n
		q1:     "token\n\n\"a,b\"\n\"cr\rhere\"\n\"line\nbreak\"\nplain space\n\"say \"\"hi\"\"\"\n",
		q2:     q2Empty,
		q3:     "civ,wins,played,win_pct\n\"Holy, Roman\",1,1,100.0000\n\"The \"\"Best\"\"\",0,1,0.0000\n",
		q4:     "rank,civ,players\n1,\"Holy, Roman\",1\n2,\"multi\nline\",1\n",
		report: rep(8, 0, 4, 0),
	}})
}

func TestMissingColumn(t *testing.T) {
	for _, c := range []struct {
		name, matches, players, want string
	}{
		{"matches without duration", "token,ladder,mirror,average_rating,map,server\n", ph,
			`matches.csv: header has no "duration" column`},
		{"matches without token (case differs)", "Token,ladder,mirror,average_rating,map,server,duration\n", ph,
			`matches.csv: header has no "token" column`},
		{"matches with a padded name", mh[:len(mh)-len("duration\n")] + " duration\n", ph,
			`matches.csv: header has no "duration" column`},
		{"players without winner", mh, "match,rating,civ\n",
			`match_players.csv: header has no "winner" column`},
		{"players without match (public token column is not it)", mh, "token,rating,civ,winner\n",
			`match_players.csv: header has no "match" column`},
		{"players missing, matches has rows", mh + "a,x,,2001,m,eastus,3:00:00\n", "match,civ,winner\nm,c,true\n",
			`match_players.csv: header has no "rating" column`},
		{"both missing: matches reported first", "token\n", "match\n",
			`matches.csv: header has no "ladder" column`},
		{"empty matches file", "", ph, `matches.csv: no header row`},
		{"empty players file", mh, "", `match_players.csv: no header row`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Evaluate(strings.NewReader(c.matches), strings.NewReader(c.players))
			if err == nil || err.Error() != c.want {
				t.Fatalf("got error %v, want %q", err, c.want)
			}
		})
	}
}

// TestHeaderRulesAreTheSystems: the reference refuses a repeated required
// column and an oversized header with the system's messages and bound.
func TestHeaderRulesAreTheSystems(t *testing.T) {
	if MaxRecordBytes != schema.MaxRecordBytes {
		t.Fatalf("the reference bounds a record at %d bytes, the system at %d", MaxRecordBytes, schema.MaxRecordBytes)
	}
	if maxHeaderBytes != schema.MaxHeaderBytes {
		t.Fatalf("the reference bounds a header at %d bytes, the system at %d", maxHeaderBytes, schema.MaxHeaderBytes)
	}
	players := "match,rating,civ,winner\nm1,1000,Franks,True\n"
	cases := map[string]string{
		"token,ladder,mirror,average_rating,map,server,duration,map\n":                                `matches.csv: header has the "map" column twice`,
		"token,ladder,mirror,average_rating,map,server,duration," + strings.Repeat("x", 1<<20) + "\n": "matches.csv: the header row is longer than 1048576 bytes",
		"token,ladder,mirror,average_rating,map,server\n":                                             `matches.csv: header has no "duration" column`,
	}
	for header, want := range cases {
		_, err := Evaluate(strings.NewReader(header), strings.NewReader(players))
		sys := errors.New("(none)")
		fields := bytes.Split(bytes.TrimSuffix([]byte(header), []byte("\n")), []byte(","))
		if _, e := schema.ParseMatchHeader(fields); e != nil {
			sys = e
		}
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(sys.Error(), want) {
			t.Errorf("header %.60q: reference %v, system %v; want %q from both", header, err, sys, want)
		}
	}
}

// TestOversizedRecordsAreMalformed: a record longer than the bound is
// malformed whatever it holds, as the gateway counts it.
func TestOversizedRecordsAreMalformed(t *testing.T) {
	long := strings.Repeat("x", 300)
	players := "match,rating,civ,winner\nm1,1500,Aztecs,1\nm2,1500,\"" + long + "\n" + long + "\",0\nm3,1000," + long + ",1\nm4,900,Celts,0\n"
	matches := "token,ladder,mirror,average_rating,map,server,duration\n"
	res, err := evaluate(context.Background(), MatchesFile, strings.NewReader(matches), PlayersFile, strings.NewReader(players), 200)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Report.Players; r.Rows != 4 || r.Malformed != 2 {
		t.Fatalf("players report %+v, want 4 rows, 2 malformed", r)
	}
}
