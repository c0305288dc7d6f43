package epochsplit

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSplitCSVKeepsRecordsWhole: the parts are the header and contiguous
// runs of records, a quoted line end kept inside its record, each record
// in the run whose bytes (Cuts) hold its start, and together byte for
// byte the file's records.
func TestSplitCSVKeepsRecordsWhole(t *testing.T) {
	dir := t.TempDir()
	header := "\xef\xbb\xbfa,b\r\n"
	records := []string{"1,x\r\n", "2,\"two\nlines\"\r\n", "3,y\r\n", "bad\"row\r\n", "5,z"}
	path := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(path, []byte(header+strings.Join(records, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same file gzip-compressed is cut the same (its content).
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write([]byte(header + strings.Join(records, "")))
	w.Close()
	gzPath := filepath.Join(dir, "t.csv.gz")
	if err := os.WriteFile(gzPath, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{1, 2, 3, 7, 1, 2, 3, 7} {
		out := t.TempDir()
		path := path
		if i >= 4 {
			path = gzPath
		}
		parts, err := SplitCSV(path, out, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) != n || filepath.Base(parts[0]) != "t.1.csv" {
			t.Fatalf("n=%d: parts %v", n, parts)
		}
		var body []byte
		for k, p := range parts {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rest, ok := bytes.CutPrefix(data, []byte(header))
			if !ok {
				t.Fatalf("n=%d: part %d does not begin with the header: %q", n, k+1, data)
			}
			if want := strings.Join(runOf(header, records, n, k), ""); string(rest) != want {
				t.Errorf("n=%d: part %d = %q, want %q", n, k+1, rest, want)
			}
			body = append(body, rest...)
		}
		if string(body) != strings.Join(records, "") {
			t.Errorf("n=%d: the parts' records together are %q", n, body)
		}
	}
}

// runOf is the records of run k of n as Cuts places them: those that start
// in its bytes of the file (header, then records).
func runOf(header string, records []string, n, k int) []string {
	size := len(header) + len(strings.Join(records, ""))
	cuts := Cuts(int64(size), n, 0)
	var run []string
	start := len(header)
	for _, r := range records {
		in := 0
		for in < len(cuts) && int64(start) >= cuts[in] {
			in++
		}
		if in == k {
			run = append(run, r)
		}
		start += len(r)
	}
	return run
}

func TestChangeSize(t *testing.T) {
	in, out := ChangeSize([]byte("k,n,diff\na,1,+2\nb,2,-1\nc,3,1\n"))
	if in != 3 || out != 1 {
		t.Fatalf("ChangeSize = +%d -%d, want +3 -1", in, out)
	}
}

// TestRunLast: the runs are every record once, in order; the last holds
// the share asked, the others differ by at most one.
func TestRunLast(t *testing.T) {
	for _, c := range []struct {
		total, n int
		percent  float64
		last     int
	}{
		{1000, 2, 1, 10},
		{1000, 5, 1, 10},
		{1001, 3, 10, 100},
		{7, 3, 50, 4},
		{3, 2, 1, 0},
		{10, 4, 100, 10},
		{10, 4, 0, 3},
		{10, 1, 5, 10},
	} {
		next := 0
		var sizes []int
		for k := range c.n {
			from, to := RunLast(c.total, c.n, k, c.percent)
			if from != next || to < from {
				t.Fatalf("%+v: run %d is [%d, %d), after %d", c, k, from, to, next)
			}
			next = to
			sizes = append(sizes, to-from)
		}
		if next != c.total || sizes[c.n-1] != c.last {
			t.Fatalf("%+v: runs of %v", c, sizes)
		}
		if c.n > 2 && c.percent > 0 {
			if d := slices.Max(sizes[:c.n-1]) - slices.Min(sizes[:c.n-1]); d > 1 {
				t.Fatalf("%+v: runs of %v", c, sizes)
			}
		}
	}
}
