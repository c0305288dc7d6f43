package datagen

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

type output struct {
	m, p []byte
	st   Stats
	c    counters
}

func genBytes(tb testing.TB, cfg Config) output {
	tb.Helper()
	var m, p bytes.Buffer
	st, c, err := generate(context.Background(), cfg, &m, &p)
	if err != nil {
		tb.Fatal(err)
	}
	return output{m.Bytes(), p.Bytes(), st, c}
}

// Generated data is cached per config: several tests look at the same one.
var cache = map[Config]output{}

func cached(tb testing.TB, cfg Config) output {
	if o, ok := cache[cfg]; ok {
		return o
	}
	o := genBytes(tb, cfg)
	cache[cfg] = o
	return o
}

var (
	requiredMatchCols  = []string{"token", "ladder", "mirror", "average_rating", "map", "server", "duration"}
	requiredPlayerCols = []string{"match", "rating", "civ", "winner"}
)

func TestDeterministic(t *testing.T) {
	for _, cfg := range []Config{
		{Matches: 3000, Seed: 7},
		{Matches: 3000, Seed: 7, ShuffleColumns: true, CRLF: true, QuoteAll: true},
		{Matches: 1, Seed: 7},
	} {
		a, b := genBytes(t, cfg), genBytes(t, cfg)
		if !bytes.Equal(a.m, b.m) || !bytes.Equal(a.p, b.p) {
			t.Errorf("%+v: two runs differ", cfg)
		}
		if a.st.Bytes != int64(len(a.m)+len(a.p)) {
			t.Errorf("Stats.Bytes = %d, wrote %d", a.st.Bytes, len(a.m)+len(a.p))
		}
		cfg.Seed++
		c := genBytes(t, cfg)
		if bytes.Equal(a.m, c.m) || bytes.Equal(a.p, c.p) {
			t.Errorf("%+v: seeds %d and %d give the same data", cfg, cfg.Seed-1, cfg.Seed)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	if _, err := Generate(Config{Matches: -1}, io.Discard, io.Discard); err == nil {
		t.Error("Matches -1: no error")
	}
	o := genBytes(t, Config{Matches: 1, Seed: 1})
	if o.st.Matches != 1 || o.st.MatchRows < 1 || o.st.Players < 2 {
		t.Errorf("Matches 1: %+v", o.st)
	}
}

func TestVariants(t *testing.T) {
	base := Config{Matches: 20000, Seed: 3}
	o := cached(t, base)
	want := runQueries(readTable(t, o.m), readTable(t, o.p))
	for _, v := range []Config{
		base,
		{Matches: 20000, Seed: 3, CRLF: true},
		{Matches: 20000, Seed: 3, QuoteAll: true},
		{Matches: 20000, Seed: 3, ShuffleColumns: true},
		{Matches: 20000, Seed: 3, ShuffleColumns: true, CRLF: true, QuoteAll: true},
	} {
		o := cached(t, v)
		for _, f := range []struct {
			name     string
			data     []byte
			required []string
			header   [numPlayerFields + 4]string
			bad      int64
			rows     int64
		}{
			{name: "matches.csv", data: o.m, required: requiredMatchCols, bad: o.c.malformedMatchRows, rows: o.st.MatchRows},
			{name: "match_players.csv", data: o.p, required: requiredPlayerCols, bad: o.c.malformedPlayerRows, rows: o.st.Players},
		} {
			tb := readTable(t, f.data)
			for _, col := range f.required {
				if _, ok := tb.col[col]; !ok {
					t.Errorf("%+v %s: header lacks %q", v, f.name, col)
				}
			}
			if int64(tb.malformed) != f.bad || int64(len(tb.rows)+tb.malformed) != f.rows {
				t.Errorf("%+v %s: %d good + %d malformed rows, generator says %d rows, %d malformed",
					v, f.name, len(tb.rows), tb.malformed, f.rows, f.bad)
			}
			lines, crlf := bytes.Count(f.data, []byte("\n")), bytes.Count(f.data, []byte("\r\n"))
			if v.CRLF && crlf != lines || !v.CRLF && crlf != 0 {
				t.Errorf("%+v %s: %d of %d lines end in CRLF", v, f.name, crlf, lines)
			}
			first := string(f.data[:bytes.IndexByte(f.data, '\n')])
			if v.QuoteAll != strings.HasPrefix(first, `"`) {
				t.Errorf("%+v %s: header %q", v, f.name, first)
			}
			plain := strings.ReplaceAll(first, `"`, "")
			canonical := strings.HasPrefix(plain, "token,winning_team,mirror,ladder,") || strings.HasPrefix(plain, "token,match,rating,color,")
			if v.ShuffleColumns == canonical {
				t.Errorf("%+v %s: header %q", v, f.name, first)
			}
			if v.ShuffleColumns != (len(tb.col) == 12 || len(tb.col) == 8) {
				t.Errorf("%+v %s: %d columns", v, f.name, len(tb.col))
			}
		}
		got := runQueries(readTable(t, o.m), readTable(t, o.p))
		if !slices.Equal(got.q1, want.q1) || !slices.Equal(got.q2, want.q2) || !slices.Equal(got.q3, want.q3) || !slices.Equal(got.q4, want.q4) {
			t.Errorf("%+v: answers %v, base config gives %v", v, got, want)
		}
	}
}

func TestQueriesNonEmpty(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		o := genBytes(t, Config{Matches: 2000, Seed: seed})
		a := runQueries(readTable(t, o.m), readTable(t, o.p))
		if len(a.q1) == 0 || len(a.q2) == 0 || len(a.q3) == 0 || len(a.q4) == 0 {
			t.Errorf("seed %d, 2000 matches: an empty answer: %v", seed, a)
		}
	}
	o := genBytes(t, Config{Matches: 1000, Seed: 1})
	a := runQueries(readTable(t, o.m), readTable(t, o.p))
	if len(a.q1) < 3 || len(a.q2) < 3 || len(a.q3) < 3 || len(a.q4) < 3 {
		t.Errorf("1000 matches: %v; want several rows each", a)
	}
	t.Logf("1000 matches: %v", a)
}

func TestShape(t *testing.T) {
	o := cached(t, Config{Matches: 50000, Seed: 1})
	m, p := readTable(t, o.m), readTable(t, o.p)
	within := func(what string, got, lo, hi float64) {
		t.Helper()
		if got < lo || got > hi {
			t.Errorf("%s = %.4f, want in [%g, %g]", what, got, lo, hi)
		} else {
			t.Logf("%s = %.4f", what, got)
		}
	}
	validToken := func(s string) bool {
		if len(s) != 16 {
			return false
		}
		for _, c := range []byte(s) {
			if !strings.ContainsRune(tokenAlphabet, rune(c)) {
				return false
			}
		}
		return true
	}

	ladderOf := map[string]string{}
	var rows, mirrorSolo, mirrorTrue, days int
	for _, r := range m.rows {
		tok := m.get(r, "token")
		if !validToken(tok) {
			t.Fatalf("bad match token %q", tok)
		}
		if _, dup := ladderOf[tok]; dup {
			rows++
		}
		ladderOf[tok] = m.get(r, "ladder")
		if m.get(r, "ladder") == "RM_1v1" {
			if b := parseBool(m.get(r, "mirror")); b >= 0 {
				mirrorSolo++
				mirrorTrue += b
			}
		}
		if strings.Contains(m.get(r, "duration"), "day") {
			days++
		}
	}
	if rows == 0 {
		t.Error("no duplicated match token")
	}
	within("mirror share of RM_1v1", float64(mirrorTrue)/float64(mirrorSolo), 0.03, 0.08)
	within("multi-day duration share", float64(days)/float64(len(m.rows)), 0.005, 0.02)

	perMatch := map[string]int{}
	civs := map[string]int{}
	var missing, pro, orphans, emptyCiv, invalidWinner, altWinner int
	last, scattered := "", 0
	for _, r := range p.rows {
		match := p.get(r, "match")
		if !validToken(p.get(r, "token")) {
			t.Fatalf("bad player token %q", p.get(r, "token"))
		}
		perMatch[match]++
		if _, ok := ladderOf[match]; !ok {
			orphans++
		}
		if match != last && perMatch[match] > 1 {
			scattered++
		}
		last = match
		rating := p.get(r, "rating")
		if rating == "" {
			missing++
		}
		if v, ok := parseNumber(rating); ok && v > 2000 {
			pro++
		}
		civ := p.get(r, "civ")
		civs[civ]++
		if civ == "" {
			emptyCiv++
		}
		switch w := p.get(r, "winner"); {
		case parseBool(w) < 0:
			invalidWinner++
		case w != "True" && w != "False":
			altWinner++
		}
	}
	n := float64(len(p.rows))
	within("missing rating share", float64(missing)/n, 0.025, 0.04)
	within("rating > 2000 share", float64(pro)/n, 0.08, 0.17)
	within("player rows per match", n/float64(len(perMatch)), 3, 3.5)
	within("player rows next to another row of their match", 1-float64(scattered)/(n-float64(len(perMatch))), 0, 0.05)
	if len(civs) < 36 || orphans == 0 || emptyCiv == 0 || invalidWinner == 0 || altWinner == 0 {
		t.Errorf("civs %d, orphan rows %d, empty civs %d, invalid winners %d, alternative winners %d: want all > 0 and 35+ civs",
			len(civs)-1, orphans, emptyCiv, invalidWinner, altWinner)
	}
	var solo, solo2, team, teamOK, solo3 int
	for match, k := range perMatch {
		switch l, ok := ladderOf[match]; {
		case !ok:
		case strings.HasSuffix(l, "_1v1"):
			solo++
			if k == 2 {
				solo2++
			} else if k == 3 {
				solo3++
			}
		case strings.HasSuffix(l, "_TEAM"):
			team++
			if k == 4 || k == 6 || k == 8 {
				teamOK++
			}
		}
	}
	within("1v1 matches with 2 player rows", float64(solo2)/float64(solo), 0.98, 1)
	within("team matches with 4, 6 or 8 player rows", float64(teamOK)/float64(team), 0.98, 1)
	if solo3 == 0 || o.c.twoWinnerSolos == 0 || m.malformed == 0 || p.malformed == 0 {
		t.Errorf("1v1s with 3 rows %d, with 2 winners %d, malformed rows %d+%d: want all > 0",
			solo3, o.c.twoWinnerSolos, m.malformed, p.malformed)
	}
}

func TestBoundaries(t *testing.T) {
	o := cached(t, Config{Matches: 50000, Seed: 1})
	m, p := readTable(t, o.m), readTable(t, o.p)
	seen := map[string]int{}
	for _, r := range m.rows {
		seen["avg="+m.get(r, "average_rating")]++
		seen["dur="+m.get(r, "duration")]++
	}
	for _, k := range []string{"avg=2000", "avg=2000.0", "dur=2:00:00", "dur=2:00:01", "dur=02:00:01"} {
		if seen[k] == 0 {
			t.Errorf("no match row with %s", k)
		}
	}
	if !bytes.Contains(o.m, []byte(`,"1 day, `)) || !bytes.Contains(o.m, []byte(` days, `)) {
		t.Error(`no quoted "1 day, H:MM:SS" or "N days, H:MM:SS" duration`)
	}
	type pl struct{ rating, winner string }
	groups := map[string][]pl{}
	for _, r := range p.rows {
		groups[p.get(r, "match")] = append(groups[p.get(r, "match")], pl{p.get(r, "rating"), p.get(r, "winner")})
	}
	var onLine, offLine, at1000 int
	for _, g := range groups {
		if len(g) != 2 || parseBool(g[0].winner)+parseBool(g[1].winner) != 1 {
			continue
		}
		w, l := g[0], g[1]
		if parseBool(w.winner) == 0 {
			w, l = l, w
		}
		wr, ok1 := parseNumber(w.rating)
		lr, ok2 := parseNumber(l.rating)
		switch {
		case !ok1 || !ok2:
		case wr == 1000:
			at1000++
		case 10*wr == 7*lr && wr > 1000:
			onLine++
		case 10*wr > 7*lr && 10*wr-7*lr <= 10:
			offLine++
		}
	}
	t.Logf("Q2 pairs exactly on the line %d, just off it %d, winner at 1000 %d", onLine, offLine, at1000)
	if onLine == 0 || offLine == 0 || at1000 == 0 {
		t.Error("missing a Q2 boundary case")
	}
}

func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	cfg := Config{Matches: 500, Seed: 9, CRLF: true}
	want := genBytes(t, cfg)
	// Twice: the second run replaces the first run's files.
	for range 2 {
		st, err := WriteDir(cfg, dir)
		if err != nil {
			t.Fatal(err)
		}
		if st.Bytes != int64(len(want.m)+len(want.p)) {
			t.Errorf("Stats.Bytes = %d, want %d", st.Bytes, len(want.m)+len(want.p))
		}
		for name, data := range map[string][]byte{"matches.csv": want.m, "match_players.csv": want.p} {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s: err %v, %d bytes, want the %d bytes of Generate", name, err, len(got), len(data))
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Errorf("output folder holds %d entries, want 2", len(entries))
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	empty := t.TempDir()
	if _, err := WriteDirContext(ctx, Config{Matches: 5000}, empty); err == nil {
		t.Error("cancelled context: no error")
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("a failed run left %d entries behind", len(entries))
	}
}

// Memory must not grow with the number of matches.
func TestBoundedMemory(t *testing.T) {
	alloc := func(n int64) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := Generate(Config{Matches: n, Seed: 1}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(20000), alloc(200000)
	t.Logf("allocated %d bytes for 20k matches, %d for 200k", small, large)
	if large > 2*small+4<<20 {
		t.Errorf("allocations grow with the data: %d bytes for 20k matches, %d for 200k", small, large)
	}
}

func BenchmarkGenerate(b *testing.B) {
	var rows, size int64
	for b.Loop() {
		st, err := Generate(Config{Matches: 100_000, Seed: 1}, io.Discard, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		rows += st.MatchRows + st.Players
		size += st.Bytes
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(rows)/secs, "rows/s")
	b.ReportMetric(float64(size)/1e6/secs, "MB/s")
}
