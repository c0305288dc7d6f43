package bench

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSizes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		err  string
	}{
		{"", nil, ""},
		{"1,2,4", []int{1, 2, 4}, ""},
		{" 1 , 3 ", []int{1, 3}, ""},
		{"2,4", nil, "the first size must be 1"},
		{"1,4,2", nil, "sizes go up"},
		{"1,1", nil, "sizes go up"},
		{"1,x", nil, "want a multiple"},
		{"1,17", nil, "want a multiple"},
	} {
		got, err := ParseSizes(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseSizes(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseSizes(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// TestRenderSizes holds the table's ratios and verdicts to the medians:
// a mode whose time at 2x is at most 2.1x its 1x figure meets the target
// (scaled by the rows the larger dataset has), one over it does not, and
// a process over the memory target is marked.
func TestRenderSizes(t *testing.T) {
	run := func(mode string, wall, cpu float64, rss int64) SizeRun {
		return SizeRun{Mode: mode, Wall: time.Duration(wall * float64(time.Second)), CPU: time.Duration(cpu * float64(time.Second)), PeakRSS: rss, Largest: "p", Equal: true}
	}
	r := Report{Sizes: []SizeResult{
		{Factor: 1, Dataset: Dataset{MatchRows: 1e6, PlayerRows: 3e6}, Runs: []SizeRun{
			run(ModeDemo, 1, 2, 100<<20), run(ModeLocal, 2, 4, 300<<20),
			run(ModeDemo, 1.2, 2.2, 100<<20), run(ModeLocal, 2.2, 4.4, 300<<20),
			run(ModeDemo, 0.8, 1.8, 100<<20), run(ModeLocal, 1.8, 3.6, 300<<20),
		}},
		{Factor: 2, Dataset: Dataset{MatchRows: 2e6, PlayerRows: 6e6}, Runs: []SizeRun{
			run(ModeDemo, 2.1, 4.1, 200<<20), run(ModeLocal, 5, 10, 600<<20),
		}},
	}}
	var b bytes.Buffer
	renderSizes(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, r)
	out := b.String()
	for _, want := range []string{
		"## The cost of more data", "datasets generated 1 and 2 times",
		"| 1x (0 MB) | 4,000,000 | demo (in memory) | 1.00 s |  | 2.00 s |  | 0.500 | 100 MiB (p) |  |",
		"| 2x (0 MB) | 8,000,000 | demo (in memory) | 2.10 s | 2.10x | 4.10 s | 2.05x | 0.512 | 200 MiB (p) | **yes** |",
		"| 2x (0 MB) | 8,000,000 | durable local | 5.00 s | 2.50x | 10.00 s | 2.50x | 1.250 | 600 MiB (p) **over 512 MiB** | **no** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "| plain DuckDB |") {
		t.Errorf("a mode that did not run has rows:\n%s", out)
	}
}
