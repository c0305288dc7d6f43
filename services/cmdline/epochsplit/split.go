package epochsplit

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/wololo/wololo/services/cmdline/inputfile"
	"github.com/wololo/wololo/services/dataflow/csvio"
	"github.com/wololo/wololo/services/dataflow/ingest"
)

// Run is the k-th (from 0) of n contiguous runs of total records (or
// bytes): the records [from, to). The runs together are every record once, in order,
// and differ in length by at most one.
func Run(total, n, k int) (from, to int) {
	return total * k / n, total * (k + 1) / n
}

// RunLast is the k-th (from 0) of n contiguous runs of total records
// whose last holds percent of them (rounded to a whole record), the
// others the rest as Run cuts it into n-1: a standing job of n-1 epochs
// then one small append, whose cost `wololo demo --last-epoch-percent`
// shows. With percent 0 it is Run.
func RunLast(total, n, k int, percent float64) (from, to int) {
	if percent <= 0 || n < 2 {
		return Run(total, n, k)
	}
	last := min(total, int(math.Round(float64(total)*percent/100)))
	if k == n-1 {
		return total - last, total
	}
	return Run(total-last, n-1, k)
}

// Cuts is where a file of size bytes is cut into the runs of n epochs:
// the k-th run (from 0) holds the records that start (after the blank
// lines before them) in bytes [from, to) of RunLast(size, n, k,
// lastPercent), the last one lastPercent of the bytes when above 0. None
// for n of 1 or less. `wololo demo --epochs` cuts each file so as it reads
// it (exec.NewCSVReaderCut), and SplitCSV the same, so that both
// commands' epochs hold the same records: a cut needs only the file's
// size, not a count of its records, which would read it once more.
func Cuts(size int64, n int, lastPercent float64) []int64 {
	var cuts []int64
	for k := range n - 1 {
		_, to := RunLast(int(size), n, k, lastPercent)
		cuts = append(cuts, int64(to))
	}
	return cuts
}

// SplitCSV cuts the CSV file at path into n files in dir, NAME.K.csv
// (K from 1, NAME the file's without .csv), each the file's header row
// then the K-th run of its records as Cuts places them, byte for byte.
// Records are delimited as the gateway's ingest delimits them (csvio:
// quoted line ends, malformed records and blank lines included), so that
// the parts' records together are the file's. One reading finds the
// runs' ends: the end of the last record that starts before each cut.
//
// A gzip-compressed file (inputfile) is decompressed into dir first, and
// that copy cut: the cut reads the file at offsets, which a compressed
// stream has not.
func SplitCSV(path, dir string, n int) ([]string, error) {
	if n < 1 {
		return nil, fmt.Errorf("split %s into %d parts: at least one", path, n)
	}
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".gz"), ".csv")
	path, err := plain(path, filepath.Join(dir, name+".whole.csv"))
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hd, err := ingest.ReadHeader(f, path)
	if err != nil {
		return nil, err
	}
	cuts := Cuts(hd.Size, n, 0)
	ends := make([]int64, 0, n) // ends[k]: where run k ends
	last := hd.DataOffset       // where the last record read ends
	sc := csvio.NewScanner(io.NewSectionReader(f, hd.DataOffset, hd.Size-hd.DataOffset))
	for sc.Scan() {
		for start := hd.DataOffset + sc.Start(); len(ends) < len(cuts) && start >= cuts[len(ends)]; {
			ends = append(ends, last)
		}
		last = hd.DataOffset + sc.Offset()
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	for len(ends) < n-1 {
		ends = append(ends, last) // runs that no record starts in are empty
	}
	ends = append(ends, hd.Size) // the last run takes whatever follows the last record
	var parts []string
	from := hd.DataOffset
	for k, to := range ends {
		p := filepath.Join(dir, fmt.Sprintf("%s.%d.csv", name, k+1))
		if err := writePart(p, f, hd.DataOffset, from, to); err != nil {
			return nil, err
		}
		parts, from = append(parts, p), to
	}
	return parts, nil
}

// writePart writes the file at path: f's header (its bytes before
// dataOffset) then its bytes [from, to).
func writePart(path string, f *os.File, dataOffset, from, to int64) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.NewSectionReader(f, 0, dataOffset))
	if err == nil {
		_, err = io.Copy(out, io.NewSectionReader(f, from, to-from))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// plain is path, or for a gzip-compressed file a decompressed copy of it
// written to to.
func plain(path, to string) (string, error) {
	src, err := inputfile.Open(path, nil, "")
	if err != nil {
		return "", err
	}
	defer src.Close()
	if !src.Gzip {
		return path, nil
	}
	r, err := src.Reader(0)
	if err != nil {
		return "", err
	}
	defer r.Close()
	out, err := os.Create(to)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("decompress %s into %s: %w", path, to, err)
	}
	return to, nil
}
