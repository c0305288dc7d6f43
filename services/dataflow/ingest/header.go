package ingest

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/wololo/wololo/services/dataflow/csvio"
	"github.com/wololo/wololo/services/dataflow/schema"
)

// ReadHeader lives here, beside the Ingest, rather than in csvio or
// schema: csvio splits CSV without knowing any file's columns, and schema
// knows the columns without splitting CSV; reading a header is both, and
// it is where an Ingest's columns and starting offset come from. The
// client (before it uploads) and the in-memory executor (before it
// parses) read their files' headers with it, so that the header they
// check is the one the gateway and the reference will see.

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

// ReadHeader reads the header record of an input file from f, which its
// caller opened and names name in every error, and checks it as the
// gateway and the reference would (required columns once each, a bounded
// size), so that a wrong file is refused at once, naming the path the
// user gave. Bytes of a column name that are not UTF-8 are replaced,
// which cannot turn any name into a required one.
func ReadHeader(f fs.File, name string, file schema.File) (Header, error) {
	info, err := f.Stat()
	if err != nil {
		return Header{}, err
	}
	if info.IsDir() {
		return Header{}, fmt.Errorf("%s is a directory, not a CSV file", name)
	}
	sc := csvio.NewScanner(f)
	sc.SetMaxRecordSize(schema.MaxHeaderBytes)
	if !sc.Scan() {
		if errors.Is(sc.Err(), csvio.ErrRecordTooLong) {
			return Header{}, fmt.Errorf("%s: %w", name, schema.HeaderTooLong(file))
		}
		if sc.Err() != nil {
			return Header{}, fmt.Errorf("read header of %s: %w", name, sc.Err())
		}
		return Header{}, fmt.Errorf("%s is empty: it needs at least a header row", name)
	}
	if sc.Kind() != csvio.Record {
		return Header{}, fmt.Errorf("%s: the header row cannot be parsed as CSV", name)
	}
	fields := sc.Fields()
	if _, err := parseHeader(file, fields); err != nil {
		return Header{}, fmt.Errorf("%s: %w", name, err)
	}
	h := Header{DataOffset: sc.Offset(), Size: info.Size()}
	for _, f := range fields {
		h.Columns = append(h.Columns, strings.ToValidUTF8(string(f), "\uFFFD"))
	}
	return h, nil
}
