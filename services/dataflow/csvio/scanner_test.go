package csvio

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

type scanned struct {
	Kind   Kind
	Fields []string
	Offset int64
}

func scanAll(t *testing.T, r io.Reader) ([]scanned, error) {
	t.Helper()
	sc := NewScanner(r)
	var out []scanned
	for sc.Scan() {
		out = append(out, scanned{sc.Kind(), copyFields(sc.Fields()), sc.Offset()})
	}
	if sc.Scan() {
		t.Fatalf("Scan true again after false")
	}
	return out, sc.Err()
}

func TestScanner(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []scanned
	}{
		{"empty", "", nil},
		{"only blanks", "\n\r\n\n", nil},
		{"header and rows", "a,b\n1,2\r\n\n3,\"4\"", []scanned{
			{Record, []string{"a", "b"}, 4},
			{Record, []string{"1", "2"}, 9},
			{Record, []string{"3", "4"}, 15},
		}},
		{"bom", "\xEF\xBB\xBFtoken,map\nx,y\n", []scanned{
			{Record, []string{"token", "map"}, 13},
			{Record, []string{"x", "y"}, 17},
		}},
		{"bom then quoted", "\xEF\xBB\xBF\"token\"\n", []scanned{{Record, []string{"token"}, 11}}},
		{"bom alone", "\xEF\xBB\xBF", nil},
		{"partial bom is data", "\xEF\xBB", []scanned{{Record, []string{"\xEF\xBB"}, 2}}},
		{"bom only at start", "a\n\xEF\xBB\xBFb\n", []scanned{
			{Record, []string{"a"}, 2},
			{Record, []string{"\xEF\xBB\xBFb"}, 7},
		}},
		{"malformed", "a\n\"b\"c\nd\n\"e", []scanned{
			{Record, []string{"a"}, 2},
			{Malformed, nil, 7},
			{Record, []string{"d"}, 9},
			{Malformed, nil, 11},
		}},
		{"bare quote, crlf in quotes, cr at eof", "a\"b,c\n\"x\r\ny\"\r\nd\r", []scanned{
			{Malformed, nil, 6},
			{Record, []string{"x\ny"}, 14},
			{Record, []string{"d"}, 16},
		}},
		{"only cr", "\r", nil},
		{"bom and cr", "\xEF\xBB\xBF\r", nil},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+eof": iotest.DataErrReader,
	}
	for _, tc := range cases {
		for rname, wrap := range readers {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				got, err := scanAll(t, wrap(strings.NewReader(tc.in)))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got  %v\nwant %v", got, tc.want)
				}
			})
		}
	}
}

// TestScannerHugeRecord: a record larger than the buffer makes it grow,
// and the records around it are intact.
func TestScannerHugeRecord(t *testing.T) {
	big := strings.Repeat("x,\"\"y\n", DefaultBufferSize/3)
	in := "a\n\"" + big + "\",z\nb\n"
	for _, wrap := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.HalfReader} {
		got, err := scanAll(t, wrap(strings.NewReader(in)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[1].Kind != Record || len(got[1].Fields) != 2 ||
			got[1].Fields[0] != strings.ReplaceAll(big, `""`, `"`) || got[1].Fields[1] != "z" ||
			got[2].Fields[0] != "b" || got[2].Offset != int64(len(in)) {
			t.Fatalf("huge record not scanned intact: %d records", len(got))
		}
	}
}

func TestScannerMaxRecordSize(t *testing.T) {
	in := "a\n\"" + strings.Repeat("x", 3*DefaultBufferSize)
	sc := NewScanner(strings.NewReader(in))
	sc.SetMaxRecordSize(DefaultBufferSize)
	n := 0
	for sc.Scan() {
		n++
	}
	if n != 1 || !errors.Is(sc.Err(), ErrRecordTooLong) {
		t.Fatalf("got %d records, err %v; want 1 and ErrRecordTooLong", n, sc.Err())
	}
}

func TestScannerReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("a,b\nc,d\ne,"), iotest.ErrReader(boom))
	got, err := scanAll(t, r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	want := []scanned{{Record, []string{"a", "b"}, 4}, {Record, []string{"c", "d"}, 8}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestScannerNoProgress(t *testing.T) {
	if _, err := scanAll(t, emptyReader{}); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

// TestScannerMatchesSplitter: the Scanner gives exactly the non-blank
// records of a Splitter run over the whole input.
func TestScannerMatchesSplitter(t *testing.T) {
	var in bytes.Buffer
	for _, tc := range splitCases {
		if strings.HasSuffix(tc.in, "\n") {
			in.WriteString(tc.in)
		}
	}
	var want []scanned
	off := int64(0)
	for _, r := range splitAll(t, in.Bytes()) {
		off += int64(r.N)
		if r.Kind != Blank {
			want = append(want, scanned{r.Kind, r.Fields, off})
		}
	}
	got, err := scanAll(t, iotest.HalfReader(bytes.NewReader(in.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}

// dataErrReader returns all its data and a non-EOF error in one call.
type dataErrReader struct {
	data string
	err  error
}

func (r *dataErrReader) Read(p []byte) (int, error) {
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, r.err
}

// TestScannerDataWithError: the records complete before a read error are
// delivered, the incomplete one after them is not.
func TestScannerDataWithError(t *testing.T) {
	boom := errors.New("boom")
	got, err := scanAll(t, &dataErrReader{"a,b\n\"c\nd\",e\nf", boom})
	want := []scanned{{Record, []string{"a", "b"}, 4}, {Record, []string{"c\nd", "e"}, 12}}
	if !errors.Is(err, boom) || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v; want %v, boom", got, err, want)
	}
}

// TestScannerResume: scanning the input again from any Offset a Scanner
// reported gives exactly the records after it, at the same offsets. (A
// new Scanner strips a byte order mark at its start, so the test skips a
// resume point where the rest of the input starts with one.)
func TestScannerResume(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	var inputs [][]byte
	var all bytes.Buffer
	for _, tc := range splitCases {
		inputs = append(inputs, []byte(tc.in))
		if strings.HasSuffix(tc.in, "\n") {
			all.WriteString(tc.in)
		}
	}
	inputs = append(inputs, all.Bytes())
	for range 300 {
		inputs = append(inputs, randomCSV(rng), randomBytes(rng))
	}
	for _, in := range inputs {
		recs := scanRecords(t, bytes.NewReader(in), 0)
		for i, r := range recs {
			rest := in[r.Off:]
			if bytes.HasPrefix(rest, bom[:]) {
				continue
			}
			got := scanRecords(t, iotest.HalfReader(bytes.NewReader(rest)), 0)
			for k := range got {
				got[k].Off += r.Off
			}
			if want := recs[i+1:]; len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
				t.Fatalf("input %q scanned again from offset %d:\n got %v\nwant %v", in, r.Off, got, want)
			}
		}
	}
}
