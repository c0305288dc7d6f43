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
		wantErr string
	}{
		{"", roundModes, ""},
		{"all", roundModes, ""},
		{"demo,demo-examples", []string{ModeDemo, ModeDemoExamples}, ""},
		{"local, demo", []string{ModeLocal, ModeDemo}, ""},
		{" demo-examples , demo-examples,", []string{ModeDemoExamples}, ""},
		{"reference", nil, "want some of"}, // runs once, before the rounds, whatever --modes says
		{"demo,nothing", nil, "want some of"},
		{",", nil, "no mode"},
		// The names of the SQL plan before it was the default, and of the
		// hand-written graph since retired: refused, naming the modes
		// that took their place.
		{"demo,demo-sql", nil, `mode "demo-sql" is no more: use demo (the SQL plan is now the default)`},
		{"local-sql", nil, `mode "local-sql" is no more: use local (the SQL plan is now the default)`},
		{"demo-graph", nil, `mode "demo-graph" is no more: use demo (the hand-written graph is retired`},
		{"local-graph", nil, `mode "local-graph" is no more: use local (the hand-written graph is retired`},
	} {
		got, err := ParseModes(c.in)
		if (err != nil) != (c.wantErr != "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) || !slices.Equal(got, c.want) {
			t.Errorf("ParseModes(%q) = %v, %v; want %v (error %q)", c.in, got, err, c.want, c.wantErr)
		}
	}
	// Every mode of the rounds has a label and a name of its own.
	labels, names := map[string]bool{}, map[string]bool{}
	for _, m := range roundModes {
		labels[modeLabel(m)], names[runName(Sample{Mode: m})] = true, true
		if modeLabel(m) == m || runName(Sample{Mode: m}) == m {
			t.Errorf("mode %s has no label or name: %q, %q", m, modeLabel(m), runName(Sample{Mode: m}))
		}
	}
	if len(labels) != len(roundModes) || len(names) != len(roundModes) {
		t.Errorf("modes share labels or names: %v %v", labels, names)
	}
}

func TestSQLJobs(t *testing.T) {
	ex, err := ExamplesJob("../../queries/examples")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Mode != ModeDemoExamples || len(ex.Queries) < 10 || !slices.IsSorted(ex.Names()) {
		t.Errorf("ExamplesJob: %+v", ex)
	}
	if args := ex.Args(); len(args) != 2*len(ex.Queries) || args[0] != "--query" || args[1] != ex.Queries[0][0]+"="+ex.Queries[0][1] {
		t.Errorf("ExamplesJob args %q", args)
	}
	dir := t.TempDir()
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

// comparedReport is fixedReport with the mode measured beside the
// defaults: demo's median CPU (the SQL plan) is 18 s over 12 M rows (1500
// ns a row), the job of ten example queries 35 s.
func comparedReport() Report {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	r := fixedReport()
	r.Compared = []ComparedRun{
		{Mode: ModeDemoExamples, Queries: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, Run: ProcessRun{Wall: sec(20), CPU: sec(35), Equal: true}, Span: sec(20)},
	}
	for run, cpu := range []int{30, 40, 35} {
		r.Samples = append(r.Samples, Sample{Mode: ModeDemoExamples, Run: run + 1, Wall: sec(20), CPU: sec(cpu), Equal: true, Span: sec(20)})
	}
	return r
}

// TestRenderCompared: the SQL plan of the four default queries (demo and
// local mode's defaults) beside the job of example queries, and that
// job's target against the four: their rows and their section.
func TestRenderCompared(t *testing.T) {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	r := comparedReport()
	out := renderHas(t, "", r,
		"| A job of 10 user queries in demo mode (`demo-examples`) <= 2x the CPU of the four default queries through SQL (`demo`, medians) | 1.94x (35.00 s against 18.00 s of CPU) | **yes** |",
		"## SQL plans",
		"| Demo: the four default queries, SQL plan (one process, in memory) | q1, q2, q3, q4: the defaults, SQL | 3 | 10.00 s | 18.00 s | 1500 ns | byte-equal to the reference |",
		"| Demo: a SQL job of the example user queries (one process, in memory) | 10: a, b, c, d, ... | 3 | 20.00 s | 35.00 s | 2917 ns | every file written",
		"| Local: the four default queries, SQL plan (separate processes, segment logs, fsync, mutual TLS) | q1, q2, q3, q4: the defaults, SQL | 3 | 24.00 s | 23.00 s | 1917 ns | byte-equal to the reference |",
		"The job of 10 example queries costs 1.94x the CPU of the four default queries through SQL",
		"| Demo: the four default queries, SQL plan (one process, in memory) | 10.00 s | 1.20 M | 700 MiB | 18.00 s | byte-equal to the reference | 0% |\n"+
			"| Demo: a SQL job of the example user queries (one process, in memory) | 20.00 s | 600 k | — | 35.00 s | every file written",
	)
	for _, s := range []string{"hand-written", "builtin-graph"} {
		if strings.Contains(out, s) {
			t.Errorf("the report names the retired graph (%q):\n%s", s, out)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", out)
	}
	// Over the target: not met (40 s against 18 s).
	r.Samples = append(r.Samples, Sample{Mode: ModeDemoExamples, Run: 4, CPU: sec(40)}, Sample{Mode: ModeDemoExamples, Run: 5, CPU: sec(41)})
	renderHas(t, "over the target: ", r, "(`demo`, medians) | 2.22x (40.00 s against 18.00 s of CPU) | **no** |")
	// Without the modes beside the defaults, neither the rows nor the
	// section.
	if out = renderHas(t, "", fixedReport()); strings.Contains(out, "## SQL plans") || strings.Contains(out, "demo-examples") {
		t.Error("the section of the compared modes without their runs")
	}
}

// renderHas renders r and fails t for each of want that the report
// lacks (of says which report); it returns the report.
func renderHas(t *testing.T, of string, r Report, want ...string) string {
	t.Helper()
	var b strings.Builder
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, s := range want {
		if !strings.Contains(b.String(), s) {
			t.Errorf("%sreport lacks %q", of, s)
		}
	}
	return b.String()
}
