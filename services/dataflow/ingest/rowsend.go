package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/wololo/wololo/services/dataflow/schema"
)

// RowsEnd is the file offset right after the next rows records of r, whose
// first byte is at file offset start (a record boundary), as an Ingest
// with that MaxRecord counts records (Report.Rows: well-formed and
// malformed ones, not blank lines): the offset an upload's step ends at
// when its rows so far are the rows a standing job's epoch was cut at
// (services/roles/gateway, the replay of a cut job). The records are fed
// one line at a time, so the count stops at the record that reaches it;
// fewer records than rows in r is an error.
func RowsEnd(r io.Reader, start, rows int64, maxRecord int) (int64, error) {
	in, err := New(start, schema.FileReport{})
	if err != nil || rows <= 0 {
		return start, err
	}
	in.MaxRecord = maxRecord
	in.Text, in.TextWidth = func([][]byte) {}, -1 // only counted
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && err != io.EOF {
			return 0, fmt.Errorf("read at offset %d: %w", in.Offset(), err)
		}
		in.Feed(line, err == io.EOF)
		switch {
		case in.Report.Rows == rows && !in.skipping:
			return in.Offset(), nil
		case in.Report.Rows > rows:
			return 0, fmt.Errorf("record %d ends past a line end at offset %d", rows, in.Offset())
		case err == io.EOF:
			return 0, fmt.Errorf("%d records from offset %d, fewer than %d", in.Report.Rows, start, rows)
		}
	}
}
