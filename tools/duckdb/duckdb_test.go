package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/reference"
)

// answerAndCompare runs Answer on two files and checks its four outputs
// are byte-equal to the reference evaluator's; it returns them.
func answerAndCompare(t *testing.T, matches, players string) map[string]string {
	t.Helper()
	want, err := reference.EvaluateFiles(matches, players)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Answer(context.Background(), Options{Matches: matches, Players: players, Out: out}); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	got := map[string]string{}
	for name, w := range want.Files() {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = string(b)
		if !bytes.Equal(b, w) {
			t.Errorf("%s differs from the reference's:\n got: %.600q\nwant: %.600q", name, b, w)
		}
	}
	return got
}

// TestGeneratedDatasets compares with the reference on datasets of
// `wololo datagen`: messy values, malformed rows, duplicated matches,
// orphan players, and every layout variant.
func TestGeneratedDatasets(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  datagen.Config
	}{
		{"plain", datagen.Config{Matches: 20000, Seed: 5}},
		{"shuffled-crlf-quoted", datagen.Config{Matches: 8000, Seed: 11, ShuffleColumns: true, CRLF: true, QuoteAll: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := datagen.WriteDir(c.cfg, dir); err != nil {
				t.Fatal(err)
			}
			got := answerAndCompare(t, filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv"))
			for name, body := range got {
				if strings.Count(body, "\n") < 2 {
					t.Errorf("%s has no rows: the comparison proves little", name)
				}
			}
		})
	}
}

func writeFiles(t *testing.T, matches, players string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	m, p := filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv")
	if err := os.WriteFile(m, []byte(matches), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(players), 0o644); err != nil {
		t.Fatal(err)
	}
	return m, p
}

// edgeMatches holds the value forms of docs/queries.md at their bounds.
// Column order is not the contract's; "extra" is unused.
const edgeMatches = "extra,server,token,average_rating,duration,ladder,map,mirror\n" +
	// Q1: the rating bound, exact beyond a DECIMAL(38,18).
	"x,eastus,r2000,2000,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,r2000w,2000.0000000000000000000000001,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,r2000d,2000.000000000000000001,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,r1999w,1999.99999999999999999999999999,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,rhuge,123456789012345678901234567890,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,r6,2000.000001,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,r7,2000.0000001,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,r7zeros,2000.0000000,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,r11,99999999999,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,r12,999999999999.5,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,rmean,2000.3333333333333,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,rmeanlow,1999.6666666666667,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,rneg,-2500,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,rnegw,-2500.0000000001,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,rzeros,0002000.5000,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,rplus,+2500,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,rexp,2.5e3,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,rspace, 2500,3:00:00,RM_1v1,arena,false\n" +
	"x,eastus,rdot,2500.,3:00:00,RM_1v1,arena,false\n" +
	// Q1: durations.
	"x,koreacentral,d7200,2500,2:00:00,RM_1v1,arena,false\n" +
	"x,koreacentral,d7201,2500,2:00:01,RM_1v1,arena,false\n" +
	"x,koreacentral,d7201p,2500,02:00:01,RM_1v1,arena,false\n" +
	"x,koreacentral,dday,2500,\"1 day, 0:00:00\",RM_1v1,arena,false\n" +
	"x,koreacentral,d0days,2500,\"0 days, 2:00:01\",RM_1v1,arena,false\n" +
	"x,koreacentral,d0days2,2500,\"0 days, 1:59:59\",RM_1v1,arena,false\n" +
	"x,koreacentral,dmanydays,2500,\"123456789012345678901234 days, 0:00:00\",RM_1v1,arena,false\n" +
	"x,koreacentral,d175,2500,1:75:00,RM_1v1,arena,false\n" +
	"x,koreacentral,dshort,2500,2:0:01,RM_1v1,arena,false\n" +
	"x,koreacentral,d3h,2500,123:00:00,RM_1v1,arena,false\n" +
	"x,koreacentral,dnospace,2500,\"1 day,3:00:00\",RM_1v1,arena,false\n" +
	"x,koreacentral,dlead,2500, 3:00:00,RM_1v1,arena,false\n" +
	"x,southeastasia,dup,2500,3:00:00,RM_1v1,arena,false\n" +
	"x,southeastasia,dup,2500,3:00:00,RM_1v1,arena,false\n" +
	"x,westus,wrongserver,2500,3:00:00,RM_1v1,arena,false\n" +
	"x,EastUS,casedserver,2500,3:00:00,RM_1v1,arena,false\n" +
	// Q3: mirror forms; Q4: islands.
	"x,eastus,a1,1000,0:30:00,RM_1v1,arena,FALSE\n" +
	"x,eastus,a2,1000,0:30:00,RM_1v1,arena,0\n" +
	"x,eastus,a3,1000,0:30:00,RM_1v1,arena,fAlSe\n" +
	"x,eastus,a4,1000,0:30:00,RM_1v1,arena,True\n" +
	"x,eastus,a5,1000,0:30:00,RM_1v1,arena,no\n" +
	"x,eastus,a6,1000,0:30:00,RM_1v1,Arena,false\n" +
	"x,eastus,a7,1000,0:30:00,RM_1v1,arena,\n" +
	"x,eastus,i1,1000,0:30:00,RM_TEAM,islands,true\n" +
	"x,eastus,i2,1000,0:30:00,RM_TEAM,islands,\n" +
	// Malformed: too few and too many fields.
	"x,eastus,bad1,2500,3:00:00,RM_1v1,arena\n" +
	"x,eastus,bad2,2500,3:00:00,RM_1v1,arena,false,extra\n"

const edgePlayers = "civ,winner,match,rating\n" +
	// Q2 pairs: the 10 × winner ≤ 7 × loser bound, exactly.
	"Franks,true,p-eq,1400\n" + "Britons,false,p-eq,2000\n" +
	"Franks,true,p-over,1400.000000000000000001\n" + "Britons,false,p-over,2000\n" +
	"Franks,true,p-6,1400.000001\n" + "Britons,false,p-6,2000.000002\n" +
	"Franks,true,p-7,1400.0000001\n" + "Britons,false,p-7,2000.0000002\n" +
	"Franks,true,p-7b,1400.0000001\n" + "Britons,false,p-7b,2000.0000001\n" +
	"Franks,true,p-wide,1400.0000000000000000000000001\n" + "Britons,false,p-wide,2000\n" +
	"Franks,TRUE,p-wide2,1400\n" + "Britons,0,p-wide2,2000.00000000000000000000000001\n" +
	"Franks,1,p-wide3,1400\n" + "Britons,False,p-wide3,1999.99999999999999999999999999\n" +
	"Franks,true,p-1000,1000\n" + "Britons,false,p-1000,2000\n" +
	"Franks,true,p-1000w,1000.00000000000000000000000001\n" + "Britons,false,p-1000w,2000\n" +
	"Franks,true,p-norating,1100\n" + "Britons,false,p-norating,\n" +
	"Franks,true,p-two-winners,1100\n" + "Britons,true,p-two-winners,2000\n" +
	"Franks,true,p-three,1100\n" + "Britons,false,p-three,2000\n" + "Celts,false,p-three,2000\n" +
	"Franks,yes,p-badbool,1100\n" + "Britons,false,p-badbool,2000\n" +
	// Q3 on a1..a7: civs with a comma and a quote, an empty civ, a missing winner.
	"\"Civ, with comma\",true,a1,1000\n" + "\"Civ \"\"quoted\"\"\",false,a1,1000\n" +
	"\"Civ, with comma\",false,a2,1000\n" + ",true,a2,1000\n" +
	"Aztecs,true,a3,1000\n" + "Aztecs,maybe,a3,1000\n" + "Aztecs,0,a3,1000\n" +
	"Aztecs,1,a4,1000\n" + "Aztecs,1,a5,1000\n" + "Aztecs,1,a6,1000\n" + "Aztecs,1,a7,1000\n" +
	// Q4 on i1, i2: ties, more than five civs, the rating bound.
	"Vikings,true,i1,2001\n" + "Vikings,true,i1,2000.0000000000000000000000001\n" + "Vikings,true,i1,2000\n" +
	"Mongols,true,i1,2500\n" + "Mongols,true,i2,2500\n" +
	"Huns,true,i1,2500\n" + "Huns,true,i2,2500\n" +
	"Goths,true,i1,2500\n" + "Byzantines,true,i2,2500\n" + "Celts,true,i2,2500\n" + "Zapotec,true,i2,99999999999999999999999\n" +
	",true,i1,2500\n" + "Teutons,true,i1,1999\n" +
	// Malformed.
	"Franks,true,p-bad\n" + "Franks,true,p-bad,1,2\n"

// TestEdgeValues compares with the reference on every value form at its
// bound, and checks a few answers outright so that the comparison is not
// vacuous.
func TestEdgeValues(t *testing.T) {
	m, p := writeFiles(t, edgeMatches, edgePlayers)
	got := answerAndCompare(t, m, p)
	for _, c := range []struct{ file, want string }{
		{"q1.csv", "token\nd0days\nd175\nd7201\nd7201p\ndday\ndmanydays\ndup\nr11\nr12\nr2000d\nr2000w\nr6\nr7\nrhuge\nrmean\nrzeros\n"},
		{"q2.csv", "token\np-1000w\np-6\np-7\np-eq\np-wide2\n"},
		{"q3.csv", "civ,wins,played,win_pct\nAztecs,1,2,50.0000\n\"Civ \"\"quoted\"\"\",0,1,0.0000\n\"Civ, with comma\",1,2,50.0000\n"},
		{"q4.csv", "rank,civ,players\n1,Huns,2\n2,Mongols,2\n3,Vikings,2\n4,Byzantines,1\n5,Celts,1\n"},
	} {
		if got[c.file] != c.want {
			t.Errorf("%s = %q, want %q", c.file, got[c.file], c.want)
		}
	}
}

// TestEmptyAnswers: header-only files give header-only answers.
func TestEmptyAnswers(t *testing.T) {
	m, p := writeFiles(t, "token,ladder,mirror,average_rating,map,server,duration\n", "match,rating,civ,winner\r\n")
	got := answerAndCompare(t, m, p)
	if got["q3.csv"] != "civ,wins,played,win_pct\n" {
		t.Errorf("q3.csv = %q", got["q3.csv"])
	}
}

// TestHeaderErrors: the contract's header rules, before any row is read.
func TestHeaderErrors(t *testing.T) {
	okPlayers := "match,rating,civ,winner\n"
	for _, c := range []struct{ name, matches, players, want string }{
		{"missing", "token,ladder,mirror,average_rating,map,server\n", okPlayers, `header has no "duration" column`},
		{"twice", "token,ladder,mirror,average_rating,map,server,duration,map\n", okPlayers, `header has the "map" column twice`},
		{"players swapped", okPlayers, okPlayers, `header has no "token" column`},
		{"empty", "", okPlayers, "no header row"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, p := writeFiles(t, c.matches, c.players)
			_, err := Answer(context.Background(), Options{Matches: m, Players: p, Out: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one with %q", err, c.want)
			}
		})
	}
}

func TestCompareScaled(t *testing.T) {
	for _, c := range []struct {
		ka   int64
		a    string
		kb   int64
		b    string
		want int
	}{
		{1, "2000", 1, "2000.0", 0},
		{1, "2000.0000000000000000000000001", 1, "2000", 1},
		{10, "1400", 7, "2000", 0},
		{10, "1400.00000000000000000000001", 7, "2000", 1},
		{1, "-0002.5", 1, "-2.49", -1},
		{1, "0100", 1, "64", 1}, // decimal, not octal
	} {
		got, err := compareScaled(c.ka, c.a, c.kb, c.b)
		if err != nil || got != c.want {
			t.Errorf("compareScaled(%d, %s, %d, %s) = %d, %v; want %d", c.ka, c.a, c.kb, c.b, got, err, c.want)
		}
	}
	if _, err := compareScaled(1, "1e3", 1, "1"); err == nil {
		t.Error("1e3 accepted")
	}
}

// TestRunUsage: a wrong command line is a usage error.
func TestRunUsage(t *testing.T) {
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"--matches", "m.csv"}, &stderr); err != errUsage {
		t.Errorf("run without --players: %v", err)
	}
	if !strings.Contains(stderr.String(), "usage: duckdb-queries") {
		t.Errorf("no usage: %q", stderr.String())
	}
}
