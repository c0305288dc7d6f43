package ingest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/schema"
)

// ingestEmitter records every record an Ingest hands on (Text), its
// fields copied out at once (they alias the Ingest's buffer), as the %q of
// their strings.
type ingestEmitter struct{ rows []string }

func (e *ingestEmitter) row(fields [][]byte) {
	s := make([]string, len(fields))
	for i, f := range fields {
		s[i] = string(f)
	}
	e.rows = append(e.rows, fmt.Sprintf("%q", s))
}

// feed feeds data to in, its records to out.
func feed(in *Ingest, data []byte, atEOF bool, out *ingestEmitter) {
	in.Text = out.row
	in.Feed(data, atEOF)
}

// row is what ingestEmitter records of a record of fields.
func row(fields ...string) string { return fmt.Sprintf("%q", fields) }

// newText is an Ingest of records of width fields from offset on.
func newText(t testing.TB, width int, offset int64, report schema.FileReport) *Ingest {
	t.Helper()
	in, err := New(offset, report)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	in.TextWidth = width
	return in
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
	f := &csvFile{
		name:    "matches.csv",
		file:    schema.Matches,
		header:  "map_size,server,token,duration,extra,average_rating,ladder,map,mirror,patch\r\n",
		columns: []string{"map_size", "server", "token", "duration", "extra", "average_rating", "ladder", "map", "mirror", "patch"},
	}
	special := map[int][]csvLine{
		2: {
			{"small,eastus,\"tok,1\",2:00:01,\"x,y\",\"2000.5\",RM_1v1,\"arena\",False,37906\r\n", row("small", "eastus", "tok,1", "2:00:01", "x,y", "2000.5", "RM_1v1", "arena", "False", "37906")},
			{"medium,\"south,east\",t2,\"1 day, 0:00:01\",,2100,RM_TEAM,islands,true,1\n", row("medium", "south,east", "t2", "1 day, 0:00:01", "", "2100", "RM_TEAM", "islands", "true", "1")},
		},
		5: {
			{"a,b,c\n", ""}, // too few fields
			{"\n", ""},
			{"\r\n", ""},
		},
		9: {
			{",koreacentral,t5,,,,RM_TEAM,islands,,1\n", row("", "koreacentral", "t5", "", "", "", "RM_TEAM", "islands", "", "1")},
			{"tiny,eastus,t6,2:0:00,,\"2,000\",RM_1v1,arena,yes,1\r\n", row("tiny", "eastus", "t6", "2:0:00", "", "2,000", "RM_1v1", "arena", "yes", "1")},
		},
		13: {
			{"tiny,eastus,\"bad\"x,1:00:00,,1,RM_1v1,arena,0,1\n", ""}, // bad quoting
			{"tiny,eastus,\"q\"\"uote\",1:00:00,,1,RM_1v1,\"Black\nForest\",0,1\n", row("tiny", "eastus", "q\"uote", "1:00:00", "", "1", "RM_1v1", "Black\nForest", "0", "1")},
			{"tiny,eastus,t8,1:00:00,,1,RM_1v1,arena,0,1,extra\n", ""}, // too many fields
			{"\r\n", ""},
		},
		17: {
			{"tiny,eastus,t9,01:02:03,,+5,RM_1v1,arena,TRUE,1\n", row("tiny", "eastus", "t9", "01:02:03", "", "+5", "RM_1v1", "arena", "TRUE", "1")},
			{"tiny,westeurope,t10,10:00:00,,-7.250,RM_1v1,arena,0,1\r\n", row("tiny", "westeurope", "t10", "10:00:00", "", "-7.250", "RM_1v1", "arena", "0", "1")},
			{"tiny,ukwest,t11,0:00:00,,123456789012345.1234567,RM_1v1,arena,1,1\n", row("tiny", "ukwest", "t11", "0:00:00", "", "123456789012345.1234567", "RM_1v1", "arena", "1", "1")},
			{"\n", ""},
		},
	}
	mirrors := []string{"True", "0", "false", "FALSE", "1"}
	for i := 1; i <= 24; i++ {
		f.lines = append(f.lines, special[i]...)
		server := servers[i%4]
		ladder := "RM_TEAM"
		if i%2 == 0 {
			ladder = "RM_1v1"
		}
		mapName := []string{"arena", "islands", "Black Forest"}[i%3]
		mirror := mirrors[i%5]
		ratingText := fmt.Sprintf("%d.0", 1500+37*i)
		if i%2 == 1 {
			ratingText = fmt.Sprintf("%d.50", 1500+37*i)
		}
		h, m, s := i%3, i, (i*7)%60
		eol := "\n"
		if i%2 == 0 {
			eol = "\r\n"
		}
		token := fmt.Sprintf("g%02d", i)
		f.lines = append(f.lines, csvLine{
			text: fmt.Sprintf("tiny,%s,%s,%d:%02d:%02d,x%d,%s,%s,%s,%s,37906%s", server, token, h, m, s, i, ratingText, ladder, mapName, mirror, eol),
			row:  row("tiny", server, token, fmt.Sprintf("%d:%02d:%02d", h, m, s), fmt.Sprintf("x%d", i), ratingText, ladder, mapName, mirror, "37906"),
		})
	}
	f.lines = append(f.lines, csvLine{"tiny,southeastasia,last,2:00:01,,2001,RM_TEAM,islands,1,1", row("tiny", "southeastasia", "last", "2:00:01", "", "2001", "RM_TEAM", "islands", "1", "1")})
	f.report = schema.FileReport{
		Rows:      36, // 24 generated, 12 special records (blank lines excluded)
		Malformed: 3,
		Missing:   map[string]int64{}, // the plan's Source counts the NULLs, not the Ingest
	}
	return f
}

// playersFile has the dataset's own header.
func playersFile() *csvFile {
	f := &csvFile{
		name:    "match_players.csv",
		file:    schema.Players,
		header:  "token,match,rating,color,civ,team,winner\n",
		columns: []string{"token", "match", "rating", "color", "civ", "team", "winner"},
	}
	special := map[int][]csvLine{
		1: {
			{"\n", ""},
		},
		3: {
			{"px1,m50,2000.000,\"Red, dark\",\"Civ, The\",1,true\r\n", row("px1", "m50", "2000.000", "Red, dark", "Civ, The", "1", "true")},
			{"px2,m50,1800,Red,,2,false\n", row("px2", "m50", "1800", "Red", "", "2", "false")},
		},
		8: {
			{"px3,m51,,Red,Goths,1,\n", row("px3", "m51", "", "Red", "Goths", "1", "")},
			{"px4,m51,n/a,Red,Huns,1,yes\r\n", row("px4", "m51", "n/a", "Red", "Huns", "1", "yes")},
			{"px5,m52,1500,Red,Huns,1\n", ""}, // too few fields
			{"\r\n", ""},
			{"\n", ""},
		},
		15: {
			{"px6,m53,99999999999.9999999,Red,Huns,1,0\n", row("px6", "m53", "99999999999.9999999", "Red", "Huns", "1", "0")},
			{"px7,m53,1200,Red,\"\",2,1\r\n", row("px7", "m53", "1200", "Red", "", "2", "1")},
			{"\"px9\",\"m\"\"54\",\"1,5\",Red,\"Incas\nand more\",1,0\n", row("px9", "m\"54", "1,5", "Red", "Incas\nand more", "1", "0")},
		},
	}
	civs := []string{"Aztecs", "Britons", "Celts", "Franks", "Goths"}
	winners := []string{"True", "False", "1", "0", "TRUE"}
	for i := 1; i <= 20; i++ {
		f.lines = append(f.lines, special[i]...)
		match := fmt.Sprintf("m%02d", (i+1)/2)
		eol := "\n"
		if i%3 == 0 {
			eol = "\r\n"
		}
		w := winners[i%5]
		f.lines = append(f.lines, csvLine{
			text: fmt.Sprintf("p%02d,%s,%d,Blue,%s,%d,%s%s", i, match, 900+53*i, civs[i%5], 1+i%2, w, eol),
			row:  row(fmt.Sprintf("p%02d", i), match, fmt.Sprint(900+53*i), "Blue", civs[i%5], fmt.Sprint(1+i%2), w),
		})
	}
	f.lines = append(f.lines, csvLine{"px8,m54,1000,Red,Incas,1,false", row("px8", "m54", "1000", "Red", "Incas", "1", "false")})
	f.report = schema.FileReport{
		Rows:      29, // 20 generated, 9 special records
		Malformed: 1,
		Missing:   map[string]int64{},
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
	return newText(t, len(f.columns), offset, report)
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
			feed(in, data[f.start():], false, out)
			last := f.lines[len(f.lines)-1]
			// Everything but the last record, which has no newline yet.
			sameRows(t, "before EOF", out.rows, f.rows()[:len(f.rows())-1])
			if want := int64(len(data) - len(last.text)); in.Offset() != want {
				t.Errorf("Offset before EOF = %d, want %d", in.Offset(), want)
			}
			if in.Pending() != len(last.text) {
				t.Errorf("Pending before EOF = %d, want %d", in.Pending(), len(last.text))
			}
			feed(in, nil, true, out)
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
					feed(in, body[off:min(off+size, len(body))], false, out)
				}
				feed(in, nil, true, out)
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
				feed(first, body[:k/2], false, out)
				feed(first, body[k/2:k], false, out)
				off := first.Offset()
				if want := f.boundary(k); off != want {
					t.Fatalf("%s: Offset = %d, want %d", what, off, want)
				}
				if int64(first.Pending()) != f.start()+int64(k)-off {
					t.Fatalf("%s: Pending = %d, want %d", what, first.Pending(), f.start()+int64(k)-off)
				}
				sameRows(t, what+": rows before the offset", out.rows, f.rowsBefore(off))

				second := newIngest(t, f, off, copyReport(first.Report))
				feed(second, data[off:], true, out)
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
	feed(in, data, true, out)
	sameRows(t, "rows", out.rows, []string{row("p1", "m1", "", "Blue", "", "1", "x")})
	sameReport(t, "report", in.Report, schema.FileReport{Rows: 12, Malformed: 3, Missing: map[string]int64{"civ": 4, "rating": 1}})
	if want := int64(100 + len(data)); in.Offset() != want {
		t.Errorf("Offset = %d, want %d", in.Offset(), want)
	}
}

// TestNewRefusesNegativeStart: an upload cannot start before its file
// does (a job description recovered from an old store may say so).
func TestNewRefusesNegativeStart(t *testing.T) {
	if _, err := New(-1, schema.FileReport{}); err == nil {
		t.Errorf("an ingest from offset -1: nil error")
	}
	if _, err := New(0, schema.FileReport{}); err != nil {
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
	want := []string{row("m1", "1500", "Aztecs", "1"), row("m4", "900", "Celts", "0")}
	for _, size := range []int{1, 7, 64, 299, 301, len(body)} {
		in, err := New(int64(len(header)), schema.FileReport{})
		if err != nil {
			t.Fatal(err)
		}
		in.MaxRecord, in.TextWidth = 200, len(columns)
		var skipped []int64
		in.OnOversized = func(at int64) { skipped = append(skipped, at) }
		out := &ingestEmitter{}
		for off := 0; off < len(body); off += size {
			feed(in, []byte(body[off:min(off+size, len(body))]), false, out)
			if in.Pending() > 200+size {
				t.Fatalf("chunks of %d: %d bytes held, over the limit", size, in.Pending())
			}
		}
		feed(in, nil, true, out)
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
	in, _ := New(int64(len(header)), schema.FileReport{})
	in.MaxRecord, in.TextWidth = 200, len(columns)
	out := &ingestEmitter{}
	cut := strings.Index(data, long) + 250 - len(header)
	feed(in, []byte(body[:cut]), false, out)
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
		in, err := New(int64(len(header)), schema.FileReport{})
		if err != nil {
			t.Fatal(err)
		}
		in.MaxRecord, in.TextWidth = 200, len(columns)
		out := &ingestEmitter{}
		for off := 0; off < len(body); off += size {
			feed(in, []byte(body[off:min(off+size, len(body))]), false, out)
		}
		feed(in, nil, true, out)
		if in.Report.Malformed != 4 || !slices.EqualFunc(in.Report.Rejects, want, func(a, b schema.Reject) bool {
			return a.Offset == b.Offset && a.Reason == b.Reason && string(a.Head) == string(b.Head)
		}) {
			t.Errorf("chunks of %d: malformed %d, rejects %+v\nwant 4, %+v", size, in.Report.Malformed, in.Report.Rejects, want)
		}
	}

	in, _ := New(int64(len(header)), schema.FileReport{})
	in.TextWidth = len(columns)
	garbage := strings.Repeat("garbage\n", schema.MaxRejectsListed+10)
	feed(in, []byte(garbage), true, &ingestEmitter{})
	if in.Report.Malformed != schema.MaxRejectsListed+10 || len(in.Report.Rejects) != schema.MaxRejectsListed {
		t.Errorf("malformed %d, listed %d; want %d, %d", in.Report.Malformed, len(in.Report.Rejects), schema.MaxRejectsListed+10, schema.MaxRejectsListed)
	}
	if last := in.Report.Rejects[schema.MaxRejectsListed-1]; last.Offset != int64(len(header)+8*(schema.MaxRejectsListed-1)) {
		t.Errorf("last listed at %d", last.Offset)
	}
}
