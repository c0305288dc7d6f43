package client

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/atomicfile"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/dataflow/schema"
)

// RejectsFile is the name of the file, beside the results, that lists a
// job's malformed records: file, offset, reason, first_bytes, one a
// record, the first 1000 of each input file (what the gateway keeps).
const RejectsFile = "rejects.csv"

// WriteRejects writes dir/rejects.csv from the malformed records a job
// over lists, and returns its path and how many records it lists; with
// none listed it writes nothing and removes a rejects.csv an earlier run
// left there (it would describe other files), returning "".
func WriteRejects(dir string, job *wololov1.Job) (string, int, error) {
	path := filepath.Join(dir, RejectsFile)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"file", "offset", "reason", "first_bytes"})
	n := 0
	for _, f := range InputReports(job) {
		for _, r := range f.GetRejects() {
			w.Write([]string{f.File, strconv.FormatInt(r.Offset, 10), r.Reason, string(trimLineEnd(r.Head))})
			n++
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return "", 0, fmt.Errorf("write %s: %w", path, err)
	}
	if n == 0 {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return "", 0, fmt.Errorf("remove the stale %s: %w", path, err)
		}
		return "", 0, nil
	}
	if err := atomicfile.Write(path, buf.Bytes(), 0o644); err != nil {
		return "", 0, fmt.Errorf("write %s: %w", path, err)
	}
	return path, n, nil
}

// trimLineEnd drops the line ending a record's first bytes end with when
// the record is short: it is not the record's content.
func trimLineEnd(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// MaxMalformedFlag registers --max-malformed on fs; the function it
// returns, called after parsing, gives the limit given (nil when the flag
// was not: the gateway's default applies) or a usage error.
func MaxMalformedFlag(fs *flag.FlagSet) func() (*float64, error) {
	v := fs.Float64("max-malformed", 0, "share of each file's records that may be malformed, from 0 (none) to 1 (no limit); past it the job fails when that file is in, "+
		"naming the first bad record (default: the gateway's --max-malformed, 0.1 unless it sets another; up to 10 malformed records are tolerated whatever their share, unless it is 0)")
	return func() (*float64, error) {
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == "max-malformed" })
		if !set {
			return nil, nil
		}
		if err := schema.MalformedLimit(*v).Valid(); err != nil {
			return nil, cli.Usagef(fs, "%v", err)
		}
		return v, nil
	}
}
