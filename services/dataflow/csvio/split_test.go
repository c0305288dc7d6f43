package csvio

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// rec is one result of Next, with fields copied out of the buffer.
type rec struct {
	Kind   Kind
	Fields []string
	N      int
}

func (r rec) String() string { return fmt.Sprintf("%v%q/%d", r.Kind, r.Fields, r.N) }

func copyFields(fields [][]byte) []string {
	if fields == nil {
		return nil
	}
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = string(f)
	}
	return out
}

// splitChunks feeds input to a Splitter chunk bytes at a time, the way a
// streaming caller does (carry the unconsumed tail, append the next chunk),
// and returns every non-NeedMore result. It checks the Next contract on
// the way.
func splitChunks(t testing.TB, input []byte, chunk int) []rec {
	t.Helper()
	var sp Splitter
	var out []rec
	var carry []byte
	off := 0
	for {
		end := min(off+chunk, len(input))
		carry = append(carry, input[off:end]...)
		off = end
		atEOF := off == len(input)
		for {
			kind, fields, n := sp.Next(carry, atEOF)
			if kind == NeedMore {
				if n != 0 || fields != nil {
					t.Fatalf("NeedMore with n=%d fields=%q", n, fields)
				}
				if atEOF && len(carry) > 0 {
					t.Fatalf("NeedMore at EOF with %d bytes left: %q", len(carry), carry)
				}
				break
			}
			if n <= 0 || n > len(carry) {
				t.Fatalf("%v: n=%d, buffer has %d bytes", kind, n, len(carry))
			}
			if kind != Record && fields != nil {
				t.Fatalf("%v with fields %q", kind, fields)
			}
			out = append(out, rec{kind, copyFields(fields), n})
			carry = carry[n:]
		}
		if atEOF {
			return out
		}
	}
}

func splitAll(t testing.TB, input []byte) []rec {
	return splitChunks(t, input, len(input)+1)
}

func R(n int, fields ...string) rec { return rec{Record, fields, n} }
func B(n int) rec                   { return rec{Blank, nil, n} }
func M(n int) rec                   { return rec{Malformed, nil, n} }

var splitCases = []struct {
	name string
	in   string
	want []rec
}{
	{"empty", "", nil},
	{"one field", "a\n", []rec{R(2, "a")}},
	{"no final newline", "a,b", []rec{R(3, "a", "b")}},
	{"two records", "a,b\nc,d\n", []rec{R(4, "a", "b"), R(4, "c", "d")}},
	{"last without newline", "a,b\nc,d", []rec{R(4, "a", "b"), R(3, "c", "d")}},
	{"crlf", "a,b\r\nc,d\r\n", []rec{R(5, "a", "b"), R(5, "c", "d")}},
	{"crlf empty last field", "a,\r\n", []rec{R(4, "a", "")}},
	{"empty fields", ",,\n", []rec{R(3, "", "", "")}},
	{"trailing comma at eof", "a,", []rec{R(2, "a", "")}},
	{"blank lines", "\n\r\na\n\n", []rec{B(1), B(2), R(2, "a"), B(1)}},
	{"cr alone is data", "a\rb,c\n", []rec{R(6, "a\rb", "c")}},
	{"cr before crlf", "a\r\r\n", []rec{R(4, "a\r")}},
	{"cr at eof ends the line", "a\r", []rec{R(2, "a")}},
	{"cr at eof after comma", "a,\r", []rec{R(3, "a", "")}},
	{"cr cr at eof", "\r\r", []rec{R(2, "\r")}},
	{"lone cr at eof is blank", "a\n\r", []rec{R(2, "a"), B(1)}},
	{"only cr", "\r", []rec{B(1)}},
	{"only spaces is a record", " \n  \r\n", []rec{R(2, " "), R(4, "  ")}},
	{"long unquoted", "abcdefghijklmnop,qrstuvwxyz0123456789,x\n", []rec{R(40, "abcdefghijklmnop", "qrstuvwxyz0123456789", "x")}},
	{"quoted simple", `"a","b"` + "\n", []rec{R(8, "a", "b")}},
	{"quoted empty", `""` + "\n", []rec{R(3, "")}},
	{"quoted comma", `x,"1 day, 2:03:04",y` + "\n", []rec{R(21, "x", "1 day, 2:03:04", "y")}},
	{"quoted quotes", `"a""b""",""""` + "\n", []rec{R(14, `a"b"`, `"`)}},
	{"quoted newline", "\"a\nb\",c\n", []rec{R(8, "a\nb", "c")}},
	{"quoted crlf becomes lf", "\"a\r\nb\"\r\nc\r\n", []rec{R(8, "a\nb"), R(3, "c")}},
	{"quoted crlf and quotes", "\"\"\"a\r\n\r\r\n\"\"\"\n", []rec{R(13, "\"a\n\r\n\"")}},
	{"quoted lone cr kept", "\"a\rb\",\"\r\"\n", []rec{R(10, "a\rb", "\r")}},
	{"quoted blank line inside", "\"\n\n\"\n", []rec{R(5, "\n\n")}},
	{"quoted at eof", `a,"b"`, []rec{R(5, "a", "b")}},
	{"quoted then crlf at eof", "\"b\"\r\n", []rec{R(5, "b")}},
	{"quoted last field after unquoted", "a,b,\"c,d\"\n", []rec{R(10, "a", "b", "c,d")}},
	{"bare quote", `a"b,c` + "\nd\n", []rec{M(6), R(2, "d")}},
	{"bare quote in last field", `a,bc"` + "\r\nd\n", []rec{M(7), R(2, "d")}},
	{"bare quote at eof", `a,b"c`, []rec{M(5)}},
	{"bare quote after quoted field", `"a",b"` + "\nc\n", []rec{M(7), R(2, "c")}},
	{"bare quote before quoted newline", "a\"b,\"c\nd\"\n", []rec{M(7), M(3)}},
	{"bare quote after quoted newline", "\"a\nb\",c\"d\ne\n", []rec{M(10), R(2, "e")}},
	{"space before quote is a bare quote", `a, "b"` + "\nc\n", []rec{M(7), R(2, "c")}},
	{"text after closing quote", "\"a\"b,c\nd\n", []rec{M(7), R(2, "d")}},
	{"space after closing quote", "\"a\" ,c\r\nd\n", []rec{M(8), R(2, "d")}},
	{"bad spot after a quoted newline", "\"a\nb\"x\ny\n", []rec{M(7), R(2, "y")}},
	{"malformed resyncs at next newline", "x,\"a\"\"b\"c,\"d\ne\n", []rec{M(13), R(2, "e")}},
	{"malformed last line", "a\n\"b\"c", []rec{R(2, "a"), M(4)}},
	{"cr then text after quote", "\"a\"\rb\nc\n", []rec{M(6), R(2, "c")}},
	{"cr at eof after quote", "\"a\"\r", []rec{R(4, "a")}},
	{"cr at eof after quoted newline", "\"a\nb\"\r", []rec{R(6, "a\nb")}},
	{"cr at eof inside quotes", "\"a\n\r", []rec{M(4)}},
	{"unclosed quote", "a\n\"b,c\nd\n", []rec{R(2, "a"), M(7)}},
	{"unclosed after escaped quote", "\"a\"\"", []rec{M(4)}},
	{"lone quote", "\"", []rec{M(1)}},
	{"utf8 and bom not handled", "\xEF\xBB\xBFa,é\n", []rec{R(8, "\xEF\xBB\xBFa", "é")}},
}

func TestSplitter(t *testing.T) {
	for _, tc := range splitCases {
		t.Run(tc.name, func(t *testing.T) {
			got := splitAll(t, []byte(tc.in))
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Next over %q:\n got %v\nwant %v", tc.in, got, tc.want)
			}
		})
	}
}

// TestSplitterChunks feeds every case, and a long mixed input, in chunks
// of every size: the records and their byte counts must not change.
func TestSplitterChunks(t *testing.T) {
	var all strings.Builder
	for _, tc := range splitCases {
		t.Run(tc.name, func(t *testing.T) {
			for size := 1; size <= len(tc.in); size++ {
				got := splitChunks(t, []byte(tc.in), size)
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("chunks of %d over %q:\n got %v\nwant %v", size, tc.in, got, tc.want)
				}
			}
		})
		// Build a multi-record input from the cases whose records end in
		// a newline, so that they do not run into each other.
		if strings.HasSuffix(tc.in, "\n") {
			all.WriteString(tc.in)
		}
	}
	in := []byte(all.String())
	want := splitAll(t, in)
	for size := 1; size <= len(in); size++ {
		if got := splitChunks(t, in, size); !reflect.DeepEqual(got, want) {
			t.Fatalf("chunks of %d:\n got %v\nwant %v", size, got, want)
		}
	}
}

// TestNeedMoreAtEverySplit cuts a multi-record input at every point and
// checks that the prefix alone never yields a record that the whole input
// does not, and that a cut inside a record gives NeedMore.
func TestNeedMoreAtEverySplit(t *testing.T) {
	in := []byte("h1,h2,h3\r\n\"a,\"\"b\"\"\",x\r\n\n\"c\r\nd\",,\"\"\r\nplain,\"q\"x,z\nlast,\"\",end")
	want := splitAll(t, in)
	var sp Splitter
	for cut := 0; cut <= len(in); cut++ {
		pos := 0
		for i := 0; ; i++ {
			kind, fields, n := sp.Next(in[pos:cut], false)
			if kind == NeedMore {
				break
			}
			got := rec{kind, copyFields(fields), n}
			if i >= len(want) || !reflect.DeepEqual(got, want[i]) {
				t.Fatalf("cut at %d, record %d: got %v, want %v", cut, i, got, want)
			}
			pos += n
		}
	}
}

func TestSplitterNoAllocs(t *testing.T) {
	in := []byte("abc,def,\"g,h\",\"i\"\"j\",,klmnopqrstuvwxyz,1,2,3,4,5\r\n")
	var sp Splitter
	sp.Next(in, false) // grow the scratch once
	allocs := testing.AllocsPerRun(100, func() {
		if kind, fields, _ := sp.Next(in, false); kind != Record || len(fields) != 11 {
			t.Fatalf("got %v with %d fields", kind, len(fields))
		}
	})
	if allocs != 0 {
		t.Fatalf("Next allocates %.1f times per record", allocs)
	}
}

func TestFieldsCapacityClipped(t *testing.T) {
	in := []byte("ab,cd,\"e\"\"f\",\"gh\"\n")
	var sp Splitter
	_, fields, _ := sp.Next(in, true)
	for i, f := range fields {
		if cap(f) != len(f) {
			t.Errorf("field %d %q has cap %d", i, f, cap(f))
		}
	}
}

// ---- differential testing against encoding/csv ----

// orec is one record as the oracle, a Scanner or a Splitter (blank lines
// skipped) reports it: Record or Malformed, the fields of a Record, and
// the input offset of the record's end.
type orec struct {
	Kind   Kind
	Fields []string
	Off    int64
}

func (r orec) String() string { return fmt.Sprintf("%v%q@%d", r.Kind, r.Fields, r.Off) }

// stdRecords is the oracle: encoding/csv configured as the contract says
// (FieldsPerRecord -1, LazyQuotes false), each successful Read a Record,
// each *csv.ParseError one Malformed record, and InputOffset after each
// Read the offset of its end. base is added to the offsets.
func stdRecords(t testing.TB, input []byte, base int64) []orec {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(input))
	r.FieldsPerRecord = -1
	r.LazyQuotes = false
	var out []orec
	for {
		fields, err := r.Read()
		if err == io.EOF {
			return out
		}
		var perr *csv.ParseError
		switch {
		case errors.As(err, &perr):
			out = append(out, orec{Malformed, nil, base + r.InputOffset()})
		case err != nil:
			t.Fatalf("encoding/csv over %q: %v", input, err)
		default:
			out = append(out, orec{Record, fields, base + r.InputOffset()})
		}
	}
}

// splitRecords runs a Splitter over input in chunks of the given size and
// returns its Record and Malformed results, with their end offsets.
func splitRecords(t testing.TB, input []byte, chunk int) []orec {
	t.Helper()
	var out []orec
	off := int64(0)
	for _, r := range splitChunks(t, input, chunk) {
		off += int64(r.N)
		if r.Kind != Blank {
			out = append(out, orec{r.Kind, r.Fields, off})
		}
	}
	if off != int64(len(input)) {
		t.Fatalf("Splitter consumed %d of %d bytes of %q", off, len(input), input)
	}
	return out
}

// scanRecords runs a Scanner over r, with an initial buffer of size bytes
// (0: the default).
func scanRecords(t testing.TB, r io.Reader, size int) []orec {
	t.Helper()
	sc := NewScanner(r)
	sc.size = size
	var out []orec
	for sc.Scan() {
		out = append(out, orec{sc.Kind(), copyFields(sc.Fields()), sc.Offset()})
	}
	if sc.Err() != nil {
		t.Fatalf("Scanner: %v", sc.Err())
	}
	return out
}

// chunkSizes returns the chunk sizes to feed an input of n bytes in:
// every size from 1 to n+1 (n+1: the whole input at once). Fed in chunks
// of c bytes, a record of r bytes is parsed again from its start about r/c
// times, so for a long input (which a fuzzer, whose instrumented code is
// slow, also keeps minimizing) that would cost too much: it gets eight
// sizes from n/128 up, then doubling sizes, and the whole.
func chunkSizes(n int) []int {
	var sizes []int
	if n <= 256 {
		for c := 1; c <= n+1; c++ {
			sizes = append(sizes, c)
		}
		return sizes
	}
	c0 := n / 128
	for c := c0; c < c0+8; c++ {
		sizes = append(sizes, c)
	}
	for c := 2 * c0; c < n; c *= 2 {
		sizes = append(sizes, c+1)
	}
	return append(sizes, n+1)
}

// scanConfig is a way to run a Scanner: a reader wrapper and an initial
// buffer size (0: the default).
type scanConfig struct {
	name string
	wrap func(io.Reader) io.Reader
	size int
}

func plainReader(r io.Reader) io.Reader { return r }

var (
	// smallScanners start with tiny buffers, so that they grow and
	// compact them, and cost little in a fuzz target.
	smallScanners = []scanConfig{
		{"whole/1", plainReader, 1},
		{"one byte/3", iotest.OneByteReader, 3},
		{"half/16", iotest.HalfReader, 16},
		{"data+eof/64", iotest.DataErrReader, 64},
	}
	allScanners = append([]scanConfig{{"whole/default", plainReader, 0}}, smallScanners...)
)

// checkAgainstStd checks, for any input, that a Splitter fed the input in
// chunks of every size, and a Scanner run each way in scanners, report
// exactly the records, kinds and end offsets of the oracle (for the
// Scanner: after a leading byte order mark is stripped, as the reference
// evaluator does), and that splitting the input again from each reported
// offset (or, with many records, from some 32 spread over the input) gives
// exactly the records after it.
func checkAgainstStd(t testing.TB, input []byte, scanners []scanConfig) {
	t.Helper()
	want := stdRecords(t, input, 0)
	for _, size := range chunkSizes(len(input)) {
		if got := splitRecords(t, input, size); !reflect.DeepEqual(got, want) {
			t.Fatalf("input %q in chunks of %d:\nSplitter     %v\nencoding/csv %v", input, size, got, want)
		}
	}
	step := 1 + len(want)/32 // at most some 32 restarts, as each costs O(n)
	for i := 0; i < len(want); i += step {
		r := want[i]
		rest := splitRecords(t, input[r.Off:], len(input)+1)
		for k := range rest {
			rest[k].Off += r.Off
		}
		if len(rest)+len(want[i+1:]) > 0 && !reflect.DeepEqual(rest, want[i+1:]) {
			t.Fatalf("input %q split again from offset %d:\n got %v\nwant %v", input, r.Off, rest, want[i+1:])
		}
	}
	if len(scanners) == 0 {
		return
	}
	body, base := input, int64(0)
	if bytes.HasPrefix(input, bom[:]) {
		body, base = input[len(bom):], int64(len(bom))
	}
	want = stdRecords(t, body, base)
	for _, sc := range scanners {
		if got := scanRecords(t, sc.wrap(bytes.NewReader(input)), sc.size); !reflect.DeepEqual(got, want) {
			t.Fatalf("input %q, Scanner %s:\nScanner      %v\nencoding/csv %v", input, sc.name, got, want)
		}
	}
}

// randomCSV builds an input that is mostly well formed: records of fields
// drawn from awkward pieces, quoted when needed (and sometimes when not),
// with mixed line endings and blank lines, and now and then a stray byte.
func randomCSV(rng *rand.Rand) []byte {
	pieces := []string{"", "a", "bc", " ", ",", "\"", "\n", "\r", "\r\n", "é", "1 day, 2:03:04", "x\"y", "\xff"}
	var b []byte
	for range rng.IntN(6) {
		if rng.IntN(8) == 0 {
			b = append(b, "\n\r\n"[rng.IntN(2):]...)
		}
		nf := 1 + rng.IntN(5)
		for f := range nf {
			if f > 0 {
				b = append(b, ',')
			}
			var field string
			for range rng.IntN(4) {
				field += pieces[rng.IntN(len(pieces))]
			}
			if NeedsQuotes(field) || rng.IntN(4) == 0 {
				b = append(b, '"')
				b = append(b, strings.ReplaceAll(field, `"`, `""`)...)
				b = append(b, '"')
			} else {
				b = append(b, field...)
			}
		}
		switch rng.IntN(10) {
		case 0:
			if len(b) > 0 {
				b[rng.IntN(len(b))] = ",\"\n\rx"[rng.IntN(5)]
			}
		case 1, 2:
			b = append(b, "\r\n"...)
		default:
			b = append(b, '\n')
		}
	}
	if rng.IntN(10) == 0 {
		b = append(b, '\r')
	}
	return b
}

// randomBytes builds an input of the bytes that matter to the format,
// well formed or not, and some others.
func randomBytes(rng *rand.Rand) []byte {
	const alphabet = "\"\"\"\",,,\r\r\n\n\n a\xEF\xBB\xBF"
	b := make([]byte, rng.IntN(40))
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return b
}

func TestDifferentialEncodingCSV(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for range 5000 {
		checkAgainstStd(t, randomCSV(rng), smallScanners)
		checkAgainstStd(t, randomBytes(rng), smallScanners)
	}
	for _, tc := range splitCases {
		checkAgainstStd(t, []byte(tc.in), allScanners)
		checkAgainstStd(t, []byte("\xEF\xBB\xBF"+tc.in), allScanners)
	}
	for _, tc := range stdCases {
		checkAgainstStd(t, []byte(tc), allScanners)
	}
}

// stdCases are inputs where encoding/csv has rules of its own.
var stdCases = []string{
	"", "\r", "\r\r", "\n\r", "a\n\r", "a\r", "a,\r", "\"a\"\r", "\"a\n\r", "\"a\r\nb\"\r", "\"a\rb\"\r",
	"\"a\"x\n\r", "\r\r\n", " \n", "  \r\n\t\n", "ab\"c,d\ne\n", "\"a\nb\",c\"d\ne\n", "a\"b,\"c\nd\"\n",
	"\"a\"\"\n\"\"b\"\n", "\"\"\"\n", "\"\n\"\"\n\"\n", "a,\"b\"\"\"c\r\nd\n", "\"a\r\r\n\"\n", "x,\"\r\n\"\r\n",
	"\xEF\xBB\xBF", "\xEF\xBB\xBF\r", "\xEF\xBB\xBF\"", "\xEF\xBB", "a\r\rb\r\n",
}

func addSeeds(f *testing.F) {
	for _, tc := range splitCases {
		f.Add([]byte(tc.in))
	}
	for _, tc := range stdCases {
		f.Add([]byte(tc))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		f.Add(randomCSV(rng))
		f.Add(randomBytes(rng))
	}
}

// FuzzSplitterVsEncodingCSV: on every input, in chunks of every size,
// Splitter and Scanner give the records, kinds and offsets of the
// encoding/csv oracle.
func FuzzSplitterVsEncodingCSV(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, input []byte) {
		checkAgainstStd(t, input, smallScanners)
	})
}

// checkFastPath compares every result of Next over input with the general
// parser alone, which the fast path must agree with.
func checkFastPath(t testing.TB, input []byte, atEOF bool) {
	var fast, slow Splitter
	for buf := input; ; {
		kind, fields, n := fast.Next(buf, atEOF)
		got := rec{kind, copyFields(fields), n}
		want := got
		if kind != Blank {
			k, f, m := slow.general(buf, 0, nil, atEOF)
			if len(buf) == 0 {
				k, f, m = NeedMore, nil, 0
			}
			want = rec{k, copyFields(f), m}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q (atEOF %v): Next gives %v, the general parser %v", buf, atEOF, got, want)
		}
		if kind == NeedMore {
			return
		}
		buf = buf[n:]
	}
}

func TestFastPathAgreesWithGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		in := randomCSV(rng)
		checkFastPath(t, in, true)
		checkFastPath(t, in, false)
		// The same, as fewer and longer lines (past the 64-byte blocks).
		long := append(bytes.ReplaceAll(in, []byte("\n"), []byte(",")), "\n"+string(in)...)
		checkFastPath(t, long, true)
		checkFastPath(t, long, false)
		if got, want := splitRecords(t, long, len(long)+1), stdRecords(t, long, 0); !reflect.DeepEqual(got, want) {
			t.Fatalf("input %q:\nSplitter     %v\nencoding/csv %v", long, got, want)
		}
	}
	for _, tc := range splitCases {
		checkFastPath(t, []byte(tc.in), true)
		checkFastPath(t, []byte(tc.in), false)
	}
}

// FuzzSplitterContract: Next never panics, consumes between 1 and len(buf)
// bytes unless it needs more, gives the same records whether the input
// comes whole or in chunks, and its fast path agrees with the general
// parser.
func FuzzSplitterContract(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, input []byte) {
		whole := splitAll(t, input)
		total := 0
		for _, r := range whole {
			total += r.N
		}
		if total != len(input) {
			t.Fatalf("consumed %d of %d bytes", total, len(input))
		}
		for _, size := range []int{1, 2, 3, 7} {
			if got := splitChunks(t, input, size); !reflect.DeepEqual(got, whole) {
				t.Fatalf("chunks of %d over %q:\n got %v\nwant %v", size, input, got, whole)
			}
		}
		checkFastPath(t, input, true)
		checkFastPath(t, input, false)
		// Without atEOF, any prefix gives a prefix of the records.
		var sp Splitter
		for pos, i := 0, 0; ; i++ {
			kind, fields, n := sp.Next(input[pos:], false)
			if kind == NeedMore {
				break
			}
			if got := (rec{kind, copyFields(fields), n}); !reflect.DeepEqual(got, whole[i]) {
				t.Fatalf("without atEOF record %d: got %v, want %v", i, got, whole[i])
			}
			pos += n
		}
	})
}

// TestCommaMasks checks the SWAR comma search against a byte loop, at
// every line length and every position of a comma.
func TestCommaMasks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for length := 0; length <= 200; length++ {
		for range 20 {
			line := make([]byte, length)
			for k := range line {
				line[k] = ",\x00\xac\x2d\x2b\xff\"a"[rng.IntN(8)]
			}
			for i := 0; i < len(line); i += 64 {
				var got uint64
				if i+64 <= len(line) {
					got = commaMask64((*[64]byte)(line[i:]))
				} else {
					got = commaMaskTail(line, i)
				}
				var want uint64
				for k := 0; k < 64 && i+k < len(line); k++ {
					if line[i+k] == ',' {
						want |= 1 << k
					}
				}
				if got != want {
					t.Fatalf("line %q block %d: mask %064b, want %064b", line, i, got, want)
				}
			}
		}
	}
}
