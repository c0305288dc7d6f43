package ingest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// ingestEmitter records every row an Ingest emits, copied out at once (the
// Ingest reuses its row and the bytes alias its buffer). Calls other than
// Match and Player are recorded too, so that a test sees them.
type ingestEmitter struct{ rows []string }

var _ stage.Emitter = (*ingestEmitter)(nil)

func (e *ingestEmitter) Match(stream string, m *batch.Match) {
	e.rows = append(e.rows, fmt.Sprintf("%s token=%q ladder=%q map=%q server=%q mirror=%s rating=%s duration=%d",
		stream, m.Token, m.Ladder, m.Map, m.Server, tri(m.Mirror), number(m.AverageRating, m.HasAverageRating), m.DurationSeconds))
}

func (e *ingestEmitter) Player(stream string, p *batch.Player) {
	e.rows = append(e.rows, fmt.Sprintf("%s match=%q civ=%q rating=%s winner=%s",
		stream, p.Match, p.Civ, number(p.Rating, p.HasRating), tri(p.Winner)))
}

func (e *ingestEmitter) Token(stream string, token []byte) {
	e.rows = append(e.rows, fmt.Sprintf("unexpected Token %s %q", stream, token))
}

func (e *ingestEmitter) Civ(stream string, civ string, wins, count int64) {
	e.rows = append(e.rows, fmt.Sprintf("unexpected Civ %s %q %d %d", stream, civ, wins, count))
}

func (e *ingestEmitter) Record(key string, value []byte) {
	e.rows = append(e.rows, fmt.Sprintf("unexpected Record %s %q", key, value))
}

// Batch and End: the operators under test emit rows one at a time.
func (e *ingestEmitter) Batch(string, int, *wololov1.RowBatch) {}
func (e *ingestEmitter) End(string)                            {}

func number(n schema.Number, ok bool) string {
	if !ok {
		return "missing"
	}
	return n.String()
}

func tri(v batch.Tri) string {
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

// csvLine is one physical record of a test file (a blank line, or a record
// that may span several lines) and the row it must emit, if any.
type csvLine struct {
	text string
	row  string // "" when the line emits nothing
}

// csvFile is a test input: a header line, then lines; the last line has no
// final newline.
type csvFile struct {
	name    string
	file    schema.File
	stream  string
	header  string
	lines   []csvLine
	report  schema.FileReport // for the whole file
	columns []string
}

func (f *csvFile) bytes() []byte {
	var b strings.Builder
	b.WriteString(f.header)
	for _, l := range f.lines {
		b.WriteString(l.text)
	}
	return []byte(b.String())
}

// start is the file offset of the first data byte.
func (f *csvFile) start() int64 { return int64(len(f.header)) }

func (f *csvFile) rows() []string {
	out := []string{}
	for _, l := range f.lines {
		if l.row != "" {
			out = append(out, l.row)
		}
	}
	return out
}

// boundary returns the file offset a Feed of the first k data bytes must
// leave: the end of the last line that is complete within them. The last
// line has no newline, so it is complete only at EOF.
func (f *csvFile) boundary(k int) int64 {
	end, pos := 0, 0
	for _, l := range f.lines[:len(f.lines)-1] {
		pos += len(l.text)
		if pos > k {
			break
		}
		end = pos
	}
	return f.start() + int64(end)
}

// rowsBefore returns the rows of the lines that end at or before the data
// offset end.
func (f *csvFile) rowsBefore(end int64) []string {
	out := []string{}
	pos := f.start()
	for _, l := range f.lines {
		pos += int64(len(l.text))
		if pos > end {
			break
		}
		if l.row != "" {
			out = append(out, l.row)
		}
	}
	return out
}

var servers = []string{"eastus", "koreacentral", "westeurope", "southeastasia"}

// matchesFile has its columns in another order than the dataset, and extra
// ones.
func matchesFile() *csvFile {
	const stream = "matches"
	f := &csvFile{
		name:    "matches.csv",
		file:    schema.Matches,
		stream:  stream,
		header:  "map_size,server,token,duration,extra,average_rating,ladder,map,mirror,patch\r\n",
		columns: []string{"map_size", "server", "token", "duration", "extra", "average_rating", "ladder", "map", "mirror", "patch"},
	}
	row := func(token, ladder, mapName, server, mirror, rating string, dur int64) string {
		return fmt.Sprintf("%s token=%q ladder=%q map=%q server=%q mirror=%s rating=%s duration=%d", stream, token, ladder, mapName, server, mirror, rating, dur)
	}
	special := map[int][]csvLine{
		2: {
			{"small,eastus,\"tok,1\",2:00:01,\"x,y\",\"2000.5\",RM_1v1,\"arena\",False,37906\r\n", row("tok,1", "RM_1v1", "arena", "eastus", "false", "2000.5", 7201)},
			{"medium,\"south,east\",t2,\"1 day, 0:00:01\",,2100,RM_TEAM,islands,true,1\n", row("t2", "RM_TEAM", "islands", "south,east", "true", "2100", 86401)},
		},
		5: {
			{"a,b,c\n", ""}, // too few fields
			{"\n", ""},
			{"\r\n", ""},
		},
		9: {
			{",koreacentral,t5,,,,RM_TEAM,islands,,1\n", row("t5", "RM_TEAM", "islands", "koreacentral", "missing", "missing", -1)},
			{"tiny,eastus,t6,2:0:00,,\"2,000\",RM_1v1,arena,yes,1\r\n", row("t6", "RM_1v1", "arena", "eastus", "missing", "missing", -1)},
		},
		13: {
			{"tiny,eastus,\"bad\"x,1:00:00,,1,RM_1v1,arena,0,1\n", ""}, // bad quoting
			{"tiny,eastus,\"q\"\"uote\",1:00:00,,1,RM_1v1,\"Black\nForest\",0,1\n", row("q\"uote", "RM_1v1", "Black\nForest", "eastus", "false", "1", 3600)},
			{"tiny,eastus,t8,1:00:00,,1,RM_1v1,arena,0,1,extra\n", ""}, // too many fields
			{"\r\n", ""},
		},
		17: {
			{"tiny,eastus,t9,01:02:03,,+5,RM_1v1,arena,TRUE,1\n", row("t9", "RM_1v1", "arena", "eastus", "true", "missing", 3723)},
			{"tiny,westeurope,t10,10:00:00,,-7.250,RM_1v1,arena,0,1\r\n", row("t10", "RM_1v1", "arena", "westeurope", "false", "-7.25", 36000)},
			{"tiny,ukwest,t11,0:00:00,,123456789012345.1234567,RM_1v1,arena,1,1\n", row("t11", "RM_1v1", "arena", "ukwest", "true", "123456789012345.1234567", 0)},
			{"\n", ""},
		},
	}
	mirrors := []struct{ text, want string }{{"True", "true"}, {"0", "false"}, {"false", "false"}, {"FALSE", "false"}, {"1", "true"}}
	for i := 1; i <= 24; i++ {
		f.lines = append(f.lines, special[i]...)
		server := servers[i%4]
		ladder := "RM_TEAM"
		if i%2 == 0 {
			ladder = "RM_1v1"
		}
		mapName := []string{"arena", "islands", "Black Forest"}[i%3]
		mirror := mirrors[i%5]
		rating, ratingText := fmt.Sprint(1500+37*i), fmt.Sprintf("%d.0", 1500+37*i)
		if i%2 == 1 {
			rating, ratingText = fmt.Sprintf("%d.5", 1500+37*i), fmt.Sprintf("%d.50", 1500+37*i)
		}
		h, m, s := i%3, i, (i*7)%60
		eol := "\n"
		if i%2 == 0 {
			eol = "\r\n"
		}
		token := fmt.Sprintf("g%02d", i)
		f.lines = append(f.lines, csvLine{
			text: fmt.Sprintf("tiny,%s,%s,%d:%02d:%02d,x%d,%s,%s,%s,%s,37906%s", server, token, h, m, s, i, ratingText, ladder, mapName, mirror.text, eol),
			row:  row(token, ladder, mapName, server, mirror.want, rating, int64(h*3600+m*60+s)),
		})
	}
	f.lines = append(f.lines, csvLine{"tiny,southeastasia,last,2:00:01,,2001,RM_TEAM,islands,1,1", row("last", "RM_TEAM", "islands", "southeastasia", "true", "2001", 7201)})
	f.report = schema.FileReport{
		Rows:      36, // 24 generated, 12 special records (blank lines excluded)
		Malformed: 3,
		Missing:   map[string]int64{"mirror": 2, "average_rating": 3, "duration": 2},
	}
	return f
}

// playersFile has the dataset's own header.
func playersFile() *csvFile {
	const stream = "players"
	f := &csvFile{
		name:    "match_players.csv",
		file:    schema.Players,
		stream:  stream,
		header:  "token,match,rating,color,civ,team,winner\n",
		columns: []string{"token", "match", "rating", "color", "civ", "team", "winner"},
	}
	row := func(match, civ, rating, winner string) string {
		return fmt.Sprintf("%s match=%q civ=%q rating=%s winner=%s", stream, match, civ, rating, winner)
	}
	special := map[int][]csvLine{
		1: {
			{"\n", ""},
		},
		3: {
			{"px1,m50,2000.000,\"Red, dark\",\"Civ, The\",1,true\r\n", row("m50", "Civ, The", "2000", "true")},
			{"px2,m50,1800,Red,,2,false\n", row("m50", "", "1800", "false")},
		},
		8: {
			{"px3,m51,,Red,Goths,1,\n", row("m51", "Goths", "missing", "missing")},
			{"px4,m51,n/a,Red,Huns,1,yes\r\n", row("m51", "Huns", "missing", "missing")},
			{"px5,m52,1500,Red,Huns,1\n", ""}, // too few fields
			{"\r\n", ""},
			{"\n", ""},
		},
		15: {
			{"px6,m53,99999999999.9999999,Red,Huns,1,0\n", row("m53", "Huns", "99999999999.9999999", "false")},
			{"px7,m53,1200,Red,\"\",2,1\r\n", row("m53", "", "1200", "true")},
			{"\"px9\",\"m\"\"54\",\"1,5\",Red,\"Incas\nand more\",1,0\n", row("m\"54", "Incas\nand more", "missing", "false")},
		},
	}
	civs := []string{"Aztecs", "Britons", "Celts", "Franks", "Goths"}
	winners := []struct{ text, want string }{{"True", "true"}, {"False", "false"}, {"1", "true"}, {"0", "false"}, {"TRUE", "true"}}
	for i := 1; i <= 20; i++ {
		f.lines = append(f.lines, special[i]...)
		match := fmt.Sprintf("m%02d", (i+1)/2)
		eol := "\n"
		if i%3 == 0 {
			eol = "\r\n"
		}
		w := winners[i%5]
		f.lines = append(f.lines, csvLine{
			text: fmt.Sprintf("p%02d,%s,%d,Blue,%s,%d,%s%s", i, match, 900+53*i, civs[i%5], 1+i%2, w.text, eol),
			row:  row(match, civs[i%5], fmt.Sprint(900+53*i), w.want),
		})
	}
	f.lines = append(f.lines, csvLine{"px8,m54,1000,Red,Incas,1,false", row("m54", "Incas", "1000", "false")})
	f.report = schema.FileReport{
		Rows:      29, // 20 generated, 9 special records
		Malformed: 1,
		Missing:   map[string]int64{"civ": 2, "rating": 3, "winner": 2},
	}
	return f
}

func testFiles() []*csvFile { return []*csvFile{matchesFile(), playersFile()} }

// copyReport is a deep copy of r, as a resumed upload's report is read
// back from the store.
func copyReport(r schema.FileReport) schema.FileReport {
	r.Missing = maps.Clone(r.Missing)
	r.Rejects = slices.Clone(r.Rejects)
	r.OversizedAt = slices.Clone(r.OversizedAt)
	return r
}

func newIngest(t testing.TB, f *csvFile, offset int64, report schema.FileReport) *Ingest {
	t.Helper()
	in, err := New(f.file, f.columns, f.stream, offset, report)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return in
}

func sameRows(t testing.TB, what string, got, want []string) {
	t.Helper()
	if got == nil {
		got = []string{}
	}
	if len(got) != len(want) {
		t.Errorf("%s: got %d rows, want %d", what, len(got), len(want))
	}
	for i := 0; i < len(got) || i < len(want); i++ {
		g, w := "(none)", "(none)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Fatalf("%s: first difference at row %d\ngot:  %s\nwant: %s", what, i, g, w)
		}
	}
}

func sameReport(t testing.TB, what string, got, want schema.FileReport) {
	t.Helper()
	if got.Rows != want.Rows || got.Malformed != want.Malformed || !maps.Equal(got.Missing, want.Missing) {
		t.Fatalf("%s: report = %+v, want %+v", what, got, want)
	}
}

// TestIngestWholeFile pins the rows and the report of each test file fed
// at once.
func TestIngestWholeFile(t *testing.T) {
	for _, f := range testFiles() {
		t.Run(f.name, func(t *testing.T) {
			data := f.bytes()
			in := newIngest(t, f, f.start(), schema.FileReport{})
			out := &ingestEmitter{}
			in.Feed(data[f.start():], false, out)
			last := f.lines[len(f.lines)-1]
			// Everything but the last record, which has no newline yet.
			sameRows(t, "before EOF", out.rows, f.rows()[:len(f.rows())-1])
			if want := int64(len(data) - len(last.text)); in.Offset() != want {
				t.Errorf("Offset before EOF = %d, want %d", in.Offset(), want)
			}
			if in.Pending() != len(last.text) {
				t.Errorf("Pending before EOF = %d, want %d", in.Pending(), len(last.text))
			}
			in.Feed(nil, true, out)
			sameRows(t, "rows", out.rows, f.rows())
			sameReport(t, "report", in.Report, f.report)
			if in.Offset() != int64(len(data)) {
				t.Errorf("Offset = %d, want the file length %d", in.Offset(), len(data))
			}
			if in.Pending() != 0 {
				t.Errorf("Pending after EOF = %d, want 0", in.Pending())
			}
		})
	}
}

// TestIngestChunkSizes feeds each file in chunks of every size, from one
// byte to the whole: the rows, the report and the final offset must not
// depend on where the chunks end.
func TestIngestChunkSizes(t *testing.T) {
	for _, f := range testFiles() {
		t.Run(f.name, func(t *testing.T) {
			data := f.bytes()
			body := data[f.start():]
			for size := 1; size <= len(body); size++ {
				in := newIngest(t, f, f.start(), schema.FileReport{})
				out := &ingestEmitter{}
				for off := 0; off < len(body); off += size {
					in.Feed(body[off:min(off+size, len(body))], false, out)
				}
				in.Feed(nil, true, out)
				what := fmt.Sprintf("chunks of %d", size)
				sameRows(t, what, out.rows, f.rows())
				sameReport(t, what, in.Report, f.report)
				if in.Offset() != int64(len(data)) {
					t.Fatalf("%s: Offset = %d, want the file length %d", what, in.Offset(), len(data))
				}
			}
		})
	}
}

// TestIngestResumeAtOffset: after a Feed of any prefix, Offset is the end
// of the last complete record, the rows emitted are exactly those before
// it, and a new Ingest started there (as a resumed upload is) with the
// report so far gives exactly the remaining rows and the whole report.
func TestIngestResumeAtOffset(t *testing.T) {
	for _, f := range testFiles() {
		t.Run(f.name, func(t *testing.T) {
			data := f.bytes()
			body := data[f.start():]
			for k := 0; k <= len(body); k++ {
				what := fmt.Sprintf("prefix of %d bytes", k)
				first := newIngest(t, f, f.start(), schema.FileReport{})
				out := &ingestEmitter{}
				// Feed the prefix in two parts, so that a carried tail is
				// involved too.
				first.Feed(body[:k/2], false, out)
				first.Feed(body[k/2:k], false, out)
				off := first.Offset()
				if want := f.boundary(k); off != want {
					t.Fatalf("%s: Offset = %d, want %d", what, off, want)
				}
				if int64(first.Pending()) != f.start()+int64(k)-off {
					t.Fatalf("%s: Pending = %d, want %d", what, first.Pending(), f.start()+int64(k)-off)
				}
				sameRows(t, what+": rows before the offset", out.rows, f.rowsBefore(off))

				second := newIngest(t, f, off, copyReport(first.Report))
				second.Feed(data[off:], true, out)
				sameRows(t, what+": rows after resuming", out.rows, f.rows())
				sameReport(t, what+": report after resuming", second.Report, f.report)
				if second.Offset() != int64(len(data)) {
					t.Fatalf("%s: final Offset = %d, want %d", what, second.Offset(), len(data))
				}
			}
		})
	}
}

// TestIngestKeepsGivenReport: the counts of a resumed upload continue from
// the report it is given.
func TestIngestKeepsGivenReport(t *testing.T) {
	f := playersFile()
	in := newIngest(t, f, 100, schema.FileReport{Rows: 10, Malformed: 2, Missing: map[string]int64{"civ": 4, "rating": 1}})
	out := &ingestEmitter{}
	data := []byte("p1,m1,,Blue,,1,x\np2,m1,1500,Blue,Aztecs,2\n")
	in.Feed(data, true, out)
	sameRows(t, "rows", out.rows, []string{`players match="m1" civ="" rating=missing winner=missing`})
	sameReport(t, "report", in.Report, schema.FileReport{Rows: 12, Malformed: 3, Missing: map[string]int64{"civ": 5, "rating": 2, "winner": 1}})
	if want := int64(100 + len(data)); in.Offset() != want {
		t.Errorf("Offset = %d, want %d", in.Offset(), want)
	}
}

func TestNewHeaders(t *testing.T) {
	cases := []struct {
		name    string
		file    schema.File
		columns []string
		line    string // one record, fed at EOF
		want    string // its row, or the error
	}{
		{
			name:    "matches in dataset order",
			file:    schema.Matches,
			columns: []string{"token", "winning_team", "mirror", "ladder", "patch", "average_rating", "map", "map_size", "num_players", "server", "duration"},
			line:    "t1,1,False,RM_1v1,37906,2050,arena,tiny,2,eastus,2:10:00\n",
			want:    `s token="t1" ladder="RM_1v1" map="arena" server="eastus" mirror=false rating=2050 duration=7800`,
		},
		{
			name:    "matches reversed with extras",
			file:    schema.Matches,
			columns: []string{"zz", "duration", "server", "map", "average_rating", "mirror", "ladder", "token", "aa"},
			line:    "1,0:00:10,eastus,arena,1,1,RM_TEAM,t2,2\n",
			want:    `s token="t2" ladder="RM_TEAM" map="arena" server="eastus" mirror=true rating=1 duration=10`,
		},
		{
			name:    "players only the required columns, shuffled",
			file:    schema.Players,
			columns: []string{"winner", "civ", "rating", "match"},
			line:    "0,Celts,1234.5,m9\n",
			want:    `s match="m9" civ="Celts" rating=1234.5 winner=false`,
		},
		{
			name:    "a repeated required column is refused, naming it",
			file:    schema.Players,
			columns: []string{"match", "rating", "civ", "winner", "civ"},
			want:    `error: match_players.csv: header has the "civ" column twice`,
		},
		{
			name:    "matches without duration",
			file:    schema.Matches,
			columns: []string{"token", "ladder", "mirror", "average_rating", "map", "server"},
			want:    `error: matches.csv: header has no "duration" column`,
		},
		{
			name:    "matches with Token in other case",
			file:    schema.Matches,
			columns: []string{"Token", "ladder", "mirror", "average_rating", "map", "server", "duration"},
			want:    `error: matches.csv: header has no "token" column`,
		},
		{
			name:    "players without winner",
			file:    schema.Players,
			columns: []string{"token", "match", "rating", "color", "civ", "team"},
			want:    `error: match_players.csv: header has no "winner" column`,
		},
		{
			name:    "players with a padded name",
			file:    schema.Players,
			columns: []string{"match", " rating", "civ", "winner"},
			want:    `error: match_players.csv: header has no "rating" column`,
		},
		{
			name: "players with no header",
			file: schema.Players,
			want: `error: match_players.csv: header has no "match" column`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := New(c.file, c.columns, "s", 0, schema.FileReport{})
			if err != nil {
				if !errors.Is(err, schema.ErrMissingColumn) {
					t.Errorf("err = %v, want ErrMissingColumn", err)
				}
				if got := "error: " + err.Error(); got != c.want {
					t.Errorf("got  %s\nwant %s", got, c.want)
				}
				return
			}
			out := &ingestEmitter{}
			in.Feed([]byte(c.line), true, out)
			sameRows(t, "rows", out.rows, []string{c.want})
		})
	}
	if _, err := New(schema.File(7), []string{"token"}, "s", 0, schema.FileReport{}); err == nil {
		t.Errorf("New of an unknown file: nil error")
	}
}

// TestFromColumnsRefusesNegativeStart: an upload cannot start before its
// file does (a job description recovered from an old store may say so).
func TestFromColumnsRefusesNegativeStart(t *testing.T) {
	if _, err := FromColumns(schema.Matches, Columns{}, "s", -1, schema.FileReport{}); err == nil {
		t.Errorf("an ingest from offset -1: nil error")
	}
	if _, err := FromColumns(schema.Matches, Columns{}, "s", 0, schema.FileReport{}); err != nil {
		t.Errorf("an ingest from offset 0: %v", err)
	}
}

// TestIngestSkipsOversizedRecords: a record longer than MaxRecord is
// counted as malformed and nothing of it is emitted or held, whether it
// arrives whole or in pieces, quoted or not; Offset stays at its start
// while it is skipped, so an upload resumed there meets it again; the
// records around it are parsed as usual.
func TestIngestSkipsOversizedRecords(t *testing.T) {
	columns := []string{"match", "rating", "civ", "winner"}
	header := "match,rating,civ,winner\n"
	long := strings.Repeat("x", 300)
	body := "m1,1500,Aztecs,1\n" + "m2,1500,\"" + long + "\n" + long + "\",0\n" + "m3,1000," + long + ",1\n" + "m4,900,Celts,0\n"
	data := header + body
	want := []string{`s match="m1" civ="Aztecs" rating=1500 winner=true`, `s match="m4" civ="Celts" rating=900 winner=false`}
	for _, size := range []int{1, 7, 64, 299, 301, len(body)} {
		in, err := New(schema.Players, columns, "s", int64(len(header)), schema.FileReport{})
		if err != nil {
			t.Fatal(err)
		}
		in.MaxRecord = 200
		var skipped []int64
		in.OnOversized = func(at int64) { skipped = append(skipped, at) }
		out := &ingestEmitter{}
		for off := 0; off < len(body); off += size {
			in.Feed([]byte(body[off:min(off+size, len(body))]), false, out)
			if in.Pending() > 200+size {
				t.Fatalf("chunks of %d: %d bytes held, over the limit", size, in.Pending())
			}
		}
		in.Feed(nil, true, out)
		what := fmt.Sprintf("chunks of %d", size)
		sameRows(t, what, out.rows, want)
		if in.Report.Rows != 4 || in.Report.Malformed != 2 || in.Offset() != int64(len(data)) {
			t.Errorf("%s: rows %d, malformed %d, offset %d; want 4, 2, %d", what, in.Report.Rows, in.Report.Malformed, in.Offset(), len(data))
		}
		m2, m3 := int64(len(header)+len("m1,1500,Aztecs,1\n")), int64(strings.Index(data, "m3,"))
		if len(skipped) != 2 || skipped[0] != m2 || skipped[1] != m3 || !slices.Equal(in.Report.OversizedAt, skipped) {
			t.Errorf("%s: skipped at %v, reported at %v, want [%d %d]", what, skipped, in.Report.OversizedAt, m2, m3)
		}
	}
	// Mid-skip, Offset is where the long record began.
	in, _ := New(schema.Players, columns, "s", int64(len(header)), schema.FileReport{})
	in.MaxRecord = 200
	out := &ingestEmitter{}
	cut := strings.Index(data, long) + 250 - len(header)
	in.Feed([]byte(body[:cut]), false, out)
	if start := int64(strings.Index(data, "m2,")); in.Offset() != start {
		t.Errorf("mid-skip Offset = %d, want the long record's start %d", in.Offset(), start)
	}
}

// TestIngestListsRejects: every malformed record is listed with its file
// offset, why, and its first bytes, whatever the chunk sizes, the
// too-long ones too (whether whole in a chunk or skipped as they come);
// the list stops at schema.MaxRejectsListed while the count goes on.
func TestIngestListsRejects(t *testing.T) {
	columns := []string{"match", "rating", "civ", "winner"}
	header := "match,rating,civ,winner\n"
	long := strings.Repeat("y", 300)
	rows := []string{
		"m1,1500,Aztecs,1\n",
		"just garbage\n",
		"m2,1500,Bad\"Quote,1\n",
		"m3," + long + ",Celts,0\n",
		"m4,900,Celts,0,extra\n",
		"m5,900,Celts,0\n",
	}
	data := header + strings.Join(rows, "")
	at := func(row int) int64 { return int64(strings.Index(data, rows[row])) }
	head := func(row int) string { return rows[row][:min(len(rows[row]), schema.RejectHeadBytes)] }
	want := []schema.Reject{
		{Offset: at(1), Reason: schema.RejectFieldCount, Head: []byte(head(1))},
		{Offset: at(2), Reason: schema.RejectQuoting, Head: []byte(head(2))},
		{Offset: at(3), Reason: schema.RejectTooLong, Head: []byte(head(3))},
		{Offset: at(4), Reason: schema.RejectFieldCount, Head: []byte(head(4))},
	}
	body := data[len(header):]
	for _, size := range []int{1, 7, 64, len(body)} {
		in, err := New(schema.Players, columns, "s", int64(len(header)), schema.FileReport{})
		if err != nil {
			t.Fatal(err)
		}
		in.MaxRecord = 200
		out := &ingestEmitter{}
		for off := 0; off < len(body); off += size {
			in.Feed([]byte(body[off:min(off+size, len(body))]), false, out)
		}
		in.Feed(nil, true, out)
		if in.Report.Malformed != 4 || !slices.EqualFunc(in.Report.Rejects, want, func(a, b schema.Reject) bool {
			return a.Offset == b.Offset && a.Reason == b.Reason && string(a.Head) == string(b.Head)
		}) {
			t.Errorf("chunks of %d: malformed %d, rejects %+v\nwant 4, %+v", size, in.Report.Malformed, in.Report.Rejects, want)
		}
	}

	in, _ := New(schema.Players, columns, "s", int64(len(header)), schema.FileReport{})
	garbage := strings.Repeat("garbage\n", schema.MaxRejectsListed+10)
	in.Feed([]byte(garbage), true, &ingestEmitter{})
	if in.Report.Malformed != schema.MaxRejectsListed+10 || len(in.Report.Rejects) != schema.MaxRejectsListed {
		t.Errorf("malformed %d, listed %d; want %d, %d", in.Report.Malformed, len(in.Report.Rejects), schema.MaxRejectsListed+10, schema.MaxRejectsListed)
	}
	if last := in.Report.Rejects[schema.MaxRejectsListed-1]; last.Offset != int64(len(header)+8*(schema.MaxRejectsListed-1)) {
		t.Errorf("last listed at %d", last.Offset)
	}
}
