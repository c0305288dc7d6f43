package ingest

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/wololo/wololo/services/dataflow/csvio"
	"github.com/wololo/wololo/services/dataflow/schema"
)

// ReadHeader lives here, beside the Ingest, rather than in csvio: it is
// where an Ingest's width and starting offset come from. The client
// (before it uploads) and `wololo demo` and `explain` (before they plan)
// read their files' headers with it, so that the header they check is the
// one the gateway will see.

// Header is what a file's header record says: the names of its columns
// and where its records begin, with the size of the file they were read
// from.
type Header struct {
	// Columns are the header's names, each made valid UTF-8 (they travel
	// as protobuf strings).
	Columns []string
	// DataOffset is the file offset of the first byte after the header
	// record (and a leading byte order mark).
	DataOffset int64
	// Size is the file's size when the header was read.
	Size int64
}

// ReadHeader reads the header record of a CSV file from f, which its
// caller opened and names name in every error: its column names (none
// required: a job's plan checks those it reads), each made valid UTF-8
// (they travel as protobuf strings), where its records begin (past a
// leading byte order mark too) and the file's size. A header over
// schema.MaxHeaderBytes, or one that is not CSV, is refused at once,
// naming the path the user gave, as the gateway would refuse it.
func ReadHeader(f fs.File, name string) (Header, error) {
	info, err := f.Stat()
	if err != nil {
		return Header{}, err
	}
	if info.IsDir() {
		return Header{}, fmt.Errorf("%s is a directory, not a CSV file", name)
	}
	sc := csvio.NewScanner(f)
	sc.SetMaxRecordSize(schema.MaxHeaderBytes)
	tooLong := fmt.Errorf("%s: the header row is longer than %d bytes: not a CSV header (is it the right file?)", name, schema.MaxHeaderBytes)
	if !sc.Scan() {
		if errors.Is(sc.Err(), csvio.ErrRecordTooLong) {
			return Header{}, tooLong
		}
		if sc.Err() != nil {
			return Header{}, fmt.Errorf("read header of %s: %w", name, sc.Err())
		}
		return Header{}, fmt.Errorf("%s is empty: it needs at least a header row", name)
	}
	if sc.Kind() != csvio.Record {
		return Header{}, fmt.Errorf("%s: the header row cannot be parsed as CSV", name)
	}
	n := 0
	for _, c := range sc.Fields() {
		n += len(c) + 1 // its separator, or the line end
	}
	if n > schema.MaxHeaderBytes {
		return Header{}, tooLong
	}
	h := Header{DataOffset: sc.Offset(), Size: info.Size()}
	for _, c := range sc.Fields() {
		h.Columns = append(h.Columns, strings.ToValidUTF8(string(c), "\uFFFD"))
	}
	return h, nil
}
