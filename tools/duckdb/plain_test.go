package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/reference"
)

// plainAgainstReference runs the plain queries and the reference on two
// files and returns, per output file, whether plain DuckDB's is byte-equal
// to the reference's, and both answers.
func plainAgainstReference(t *testing.T, matches, players string) (equal map[string]bool, plain, ref map[string]string) {
	t.Helper()
	want, err := reference.EvaluateFiles(matches, players)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	out := filepath.Join(t.TempDir(), "plain")
	if _, err := Answer(context.Background(), Options{Matches: matches, Players: players, Out: out, Plain: true}); err != nil {
		t.Fatalf("Answer --plain: %v", err)
	}
	equal, plain, ref = map[string]bool{}, map[string]string{}, map[string]string{}
	for name, w := range want.Files() {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		equal[name], plain[name], ref[name] = bytes.Equal(b, w), string(b), string(w)
	}
	return equal, plain, ref
}

// TestPlainGenerated pins, per query, whether plain DuckDB's answers equal
// the reference's on generated datasets, whose messy values are where
// DuckDB's casts and the contract's value rules part (TestPlainEdges says
// which). A change of the plain queries, of DuckDB or of the generator
// that moves one shows here.
func TestPlainGenerated(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   datagen.Config
		equal map[string]bool
	}{
		{"plain", datagen.Config{Matches: 20000, Seed: 5}, map[string]bool{"q1.csv": false, "q2.csv": false, "q3.csv": false, "q4.csv": true}},
		{"shuffled-crlf-quoted", datagen.Config{Matches: 8000, Seed: 11, ShuffleColumns: true, CRLF: true, QuoteAll: true},
			map[string]bool{"q1.csv": false, "q2.csv": true, "q3.csv": false, "q4.csv": true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := datagen.WriteDir(c.cfg, dir); err != nil {
				t.Fatal(err)
			}
			equal, _, _ := plainAgainstReference(t, filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv"))
			for name, want := range c.equal {
				if equal[name] != want {
					t.Errorf("%s: plain DuckDB equal to the reference %v, want %v", name, equal[name], want)
				}
			}
		})
	}
}

// plainEdgeMatches and plainEdgePlayers hold one row per place where
// DuckDB's casts and the contract part, and rows both read alike.
const plainEdgeMatches = "token,ladder,mirror,average_rating,map,server,duration\n" +
	// Q1: both.
	"ok,RM_1v1,false,2500,arena,eastus,3:00:00\n" +
	// Q1: ratings DuckDB's DOUBLE reads and the contract does not (NaN
	// is above every number in DuckDB).
	"plus,RM_1v1,false,+2500,arena,eastus,3:00:00\n" +
	"dot,RM_1v1,false,2500.,arena,eastus,3:00:00\n" +
	"exp,RM_1v1,false,2.5e+03,arena,eastus,3:00:00\n" +
	"nan,RM_1v1,false,NaN,arena,eastus,3:00:00\n" +
	"space,RM_1v1,false, 2500,arena,eastus,3:00:00\n" +
	// Q1: missing for both.
	"comma,RM_1v1,false,\"2,500\",arena,eastus,3:00:00\n" +
	// Q1: the contract's exact decimal is over 2000, the DOUBLE is 2000.
	"wide,RM_1v1,false,2000.0000000000000000000000001,arena,eastus,3:00:00\n" +
	// Q1: durations the contract reads and DuckDB's INTERVAL does not.
	"days,RM_1v1,false,2500,arena,eastus,\"1 day, 0:00:00\"\n" +
	"clock,RM_1v1,false,2500,arena,eastus,1:75:00\n" +
	// Q3: a mirror DuckDB's BOOLEAN reads as false, the contract as missing.
	"mirno,RM_1v1,no,1000,arena,westus,0:30:00\n" +
	// Q4.
	"isl,RM_TEAM,false,1000,islands,westus,0:30:00\n"

const plainEdgePlayers = "match,rating,civ,winner\n" +
	// Q2: both.
	"p-ok,1400,Franks,true\n" + "p-ok,2000,Britons,false\n" +
	// Q2: a winner DuckDB reads as true, the contract as missing.
	"p-yes,1400,Franks,yes\n" + "p-yes,2000,Britons,false\n" +
	// Q2: a NaN loser: above every number in DuckDB, missing in the contract.
	"p-nan,1400,Franks,true\n" + "p-nan,NaN,Britons,false\n" +
	// Q2: 10 × winner just over 7 × loser exactly, equal as DOUBLEs.
	"p-wide,1400.0000000000000000000000001,Franks,true\n" + "p-wide,2000,Britons,false\n" +
	// Q3: ok counts for both; mirno for DuckDB only; T and Y are
	// DuckDB's booleans, not the contract's.
	"ok,1000,Aztecs,true\n" + "ok,1000,Aztecs,T\n" + "ok,1000,Aztecs,N\n" +
	"mirno,1000,Aztecs,false\n" +
	// Q4: ratings over 2000 for DuckDB only, and one for the contract only.
	"isl,2500,Huns,true\n" + "isl,+2500,Mongols,true\n" + "isl,NaN,Mongols,true\n" + "isl,2000.0000000000000000000000001,Vikings,true\n"

// TestPlainEdges pins plain DuckDB's answers, and the reference's, where
// they part: the place each difference comes from.
func TestPlainEdges(t *testing.T) {
	m, p := writeFiles(t, plainEdgeMatches, plainEdgePlayers)
	_, plain, ref := plainAgainstReference(t, m, p)
	for _, c := range []struct{ file, plain, ref string }{
		{"q1.csv", "token\ndot\nexp\nnan\nok\nplus\nspace\n", "token\nclock\ndays\nok\nwide\n"},
		{"q2.csv", "token\np-nan\np-ok\np-wide\np-yes\n", "token\np-ok\n"},
		{"q3.csv", "civ,wins,played,win_pct\nAztecs,2,4,50.0000\n", "civ,wins,played,win_pct\nAztecs,1,1,100.0000\n"},
		{"q4.csv", "rank,civ,players\n1,Mongols,2\n2,Huns,1\n", "rank,civ,players\n1,Huns,1\n2,Vikings,1\n"},
	} {
		if plain[c.file] != c.plain {
			t.Errorf("plain DuckDB's %s = %q, want %q", c.file, plain[c.file], c.plain)
		}
		if ref[c.file] != c.ref {
			t.Errorf("the reference's %s = %q, want %q", c.file, ref[c.file], c.ref)
		}
	}
}

// TestPlainCasts pins DuckDB's try_cast on the value forms of the
// contract and of the generator, beside what the contract makes of them
// (docs/queries.md, "Values"): the rows where the two columns differ are
// where plain DuckDB parts from the reference.
func TestPlainCasts(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		typ, in string
		duck    string // DuckDB's try_cast as text, "NULL" for NULL
		rule    string // the contract's value, "missing" for missing
	}{
		{"DOUBLE", "2034", "2034.0", "2034"},
		{"DOUBLE", "-5.25", "-5.25", "-5.25"},
		{"DOUBLE", "1500.", "1500.0", "missing"},
		{"DOUBLE", "1.5e+03", "1500.0", "missing"},
		{"DOUBLE", "+1500", "1500.0", "missing"},
		{"DOUBLE", " 2500", "2500.0", "missing"},
		{"DOUBLE", "1_000", "1000.0", "missing"},
		{"DOUBLE", "NaN", "nan", "missing"},
		{"DOUBLE", "inf", "inf", "missing"},
		{"DOUBLE", "1,500", "NULL", "missing"},
		{"DOUBLE", "N/A", "NULL", "missing"},
		{"DOUBLE", "2000.0000000000000000000000001", "2000.0", "2000.0000000000000000000000001"},
		{"BOOLEAN", "True", "true", "true"},
		{"BOOLEAN", "fAlse", "false", "false"},
		{"BOOLEAN", "0", "false", "false"},
		{"BOOLEAN", "yes", "true", "missing"},
		{"BOOLEAN", "no", "false", "missing"},
		{"BOOLEAN", "Y", "true", "missing"},
		{"BOOLEAN", "N", "false", "missing"},
		{"BOOLEAN", "T", "true", "missing"},
		{"BOOLEAN", "F", "false", "missing"},
		{"BOOLEAN", "2", "NULL", "missing"},
		{"BOOLEAN", "None", "NULL", "missing"},
		{"INTERVAL", "2:00:01", "02:00:01", "7201 s"},
		{"INTERVAL", "02:00:01", "02:00:01", "7201 s"},
		{"INTERVAL", "123:00:00", "123:00:00", "442800 s"},
		{"INTERVAL", "1 day, 2:03:04", "NULL", "93784 s"},
		{"INTERVAL", "2 days, 0:00:01", "NULL", "172801 s"},
		{"INTERVAL", "1:75:00", "NULL", "8100 s"},
		{"INTERVAL", "2:0:01", "02:00:01", "missing"},
		{"INTERVAL", "0:42", "00:42:00", "missing"},
		{"INTERVAL", "unknown", "NULL", "missing"},
	} {
		var got sql.NullString
		if err := db.QueryRow("SELECT CAST(try_cast(? AS "+c.typ+") AS VARCHAR)", c.in).Scan(&got); err != nil {
			t.Fatalf("try_cast(%q AS %s): %v", c.in, c.typ, err)
		}
		if !got.Valid {
			got.String = "NULL"
		}
		if got.String != c.duck {
			t.Errorf("try_cast(%q AS %s) = %s, want %s (the contract: %s)", c.in, c.typ, got.String, c.duck, c.rule)
		}
	}
}
