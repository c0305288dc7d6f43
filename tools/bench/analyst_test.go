package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
)

// TestAnalystJobs: the analyst queries as the fewest jobs of perJob
// queries (at most a job's limit), of near equal sizes, every file once
// in name order.
func TestAnalystJobs(t *testing.T) {
	for _, c := range []struct{ n, perJob, jobs int }{
		{1, 16, 1}, {16, 16, 1}, {17, 16, 2}, {24, 16, 2}, {33, 16, 3}, {24, 2, 12}, {5, 2, 3}, {24, 100, 1}, {33, 100, 2}, {3, 0, 3},
	} {
		n := c.n
		dir := t.TempDir()
		var want []string
		for i := range n {
			name := fmt.Sprintf("q%02d", i)
			want = append(want, name)
			if err := os.WriteFile(filepath.Join(dir, name+".sql"), []byte("SELECT 1"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		jobs, err := AnalystJobs(dir, c.perJob)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != c.jobs || !slices.Equal(jobsNames(jobs), want) {
			t.Errorf("%d queries by %d: %d jobs %v, want %d of %v", n, c.perJob, len(jobs), jobsNames(jobs), c.jobs, want)
		}
		for _, j := range jobs {
			if len(j.Queries) > sqljob.DefaultMaxQueries || len(j.Queries) < n/c.jobs || len(j.Queries) > (n+c.jobs-1)/c.jobs {
				t.Errorf("%d queries by %d: a job of %d", n, c.perJob, len(j.Queries))
			}
		}
	}
	if _, err := AnalystJobs(t.TempDir(), 2); err == nil {
		t.Error("AnalystJobs of a directory without queries")
	}
	jobs, err := AnalystJobs("../../"+DefaultAnalyst, DefaultAnalystJobQueries)
	if err != nil || len(jobs) != 1 || len(jobsNames(jobs)) < 20 {
		t.Errorf("the analyst queries: %d in %d jobs, %v; want at least 20 in one job", len(jobsNames(jobs)), len(jobs), err)
	}
	if got := analystJobsText(jobs); got != fmt.Sprintf("one job of %d queries", len(jobsNames(jobs))) {
		t.Errorf("analystJobsText = %q", got)
	}
	if jobs, _ = AnalystJobs("../../"+DefaultAnalyst, 2); analystJobsText(jobs) != fmt.Sprintf("%d jobs of at most 2 queries, one after the other", len(jobs)) {
		t.Errorf("analystJobsText = %q", analystJobsText(jobs))
	}
}

func TestLastLine(t *testing.T) {
	if got := lastLine("wololo demo: exit status 1; the end of x.log:\nfirst\n  over its budget \n\n"); got != "over its budget" {
		t.Errorf("lastLine = %q", got)
	}
}

func TestCloseCSV(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"x,n\na,1.5\n", "x,n\na,1.5\n", true},
		{"x,n\na,1.5\n", "x,n\na,1.50\n", true},
		{"x,n\na,1486.7330359350012\n", "x,n\na,1486.733035935001\n", true},
		{"x,n\na,1.5\n", "x,n\na,1.6\n", false},
		{"x,n\na,1.5\n", "x,n\nb,1.5\n", false},
		{"x,n\na,1.5\n", "x,n\na,1.5\na,1.5\n", false},
		{"x,n\na,\n", "x,n\na,NaN\n", false},
		{"x,n\na,NaN\n", "x,n\na,NaN\n", true}, // equal as text
	} {
		if got := closeCSV([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("closeCSV(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestRenderAnalyst: the targets of the analyst modes against DuckDB's
// on the same texts, their rows in the SQL plans, and how their files
// compared.
func TestRenderAnalyst(t *testing.T) {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	r := fixedReport()
	names := []string{"a", "b", "c"}
	for mode, walls := range map[string][3]int{ModeDuckDBAnalyst: {40, 42, 44}, ModeDuckDBAnalystBounded: {64, 60, 62}, ModeDemoAnalyst: {30, 50, 32}, ModeLocalAnalyst: {70, 61, 65}} {
		r.Compared = append(r.Compared, ComparedRun{Mode: mode, Queries: names, Run: ProcessRun{Wall: sec(walls[0]), CPU: sec(walls[0]), Equal: true}, Span: sec(walls[0])})
		for run, w := range walls {
			r.Samples = append(r.Samples, Sample{Mode: mode, Run: run + 1, Wall: sec(w), CPU: sec(w), Equal: true, Span: sec(w)})
		}
	}
	r.AnalystJobs = "2 jobs of at most 2 queries, one after the other"
	r.AnalystFailed = []AnalystFailure{{Mode: ModeLocalAnalyst, Jobs: []string{"c (over its budget)"}}}
	r.AnalystOutputs = []AnalystOutputs{{Mode: ModeDemoAnalyst, Equal: []string{"a"}, Close: []string{"b"}, Differs: []string{"c"}}}
	out := renderHas(t, "", r,
		"| The 3 analyst queries (queries/analyst) in in-memory demo (`demo-analyst`, 2 jobs of at most 2 queries, one after the other) <= 1x DuckDB's wall time for the same texts (`duckdb-analyst`: one process, medians) | 0.76x (32.00 s against 42.00 s; CPU 0.76x) | **yes** |",
		"| The 3 analyst queries (queries/analyst) in durable local mode (`local-analyst`, 2 jobs of at most 2 queries, one after the other) <= 1.5x DuckDB's wall time for the same texts (`duckdb-analyst`: one process, medians) | 1.55x (65.00 s against 42.00 s; CPU 1.55x) | **no** |",
		"run them as 2 jobs of at most 2 queries, one after the other (a job has at most 32 queries",
		"| Demo: the analyst queries (one process per job, in memory) | a, b, c (queries/analyst) | 3 | 32.00 s |",
		"`demo-analyst`'s files against `duckdb-analyst`'s of the same round: 1 of 3 byte-equal, 1 more equal to a double's precision",
		", 1 differ (c): DuckDB's load is a user's",
		"**Failed** in `local-analyst`'s last run (its time until then counted): c (over its budget).",
		"Within memory_limit 512MiB (`duckdb-analyst-bounded`), DuckDB took 62.00 s (median;",
		"; the in-memory demo 0.52x that; durable local mode 1.05x that. The targets are against DuckDB as a user runs it, with no limit.",
		"| DuckDB: the analyst queries as duckdb-analyst, within memory_limit 512MiB (a Wololo process's budget; not a bound on its RSS) | a, b, c (queries/analyst) | 3 | 62.00 s |",
	)
	if t.Failed() {
		t.Logf("report:\n%s", out)
	}
	if out := renderHas(t, "", fixedReport()); strings.Contains(out, "analyst") {
		t.Error("the analyst rows without their runs")
	}
}
