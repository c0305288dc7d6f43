package exec

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wololo/wololo/services/dataflow/csvio"
)

// readRejects is what a CSVReader reads, as one csvio.Scanner reading the
// file in order reads it: the header, each kept row's fields (the others
// empty), the records read and those skipped, and the records skipped as
// a CSVReader lists them: each one's start (after the blank lines before
// it), why, and its first bytes; and where each kept row's record starts
// (after the blank lines before it).
func readRejects(t *testing.T, file string, maxRecordBytes int, keep []string) (header []string, rows [][]string, read, malformed int64, rejects []Reject, starts []int64) {
	t.Helper()
	sc := csvio.NewScanner(strings.NewReader(file))
	if !sc.Scan() || sc.Kind() != csvio.Record {
		return nil, nil, 0, 0, nil, nil
	}
	for _, f := range sc.Fields() {
		header = append(header, string(f))
	}
	for from := sc.Offset(); sc.Scan(); from = sc.Offset() {
		read++
		tooLong := maxRecordBytes > 0 && sc.Offset()-from > int64(maxRecordBytes)
		start := from
		for {
			if strings.HasPrefix(file[start:], "\n") {
				start++
			} else if strings.HasPrefix(file[start:], "\r\n") {
				start += 2
			} else {
				break
			}
		}
		if tooLong || sc.Kind() != csvio.Record || len(sc.Fields()) != len(header) {
			malformed++
			why := FieldCount
			if tooLong {
				why = TooLong
			} else if sc.Kind() != csvio.Record {
				why = Quoting
			}
			if len(rejects) < MaxRejects {
				rejects = append(rejects, Reject{Offset: start, Kind: why, Head: []byte(file[start:min(sc.Offset(), start+RejectHead)])})
			}
			continue
		}
		row := make([]string, len(header))
		for i, f := range sc.Fields() {
			if keep == nil || slices.Contains(keep, header[i]) {
				row[i] = string(f)
			}
		}
		rows, starts = append(rows, row), append(starts, start)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return header, rows, read, malformed, rejects, starts
}

// randomCSV is a file of a header of three columns and records of every
// kind: blank lines, quoted fields with commas, quotes and line ends,
// broken quoting, other field counts, "\r\n" line ends, a byte order mark.
func randomCSV(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(4) == 0 {
		b.WriteString("\xEF\xBB\xBF")
	}
	for range r.IntN(3) {
		b.WriteString("\n")
	}
	b.WriteString("a,b,c\n")
	fields := []string{"", "x", "yy", "1.5", `"q,q"`, `"l` + "\n" + `l"`, `"a""b"`, `b"ad`, `"x"y`, "\r", "zzzzzzzzzzzz"}
	ends := []string{"\n", "\r\n", "\n\n", "\r\n\r\n", "\n\r\n"}
	for range r.IntN(60) {
		for i := range 2 + r.IntN(3) {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(fields[r.IntN(len(fields))])
		}
		b.WriteString(ends[r.IntN(len(ends))])
	}
	if r.IntN(2) == 0 {
		b.WriteString("last,one,x") // no final line end
	}
	return b.String()
}

// TestCSVReader: read in pieces of any size, parsed side by side, a file's
// rows, in order, its counts and the records it skipped (where each
// starts, why, its first bytes) are those of one reading in order; the
// blank lines before a record count in its length whatever piece they
// fall in. Cut at random offsets (NewCSVReaderCut), each row's batch is
// of the run its record's start falls in. Parted (NewCSVReaderParted),
// each row's batch is of its part, and each part's rows are in order.
func TestCSVReader(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 1000 {
		file := randomCSV(r)
		max := []int{0, 12, 20}[r.IntN(3)]
		keep := [][]string{nil, {"b"}, {"a", "c"}}[r.IntN(3)]
		size, parsers := 1+r.IntN(40), 1+r.IntN(3)
		var by PartBy
		if r.IntN(2) == 0 { // parted by the first field's length: 3 parts
			keep, by = nil, PartBy{Parts: 3, Of: func(fields [][]byte) int { return len(fields[0]) % 3 }}
		}
		header, want, read, malformed, rejects, starts := readRejects(t, file, max, keep)
		var cuts []int64
		for range r.IntN(4) * (1 - by.Parts/3) { // cut or parted, not both
			cuts = append(cuts, r.Int64N(int64(len(file))+2))
		}
		slices.Sort(cuts)
		var wantRuns []int
		for _, at := range starts {
			run, _ := slices.BinarySearch(cuts, at+1) // the cuts at or before at
			wantRuns = append(wantRuns, run)
		}
		cr, err := newCSVReader(iotest.HalfReader(strings.NewReader(file)), max, keep, parsers, size, cuts, func([]string) (PartBy, error) { return by, nil })
		if err != nil {
			t.Fatalf("case %d: %v\n%q", i, err, file)
		}
		if cr.Parted() != (by.Parts > 0) {
			t.Fatalf("case %d: Parted %v, parted by %d parts", i, cr.Parted(), by.Parts)
		}
		var got [][]string
		var runs []int
		parts := make([][][]string, 3)
		for {
			b, err := cr.Next()
			if err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			if b == nil {
				break
			}
			for row := range b.N {
				runs = append(runs, cr.Run())
				var fields []string
				for _, v := range b.Cols {
					fields = append(fields, string(v.Text(row)))
				}
				got = append(got, fields)
				parts[cr.Part()] = append(parts[cr.Part()], fields)
			}
		}
		cr.Close()
		if by.Parts > 0 { // each part's rows in order, of that part
			wantParts := make([][][]string, by.Parts)
			for _, row := range want {
				k := by.Of([][]byte{[]byte(row[0])})
				wantParts[k] = append(wantParts[k], row)
			}
			if fmt.Sprint(parts) != fmt.Sprint(wantParts) {
				t.Fatalf("case %d (pieces of %d): parts\n%q\nwant %q\nfile %q", i, size, parts, wantParts, file)
			}
			got = want // the order across parts is the reader's
			if len(parts[0])+len(parts[1])+len(parts[2]) != len(want) {
				t.Fatalf("case %d: %d rows in parts, want %d", i, len(parts[0])+len(parts[1])+len(parts[2]), len(want))
			}
		}
		gr, gm := cr.Counts()
		if !slices.Equal(cr.Columns, header) || gr != read || gm != malformed || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("case %d (max %d, pieces of %d): header %q, %d read, %d malformed, rows\n%q\nwant %q, %d, %d,\n%q\nfile %q",
				i, max, size, cr.Columns, gr, gm, got, header, read, malformed, want, file)
		}
		if !slices.Equal(runs, wantRuns) {
			t.Fatalf("case %d (pieces of %d, cuts %v): runs %v, want %v\nfile %q", i, size, cuts, runs, wantRuns, file)
		}
		if fmt.Sprint(cr.Rejects()) != fmt.Sprint(rejects) {
			t.Fatalf("case %d (max %d, pieces of %d): rejects\n%+v\nwant\n%+v\nfile %q", i, max, size, cr.Rejects(), rejects, file)
		}
	}
}

// TestCSVReaderErrors: a file without a header, or whose reading fails, is
// an error; Close stops a reader that is not read to the end.
func TestCSVReaderErrors(t *testing.T) {
	if _, err := NewCSVReader(strings.NewReader("\n\n"), 0, nil, 1); err == nil {
		t.Error("no header: no error")
	}
	if _, err := NewCSVReader(strings.NewReader("a,\"b\n"), 0, nil, 1); err == nil {
		t.Error("a malformed header: no error")
	}
	broken := io.MultiReader(strings.NewReader("a,b\n1,2\n"), iotest.ErrReader(errors.New("disk gone")))
	cr, err := newCSVReader(broken, 0, nil, 2, 4, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := cr.Next()
		if err != nil {
			if !strings.Contains(err.Error(), "disk gone") {
				t.Errorf("error %v", err)
			}
			break
		}
		if b == nil {
			t.Fatal("a read error, and no error")
		}
	}
	cr.Close()
	long := strings.Repeat("x,y\n", 100_000)
	cr, err = newCSVReader(strings.NewReader("a,b\n"+long), 0, nil, 2, 64, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := cr.Next(); b == nil || err != nil {
		t.Fatalf("first batch: %v, %v", b, err)
	}
	cr.Close()
	if b, err := cr.Next(); b != nil || err == nil {
		t.Errorf("after Close: %v, %v", b, err)
	}
}
