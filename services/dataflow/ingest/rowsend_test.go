package ingest

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/schema"
)

// TestRowsEndIsWhereTheIngestHasTheRows: for every count of records of
// a file with blank lines, malformed records, a quoted line break, a
// record too long and no final newline, RowsEnd is the offset at which
// an Ingest fed the bytes up to it (in one chunk) has counted exactly
// that many rows, and one byte less has fewer; past the last, an error.
func TestRowsEndIsWhereTheIngestHasTheRows(t *testing.T) {
	const start = 7 // a header's bytes before the records
	long := strings.Repeat("x", 40)
	body := "1,a\n\n2,\"b\nc\"\r\n\"bad\n3,c\n" + long + "\n\r\n4,d\n5,e"
	in, _ := New(start, schema.FileReport{})
	in.MaxRecord, in.Text, in.TextWidth = 32, func([][]byte) {}, 2
	in.Feed([]byte(body), true)
	total := in.Report.Rows
	for rows := int64(0); rows <= total; rows++ {
		end, err := RowsEnd(strings.NewReader(body), start, rows, 32)
		if err != nil {
			t.Fatalf("%d rows: %v", rows, err)
		}
		if got := rowsUpTo(body, start, end); got != rows {
			t.Errorf("%d rows: RowsEnd %d, where an Ingest has %d", rows, end, got)
		}
		if rows > 0 && rowsUpTo(body, start, end-1) >= rows {
			t.Errorf("%d rows: an Ingest has them one byte before RowsEnd (%d)", rows, end)
		}
	}
	if _, err := RowsEnd(strings.NewReader(body), start, total+1, 32); err == nil {
		t.Errorf("%d rows of a file of %d: no error", total+1, total)
	}
}

// rowsUpTo is what an Ingest counts of body's bytes before file offset
// end (the rest of the file still to come).
func rowsUpTo(body string, start, end int64) int64 {
	in, _ := New(start, schema.FileReport{})
	in.MaxRecord, in.Text, in.TextWidth = 32, func([][]byte) {}, 2
	in.Feed([]byte(body[:end-start]), end-start == int64(len(body)))
	return in.Report.Rows
}
