package bench

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseModes(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", roundModes, false},
		{"all", roundModes, false},
		{"demo,demo-sql", []string{ModeDemo, ModeDemoSQL}, false},
		{" demo-examples , demo-examples,", []string{ModeDemoExamples}, false},
		{"reference", nil, true}, // runs once, before the rounds, whatever --modes says
		{"demo,nothing", nil, true},
		{",", nil, true},
	} {
		got, err := ParseModes(c.in)
		if (err != nil) != c.wantErr || !slices.Equal(got, c.want) {
			t.Errorf("ParseModes(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.wantErr)
		}
	}
}

func TestSQLJobs(t *testing.T) {
	j, err := DefaultsJob("../../queries")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--query", "q1=../../queries/q1.sql", "--query", "q2=../../queries/q2.sql", "--query", "q3=../../queries/q3.sql", "--query", "q4=../../queries/q4.sql"}
	if !j.Reference || j.Mode != ModeDemoSQL || !slices.Equal(j.Args(), want) {
		t.Errorf("DefaultsJob: %+v, args %q", j, j.Args())
	}
	ex, err := ExamplesJob("../../queries/examples")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Reference || ex.Mode != ModeDemoExamples || len(ex.Queries) < 10 || !slices.IsSorted(ex.Names()) {
		t.Errorf("ExamplesJob: %+v", ex)
	}
	dir := t.TempDir()
	if _, err := DefaultsJob(dir); err == nil {
		t.Error("DefaultsJob of a directory without q1.sql")
	}
	if _, err := ExamplesJob(dir); err == nil {
		t.Error("ExamplesJob of a directory without queries")
	}
	// Outputs: each file there with its header.
	small := SQLJob{Queries: [][2]string{{"a", "a.sql"}, {"b", "b.sql"}, {"c", "c.sql"}}}
	os.WriteFile(filepath.Join(dir, "a.csv"), []byte("x\n1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.csv"), []byte(""), 0o644)
	diffs := checkSQLOutputs(small, dir)
	if len(diffs) != 2 || !strings.Contains(diffs[0], "b.csv has no header") || !strings.Contains(diffs[1], "c.csv") {
		t.Errorf("checkSQLOutputs: %q", diffs)
	}
}

// TestRenderSQL: the SQL jobs' rows, their section and their targets.
func TestRenderSQL(t *testing.T) {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	r := fixedReport()
	// Demo's median CPU is 18 s over 12 M rows (1500 ns a row).
	r.SQL = []SQLRun{
		{Mode: ModeDemoSQL, Queries: []string{"q1", "q2", "q3", "q4"}, Reference: true, Run: ProcessRun{Wall: sec(12), CPU: sec(19), PeakRSS: 900 * mib64, Equal: true}},
		{Mode: ModeDemoExamples, Queries: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, Run: ProcessRun{Wall: sec(20), CPU: sec(30), Equal: true}},
	}
	for run, cpus := range [][2]int{{19, 30}, {21, 40}, {18, 35}} {
		r.Samples = append(r.Samples,
			Sample{Mode: ModeDemoSQL, Run: run + 1, Wall: sec(12), CPU: sec(cpus[0]), Equal: true, Span: sec(12)},
			Sample{Mode: ModeDemoExamples, Run: run + 1, Wall: sec(20), CPU: sec(cpus[1]), Equal: true, Span: sec(20)})
	}
	var b strings.Builder
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{
		"| The four default queries as SQL in demo mode <= 1.1x the CPU per row of the hand-written graph (medians) | 1.06x (19.00 s against 18.00 s of CPU, 1583 ns against 1500 ns per input row) | **yes** |",
		"| A job of 10 user queries in demo mode <= 2x the CPU of the four default ones as SQL (medians) | 1.84x (35.00 s against 19.00 s of CPU) | **yes** |",
		"## SQL plans",
		"| Demo (whole graph in one process, in memory) | the four, hand-written | 3 | 10.00 s | 18.00 s | 1500 ns | 1.00x | byte-equal to the reference |",
		"| Demo, SQL plan of the four default queries (one process, in memory) | q1, q2, q3, q4 | 3 | 12.00 s | 19.00 s | 1583 ns | 1.06x | byte-equal to the reference |",
		"| Demo, SQL job of the example user queries (one process, in memory) | 10: a, b, c, d, ... | 3 | 20.00 s | 35.00 s | 2917 ns | 1.94x | every file written",
		"The job of 10 example queries costs 1.84x the CPU",
		"| 3 | Demo, SQL job of the example user queries (one process, in memory) | 20.00 s | 35.00 s |",
		"DuckDB, demo mode, demo mode's SQL plan of the four queries, demo mode's job of example queries and local mode ran 3 time(s) each, interleaved (in that order",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	// Over the targets: not met.
	r.Samples = append(r.Samples, Sample{Mode: ModeDemoSQL, Run: 4, CPU: sec(40)}, Sample{Mode: ModeDemoSQL, Run: 5, CPU: sec(41)})
	b.Reset()
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| 1.17x (21.00 s against 18.00 s of CPU, 1750 ns against 1500 ns per input row) | **no** |") {
		t.Errorf("a median of 21 s against 18 s is not over the target:\n%s", b.String())
	}
	// Modes --modes left out: their targets are neither met nor missed.
	only := r
	only.Samples = nil
	for _, s := range r.Samples {
		if s.Mode == ModeDemoSQL || s.Mode == ModeReference {
			only.Samples = append(only.Samples, s)
		}
	}
	only.Local = LocalRun{}
	b.Reset()
	if err := Render(&b, only); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"| End to end in local mode (durable, separate processes) < 30 s | — | not run |",
		"| Every local-mode process < 512 MiB peak RSS | not measured | not run |",
		"| In-memory demo <= 0.5x exact DuckDB's wall time (median of 3) | not measured: exact DuckDB did not run | not run |",
		"| In-memory demo <= 0.4x plain DuckDB's wall time (median of 3) | not measured: plain DuckDB did not run | not run |",
		"| The four default queries as SQL in demo mode <= 1.1x the CPU per row of the hand-written graph (medians) | not measured | not run |",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report of some modes lacks %q", s)
		}
	}
	// Without SQL jobs, neither the rows nor the section.
	b.Reset()
	if err := Render(&b, fixedReport()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "## SQL plans") || strings.Contains(b.String(), "as SQL in demo mode") {
		t.Error("the SQL section without SQL runs")
	}
}
