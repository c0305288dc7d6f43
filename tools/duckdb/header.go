package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxHeaderBytes is the contract's bound on a header row.
const maxHeaderBytes = 1 << 20

// Columns the queries read, per file (docs/queries.md, "Input files").
var (
	matchColumns  = []string{"token", "ladder", "mirror", "average_rating", "map", "server", "duration"}
	playerColumns = []string{"match", "rating", "civ", "winner"}
)

// header is what a file's header row says: how many fields a record has
// and where each required column is.
type header struct {
	width int
	index map[string]int
}

// readHeader reads path's header row with the contract's rules: a UTF-8
// BOM is ignored, every required column must be there exactly once, and the
// row must be at most maxHeaderBytes long. DuckDB would rename a repeated
// column and sniff the rest; the contract refuses such a file, so this is
// checked here, before DuckDB reads a row.
func readHeader(path string, required []string) (header, error) {
	f, err := os.Open(path)
	if err != nil {
		return header{}, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	if bom, err := br.Peek(3); err == nil && bytes.Equal(bom, []byte("\xEF\xBB\xBF")) {
		br.Discard(3)
	}
	r := csv.NewReader(br)
	r.FieldsPerRecord = -1
	fields, err := r.Read()
	if errors.Is(err, io.EOF) {
		return header{}, fmt.Errorf("%s: no header row", path)
	}
	if err != nil {
		return header{}, fmt.Errorf("%s: header: %w", path, err)
	}
	return findColumns(path, fields, required)
}

// findColumns locates the required columns in a header's fields.
func findColumns(path string, fields, required []string) (header, error) {
	size := 0
	count := map[string]int{}
	h := header{width: len(fields), index: map[string]int{}}
	for i, name := range fields {
		size += len(name) + 1
		if count[name]++; count[name] == 1 {
			h.index[name] = i
		}
	}
	if size > maxHeaderBytes {
		return header{}, fmt.Errorf("%s: the header row is longer than %d bytes: not a CSV header (is it the right file?)", path, maxHeaderBytes)
	}
	for _, c := range required {
		switch count[c] {
		case 0:
			return header{}, fmt.Errorf("%s: header has no %q column", path, c)
		case 1:
		default:
			return header{}, fmt.Errorf("%s: header has the %q column twice", path, c)
		}
	}
	return h, nil
}

// col is the name read_csv gives the column of the header's field name.
func (h header) col(name string) string { return fmt.Sprintf("c%d", h.index[name]) }
