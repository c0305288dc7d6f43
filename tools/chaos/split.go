package chaos

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wololo/wololo/services/dataflow/csvio"
	"github.com/wololo/wololo/services/dataflow/ingest"
)

// epochFiles are the two input files of one epoch of a standing job, or
// of the batch job over epochs 1..k that its version k must equal.
type epochFiles struct{ matches, players string }

// splitInputs cuts both input files into n parts each (splitInput), into
// dir: parts[k-1] are epoch k's files, prefixes[k-1] the rows of epochs
// 1..k as one pair of files. The last prefix is the input itself.
func splitInputs(matches, players, dir string, n int) (parts, prefixes []epochFiles, err error) {
	mParts, mPrefixes, err := splitInput(matches, dir, n)
	if err != nil {
		return nil, nil, err
	}
	pParts, pPrefixes, err := splitInput(players, dir, n)
	if err != nil {
		return nil, nil, err
	}
	for k := range n {
		parts = append(parts, epochFiles{mParts[k], pParts[k]})
		prefixes = append(prefixes, epochFiles{mPrefixes[k], pPrefixes[k]})
	}
	return parts, prefixes, nil
}

// splitInput cuts the CSV file at path into n parts of about as many
// records, each with the file's header row (its bytes, a byte order mark
// included), into dir as NAME.K.csv (K from 1), and writes the prefix of
// parts 1..K as NAME.upto.K.csv for K < n: the header, then those parts'
// records. The records are cut where the gateway's reader ends them
// (csvio.Splitter, on the whole file): a quoted field with a line break,
// a malformed record or a blank line stays whole in one part, so the
// rows of the parts are the file's rows and those of a prefix the rows
// of its parts, in order. The whole file is read into memory: the
// harness's datasets are a few megabytes.
func splitInput(path, dir string, n int) (parts, prefixes []string, err error) {
	if n < 1 {
		return nil, nil, fmt.Errorf("split %s: %d parts", path, n)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("split the input: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("split the input: %w", err)
	}
	h, err := ingest.ReadHeader(f, path)
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("split the input: %w", err)
	}
	header, body := data[:h.DataOffset], data[h.DataOffset:]
	ends := recordEnds(body)
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	from := 0
	for k := 1; k <= n; k++ {
		to := 0
		if last := len(ends) * k / n; last > 0 {
			to = ends[last-1]
		}
		part := filepath.Join(dir, fmt.Sprintf("%s.%d.csv", name, k))
		if err := writeParts(part, header, body[from:to]); err != nil {
			return nil, nil, err
		}
		parts = append(parts, part)
		prefix := path
		if k < n {
			prefix = filepath.Join(dir, fmt.Sprintf("%s.upto.%d.csv", name, k))
			if err := writeParts(prefix, header, body[:to]); err != nil {
				return nil, nil, err
			}
		}
		prefixes = append(prefixes, prefix)
		from = to
	}
	return parts, prefixes, nil
}

// recordEnds are the offsets in body just past each of its records (and
// blank lines), as csvio.Splitter reads them from the whole input.
func recordEnds(body []byte) []int {
	var ends []int
	var sp csvio.Splitter
	for at := 0; ; {
		kind, _, n := sp.Next(body[at:], true)
		if kind == csvio.NeedMore {
			return ends
		}
		at += n
		ends = append(ends, at)
	}
}

// writeParts writes header then records as the file path.
func writeParts(path string, header, records []byte) error {
	if err := os.WriteFile(path, bytes.Join([][]byte{header, records}, nil), 0o644); err != nil {
		return fmt.Errorf("split the input: %w", err)
	}
	return nil
}
