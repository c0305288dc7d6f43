package queries_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
)

// TestFiles checks the embedded files are the four queries the reference
// answers, no more, and Names lists them in order.
func TestFiles(t *testing.T) {
	got, err := fs.Glob(queries.FS(), "*")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := reference.Evaluate(strings.NewReader("token,ladder,mirror,average_rating,map,server,duration\n"), strings.NewReader("match,rating,civ,winner\n"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range slices.Sorted(maps.Keys(ref.Answers)) {
		want = append(want, n+".sql")
	}
	if len(want) != 4 || !slices.Equal(got, want) {
		t.Errorf("files %v, want the reference's four queries %v", got, want)
	}
	if !slices.Equal(queries.Names, slices.Sorted(maps.Keys(ref.Answers))) {
		t.Errorf("Names %v, want %v", queries.Names, want)
	}
	for _, n := range queries.Names {
		if s, ok := queries.Text(n); !ok || !strings.Contains(s, "SELECT") {
			t.Errorf("Text(%q) = %q, %v", n, s, ok)
		}
	}
	if _, ok := queries.Text("../queries"); ok {
		t.Error("Text accepted a path")
	}
}

// edgeRows are rows the generator does not write, appended to its files:
// non-UTF-8 bytes, numbers wider than a double, duplicated tokens, and a
// tie in Q4 decided by the civ's name.
var edgeMatches = [][7]string{
	// token, ladder, mirror, average_rating, map, server, duration
	{"\xff\xfe", "RM_1v1", "false", "2000.000000000000000000000000001", "arena", "eastus", "1 day, 0:00:00"},
	{"\xff\xfe", "RM_1v1", "FALSE", "99999999999999999999999999999999", "arena", "eastus", "2:00:01"},
	{"wide", "RM_TEAM", "0", "2000.0000000000000000000000000000", "islands", "koreacentral", "99999999999999999999 days, 0:00:00"},
	{"wide", "RM_TEAM", "0", "", "islands", "koreacentral", ""},
	{"tie", "RM_TEAM", "true", "x", "islands", "eastus", "2:00:00"},
}

var edgePlayers = [][4]string{
	// match, rating, civ, winner
	{"\xff\xfe", "1000.00000000000000000000000001", "\xc3\x28civ", "true"},
	{"\xff\xfe", "1428.571428571428571428571428574", "Huns", "false"},
	{"wide", "2000.00000000000000000000000000001", "Zzz,quoted\"civ", "1"},
	{"wide", "2000.00000000000000000000000000001", "Aaa", "0"},
	{"tie", "3000", "Zzz,quoted\"civ", "true"},
	{"tie", "3000", "Aaa", "true"},
	{"tie", "2000", "Aaa", "true"},
}

// withEdges appends the edge rows to a generated file, in the order of
// its header.
func withEdges(t *testing.T, file []byte, names []string, rows [][]string) []byte {
	t.Helper()
	header, _, _ := bytes.Cut(file, []byte("\n"))
	cols := strings.Split(strings.TrimSuffix(string(header), "\r"), ",")
	out := bytes.Clone(file)
	for _, r := range rows {
		fields := make([]string, len(cols))
		for i, c := range cols {
			c = strings.Trim(c, `"`)
			if k := slices.Index(names, c); k >= 0 {
				fields[i] = r[k]
			}
		}
		for i, f := range fields {
			if i > 0 {
				out = append(out, ',')
			}
			if strings.ContainsAny(f, ",\"\r\n") {
				f = `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
			}
			out = append(out, f...)
		}
		out = append(out, '\n')
	}
	return out
}

// TestFourQueriesMatchTheReference runs q1.sql .. q4.sql through the SQL
// engine (parse, plan, Execute) over generated datasets, and compares each
// output with the reference evaluator's, byte for byte.
func TestFourQueriesMatchTheReference(t *testing.T) {
	configs := []datagen.Config{
		{Matches: 3000, Seed: 1},
		{Matches: 3000, Seed: 2, ShuffleColumns: true},
		{Matches: 3000, Seed: 3, CRLF: true, QuoteAll: true},
		{Matches: 20000, Seed: 4},
	}
	if testing.Short() {
		configs = configs[:2]
	}
	for _, cfg := range configs {
		t.Run(fmt.Sprintf("seed%d", cfg.Seed), func(t *testing.T) {
			var m, p bytes.Buffer
			if _, err := datagen.Generate(cfg, &m, &p); err != nil {
				t.Fatal(err)
			}
			mRows := make([][]string, len(edgeMatches))
			for i, r := range edgeMatches {
				mRows[i] = r[:]
			}
			pRows := make([][]string, len(edgePlayers))
			for i, r := range edgePlayers {
				pRows[i] = r[:]
			}
			matches := withEdges(t, m.Bytes(), []string{"token", "ladder", "mirror", "average_rating", "map", "server", "duration"}, mRows)
			players := withEdges(t, p.Bytes(), []string{"match", "rating", "civ", "winner"}, pRows)
			ref, err := reference.Evaluate(bytes.NewReader(matches), bytes.NewReader(players))
			if err != nil {
				t.Fatal(err)
			}
			testkit.SameBytes(t, runQueries(t, matches, players), ref.Answers)
			for name, want := range ref.Answers {
				if bytes.Count(want, []byte("\n")) < 2 && name != "q2" {
					t.Errorf("%s: the reference's answer is empty: the test checks nothing", name)
				}
			}
		})
	}
}

// runQueries compiles and executes the four embedded queries.
func runQueries(t *testing.T, matches, players []byte) map[string][]byte {
	t.Helper()
	mt, err := exec.ReadCSV(bytes.NewReader(matches), reference.MaxRecordBytes)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := exec.ReadCSV(bytes.NewReader(players), reference.MaxRecordBytes)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]*exec.Table{"matches": mt, "match_players": pt}
	cat := sql.Catalog{"matches": mt.Columns, "match_players": pt.Columns}
	out := map[string][]byte{}
	for _, name := range queries.Names {
		text, _ := queries.Text(name)
		root, err := sql.Compile(text, cat)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The plan runs as it would after travelling: through JSON.
		js, err := plan.Encode(root)
		if err != nil {
			t.Fatal(err)
		}
		decoded, err := plan.Decode(js)
		if err != nil {
			t.Fatal(err)
		}
		res, err := oracle.Execute(decoded, tables)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, root)
		}
		out[name] = res.CSV()
	}
	return out
}
