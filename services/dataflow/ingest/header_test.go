package ingest

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/wololo/wololo/services/dataflow/schema"
)

// TestReadHeader: a header's names, made valid UTF-8, and the offset after
// it (and after a byte order mark) for a good file; for a bad one, an error
// naming the file as its caller named it.
func TestReadHeader(t *testing.T) {
	players := "match,rating,civ,winner"
	quoted := `match,"rat` + "\n" + `ing",civ,winner,"rating"` + "\n"
	fsys := fstest.MapFS{
		"players.csv":   {Data: []byte(players + "\r\nm1,1,Celts,1\n")},
		"bom.csv":       {Data: []byte("\xef\xbb\xbf" + players + "\n")},
		"only.csv":      {Data: []byte(players)},
		"latin1.csv":    {Data: []byte(players + ",caf\xe9\n")},
		"quoted.csv":    {Data: []byte(quoted)},
		"empty.csv":     {Data: nil},
		"blank.csv":     {Data: []byte("\n\n")},
		"bare.csv":      {Data: []byte("match,ra\"ting,civ,winner\nm1,1,Celts,1\n")},
		"missing.csv":   {Data: []byte("match,rating,civ\n")},
		"long.csv":      {Data: []byte(strings.Repeat("x", schema.MaxHeaderBytes+1) + "\n")},
		"dir":           {Mode: fs.ModeDir},
		"dir/child.csv": {Data: []byte(players + "\n")},
	}
	cases := []struct {
		file string
		want Header
		err  string
	}{
		{file: "players.csv", want: Header{Columns: []string{"match", "rating", "civ", "winner"}, DataOffset: int64(len(players) + 2), Size: int64(len(players) + 15)}},
		{file: "bom.csv", want: Header{Columns: []string{"match", "rating", "civ", "winner"}, DataOffset: int64(len(players) + 4), Size: int64(len(players) + 4)}},
		{file: "only.csv", want: Header{Columns: []string{"match", "rating", "civ", "winner"}, DataOffset: int64(len(players)), Size: int64(len(players))}},
		{file: "latin1.csv", want: Header{Columns: []string{"match", "rating", "civ", "winner", "caf\uFFFD"}, DataOffset: int64(len(players) + 6), Size: int64(len(players) + 6)}},
		{file: "quoted.csv", want: Header{Columns: []string{"match", "rat\ning", "civ", "winner", "rating"}, DataOffset: int64(len(quoted)), Size: int64(len(quoted))}},
		{file: "empty.csv", err: "the/empty.csv is empty: it needs at least a header row"},
		{file: "blank.csv", err: "the/blank.csv is empty: it needs at least a header row"},
		{file: "bare.csv", err: "the/bare.csv: the header row cannot be parsed as CSV"},
		{file: "missing.csv", want: Header{Columns: []string{"match", "rating", "civ"}, DataOffset: 17, Size: 17}}, // no column is required: a plan checks those it reads
		{file: "long.csv", err: fmt.Sprintf("the/long.csv: the header row is longer than %d bytes: not a CSV header (is it the right file?)", schema.MaxHeaderBytes)},
		{file: "dir", err: "the/dir is a directory, not a CSV file"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, err := fsys.Open(c.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := ReadHeader(f, "the/"+c.file)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("ReadHeader: %v, %+v; want the error %q", err, got, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadHeader: %v", err)
			}
			if strings.Join(got.Columns, "|") != strings.Join(c.want.Columns, "|") || got.DataOffset != c.want.DataOffset || got.Size != c.want.Size {
				t.Errorf("ReadHeader = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestReadHeaderFailures: the errors of the file underneath come back, and
// a read error is told apart from an empty file.
func TestReadHeaderFailures(t *testing.T) {
	broken := errors.New("disk on fire")
	if _, err := ReadHeader(failingFile{stat: broken}, "f.csv"); !errors.Is(err, broken) {
		t.Errorf("a failing Stat: %v, want %v", err, broken)
	}
	_, err := ReadHeader(failingFile{read: broken}, "f.csv")
	if !errors.Is(err, broken) || !strings.HasPrefix(err.Error(), "read header of f.csv: ") {
		t.Errorf("a failing Read: %v, want %v read from f.csv", err, broken)
	}
}

// TestReadHeaderThenIngest: an Ingest of the header's width, started at
// its DataOffset (ReadHeader's), parses the file's first record.
func TestReadHeaderThenIngest(t *testing.T) {
	data := "\xef\xbb\xbf" + "ladder,token,x,mirror,average_rating,map,server,duration\r\nRM_1v1,t1,,True,1200,arena,eastus,0:01:05\n"
	fsys := fstest.MapFS{"m.csv": {Data: []byte(data)}}
	f, err := fsys.Open("m.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := ReadHeader(f, "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	in := newText(t, len(h.Columns), h.DataOffset, schema.FileReport{})
	out := &ingestEmitter{}
	feed(in, []byte(data[h.DataOffset:]), true, out)
	sameRows(t, "rows", out.rows, []string{row("RM_1v1", "t1", "", "True", "1200", "arena", "eastus", "0:01:05")})
	if in.Offset() != int64(len(data)) || in.Report.Rows != 1 {
		t.Errorf("Offset %d, %d rows; want %d, 1", in.Offset(), in.Report.Rows, len(data))
	}
}

// failingFile is an fs.File whose Stat or Read fails.
type failingFile struct{ stat, read error }

func (f failingFile) Stat() (fs.FileInfo, error) {
	if f.stat != nil {
		return nil, f.stat
	}
	return fstest.MapFS{"f": {}}.Stat("f")
}

func (f failingFile) Read([]byte) (int, error) { return 0, f.read }
func (f failingFile) Close() error             { return nil }
