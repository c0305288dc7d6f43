package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
)

// DefaultAnalyst is the directory of the analyst queries, the job of
// ModeDuckDBAnalyst, ModeDemoAnalyst and ModeLocalAnalyst.
const DefaultAnalyst = "queries/analyst"

// DefaultAnalystJobQueries is how many analyst queries Wololo's analyst
// modes run in one job: as many as a job may have
// (sqljob.DefaultMaxQueries, 32), so the 24 of them run as one job that
// reads the two files once, as DuckDB's one process loads them once
// (issue 41's target). On the full dataset that job holds more state on
// one shard instance than a job's default budget (768 MiB,
// --job-max-state-bytes: its joins each hold the players' rows of a
// shard), and the bench reports it failed; --analyst-job-queries splits
// them into smaller jobs.
const DefaultAnalystJobQueries = sqljob.DefaultMaxQueries

// AnalystJobs are the *.sql files of dir (queries/analyst), in name
// order, as the fewest jobs of at most perJob queries each (at most
// sqljob.DefaultMaxQueries: a job of more is refused, by `wololo demo` as
// by the gateway), of as near equal sizes as can be: the jobs Wololo's
// analyst modes run, one after the other.
func AnalystJobs(dir string, perJob int) ([]SQLJob, error) {
	files, err := queryFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("the analyst queries: %w", err)
	}
	perJob = min(max(perJob, 1), sqljob.DefaultMaxQueries)
	n := (len(files) + perJob - 1) / perJob
	jobs := make([]SQLJob, n)
	for i := range jobs {
		jobs[i] = SQLJob{Mode: ModeDemoAnalyst, Queries: files[i*len(files)/n : (i+1)*len(files)/n]}
	}
	return jobs, nil
}

// analystJobsText says how jobs split the analyst queries, for the
// report (Report.AnalystJobs): "one job of 26 queries", or "12 jobs of at
// most 2 queries, one after the other".
func analystJobsText(jobs []SQLJob) string {
	if len(jobs) == 1 {
		return fmt.Sprintf("one job of %d queries", len(jobs[0].Queries))
	}
	most := 0
	for _, j := range jobs {
		most = max(most, len(j.Queries))
	}
	return fmt.Sprintf("%d jobs of at most %d queries, one after the other", len(jobs), most)
}

// jobsNames are the names of the queries of jobs, in order.
func jobsNames(jobs []SQLJob) []string {
	var names []string
	for _, j := range jobs {
		names = append(names, j.Names()...)
	}
	return names
}

// runAnalyst is round k's run of an analyst mode: for Wololo's, each of
// b.analyst's jobs in turn, job i's files in Work/MODE/i (demo's --query,
// or local mode's submit of the queries); for DuckDB's, all the queries
// in one process, as an analyst's session loads the files once, its
// files in Work/MODE/0 (duckdb-queries --query). The run is the jobs'
// summed wall time and CPU, their largest peak RSS, and Equal when every
// file was written.
func (b *bencher) runAnalyst(ctx context.Context, k int, mode string) (ProcessRun, error) {
	root := filepath.Join(b.o.Work, mode)
	if err := os.RemoveAll(root); err != nil {
		return ProcessRun{}, err
	}
	b.logf("run %d/%d: %s (%d queries)...", k, b.o.Runs, mode, len(jobsNames(b.analyst)))
	b.analystFailed[mode] = nil
	var sum ProcessRun
	sum.Equal = true
	jobs := b.analyst
	if isDuckDBAnalyst(mode) {
		all := SQLJob{Mode: mode}
		for _, j := range jobs {
			all.Queries = append(all.Queries, j.Queries...)
		}
		jobs = []SQLJob{all}
	}
	for i, j := range jobs {
		dir := filepath.Join(root, strconv.Itoa(i))
		var run ProcessRun
		var err error
		switch mode {
		case ModeDuckDBAnalyst, ModeDuckDBAnalystBounded:
			args := append([]string{"--matches", b.o.Matches, "--players", b.o.Players, "--out", dir}, j.Args()...)
			if mode == ModeDuckDBAnalystBounded {
				args = append(args, "--memory-limit", BoundedDuckDBMemory)
			}
			run, err = runChild(ctx, "duckdb-queries --query", b.duck, filepath.Join(b.o.Work, fmt.Sprintf("%s-%d.log", mode, i)), args...)
		case ModeDemoAnalyst:
			args := append([]string{"demo", "--matches", b.o.Matches, "--players", b.o.Players, "--out", dir, "--log-level", "warn"}, j.Args()...)
			run, err = runChild(ctx, "wololo demo --query", b.bin, filepath.Join(b.o.Work, fmt.Sprintf("%s-%d.log", mode, i)), args...)
		case ModeLocalAnalyst:
			o := b.o
			o.Profile = false // as the DuckDB and demo runs: no profiler
			if o.queries, err = j.sqlQueries(); err != nil {
				return sum, err
			}
			var lr LocalRun
			lr, err = runLocal(ctx, o, b.bin, dir, filepath.Join(b.o.Work, "profiles-"+mode), false, b.logf)
			run = lr.processRun()
		default:
			return sum, fmt.Errorf("%s is not an analyst mode", mode)
		}
		if err != nil && !isDuckDBAnalyst(mode) {
			// A job Wololo refuses or fails (over a budget) is a finding,
			// not the end of the bench: it is reported, its time counted
			// until it failed, and the other jobs run.
			b.logf("%s (run %d): job %d (%s) failed: %s", mode, k, i, strings.Join(j.Names(), ", "), lastLine(err.Error()))
			b.analystFailed[mode] = append(b.analystFailed[mode], fmt.Sprintf("%s (%s)", strings.Join(j.Names(), ", "), lastLine(err.Error())))
			sum.Wall += run.Wall
			sum.Equal = false
			continue
		}
		if err != nil {
			return sum, err
		}
		diffs := checkSQLOutputs(j, dir)
		for _, d := range diffs {
			b.mismatch = append(b.mismatch, fmt.Sprintf("%s (run %d) %s", mode, k, d))
		}
		sum.Wall += run.Wall
		sum.CPU += run.CPU
		sum.OtherCPU += run.OtherCPU
		sum.PeakRSS = max(sum.PeakRSS, run.PeakRSS)
		sum.Equal = sum.Equal && len(diffs) == 0
	}
	if mode == ModeDuckDBAnalyst {
		if log, err := os.ReadFile(filepath.Join(b.o.Work, mode+"-0.log")); err == nil {
			b.duckVersion = duckDBVersion(log)
		}
	}
	b.logf("run %d/%d: %s %s, CPU %s, peak RSS %s, every file written: %v", k, b.o.Runs, mode, secs(sum.Wall), secs(sum.CPU), mib(sum.PeakRSS), sum.Equal)
	return sum, nil
}

// lastLine is the last line of s that is not empty.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// sqlQueries are the job's queries read, as client.Submit takes them.
func (j SQLJob) sqlQueries() ([]sqljob.Query, error) {
	var qs []sqljob.Query
	for _, q := range j.Queries {
		text, err := os.ReadFile(q[1])
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q[0], err)
		}
		qs = append(qs, sqljob.Query{Name: q[0], From: q[1], Text: string(text)})
	}
	return qs, nil
}

// AnalystFailure is the jobs of an analyst mode's last run that failed,
// each its queries and its error's last line.
type AnalystFailure struct {
	Mode string
	Jobs []string
}

// AnalystOutputs is how the files of an analyst mode's last run compare
// with DuckDB's of the same round (ModeDuckDBAnalyst): per query, equal
// bytes, equal rows with numbers equal to a double's precision (DuckDB's
// AVG and DOUBLE arithmetic against Wololo's exact decimals), or
// different (DuckDB's try_cast reads values the contract's value rules do
// not: yes and Y as true, NaN and +2248 as numbers).
type AnalystOutputs struct {
	Mode                  string
	Equal, Close, Differs []string
}

// compareAnalyst compares mode's files of the last run with DuckDB's.
func (b *bencher) compareAnalyst(mode string) AnalystOutputs {
	c := AnalystOutputs{Mode: mode}
	for i, j := range b.analyst {
		for _, name := range j.Names() {
			ours, err1 := os.ReadFile(filepath.Join(b.o.Work, mode, strconv.Itoa(i), name+".csv"))
			theirs, err2 := os.ReadFile(filepath.Join(b.o.Work, ModeDuckDBAnalyst, "0", name+".csv"))
			switch {
			case err1 != nil || err2 != nil:
				c.Differs = append(c.Differs, name)
			case bytes.Equal(ours, theirs):
				c.Equal = append(c.Equal, name)
			case closeCSV(ours, theirs):
				c.Close = append(c.Close, name)
			default:
				c.Differs = append(c.Differs, name)
			}
		}
	}
	return c
}

// closeCSV reports whether two CSV files have the same records, field by
// field equal as text or as numbers that differ by at most 1e-9 of the
// larger.
func closeCSV(a, b []byte) bool {
	ra, err1 := csv.NewReader(bytes.NewReader(a)).ReadAll()
	rb, err2 := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err1 != nil || err2 != nil || len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		if len(ra[i]) != len(rb[i]) {
			return false
		}
		for k, x := range ra[i] {
			if y := rb[i][k]; x != y && !closeNumbers(x, y) {
				return false
			}
		}
	}
	return true
}

// closeNumbers reports whether x and y are numbers within 1e-9 of the
// larger of them.
func closeNumbers(x, y string) bool {
	a, err1 := strconv.ParseFloat(x, 64)
	b, err2 := strconv.ParseFloat(y, 64)
	if err1 != nil || err2 != nil || math.IsNaN(a) || math.IsNaN(b) {
		return false
	}
	return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b))
}

// String says it in a sentence.
func (c AnalystOutputs) String() string {
	n := len(c.Equal) + len(c.Close) + len(c.Differs)
	s := fmt.Sprintf("`%s`'s files against `%s`'s of the same round: %d of %d byte-equal, %d more equal to a double's precision (DuckDB's AVG and DOUBLE arithmetic against exact decimals)",
		c.Mode, ModeDuckDBAnalyst, len(c.Equal), n, len(c.Close))
	if len(c.Differs) > 0 {
		s += fmt.Sprintf(", %d differ (%s): DuckDB's load is a user's, `try_cast`, which reads values the value rules of docs/queries.md do not (`yes`, `Y` as booleans, `NaN` and `+2248` as numbers), so those are not a mismatch", len(c.Differs), strings.Join(c.Differs, ", "))
	}
	return s + "."
}

// isAnalystMode reports whether mode runs the analyst queries.
func isAnalystMode(mode string) bool {
	return isDuckDBAnalyst(mode) || mode == ModeDemoAnalyst || mode == ModeLocalAnalyst
}

// isDuckDBAnalyst reports whether mode is DuckDB running the analyst
// queries, within a memory limit or not.
func isDuckDBAnalyst(mode string) bool {
	return mode == ModeDuckDBAnalyst || mode == ModeDuckDBAnalystBounded
}

// renderAnalystTargets writes the rows of issue 41's targets on the
// analyst queries, when their modes ran: demo and durable local mode
// against DuckDB on the same texts, median wall times.
func renderAnalystTargets(p func(string, ...any), r Report) {
	duck := r.MedianOf(ModeDuckDBAnalyst)
	for _, t := range []struct {
		mode, label string
		max         float64
	}{{ModeDemoAnalyst, "in-memory demo", TargetDemoAnalystVsDuckDB}, {ModeLocalAnalyst, "durable local mode", TargetLocalAnalystVsDuckDB}} {
		c, ok := r.ComparedOf(t.mode)
		if !ok {
			continue
		}
		text, met := "not measured (DuckDB did not run)", false
		ratio := r.RatioTo(t.mode, ModeDuckDBAnalyst)
		if ratio.ok {
			text = against(ratio, r.MedianOf(t.mode).Wall, duck.Wall)
			met = ratio.Wall <= t.max
		}
		p("| The %d analyst queries (queries/analyst) in %s (`%s`, %s) <= %gx DuckDB's wall time for the same texts (`%s`: one process, medians) | %s | %s |\n",
			len(c.Queries), t.label, t.mode, r.AnalystJobs, t.max, ModeDuckDBAnalyst, text, metIf(ratio.ok, met))
	}
}

// renderAnalystOutputs says how the analyst modes' files compared with
// DuckDB's.
func renderAnalystOutputs(p func(string, ...any), r Report) {
	if _, ok := r.ComparedOf(ModeDemoAnalyst); !ok {
		if _, ok := r.ComparedOf(ModeLocalAnalyst); !ok {
			return
		}
	}
	p("The analyst queries are `queries/analyst/*.sql` (their README lists them): Wololo's analyst modes run them as %s (a job has at most %d queries, `--max-queries`; `wololo bench --analyst-job-queries` splits them), DuckDB all in one process, the files loaded once; `make sql-diff-test` (tools/duckdb) holds their answers equal to DuckDB's on a generated dataset, with the contract's value rules. ", r.AnalystJobs, sqljob.DefaultMaxQueries)
	if r.AnalystNote != "" {
		p("%s\n\n", r.AnalystNote)
		return
	}
	for _, c := range r.AnalystOutputs {
		p("%s ", c)
	}
	p("\n\n")
	renderBoundedDuckDB(p, r)
	for _, f := range r.AnalystFailed {
		p("**Failed** in `%s`'s last run (its time until then counted): %s.\n\n", f.Mode, strings.Join(f.Jobs, "; "))
	}
}

// renderBoundedDuckDB says how the analyst modes compare with DuckDB
// within a Wololo process's memory (ModeDuckDBAnalystBounded), when it
// ran: not a target, the same texts under the same bound.
func renderBoundedDuckDB(p func(string, ...any), r Report) {
	bounded := r.MedianOf(ModeDuckDBAnalystBounded)
	if bounded.Runs == 0 {
		return
	}
	p("Within memory_limit %s (`%s`), DuckDB took %s (median; its processes' peak RSS is in the summary above: the limit bounds its buffer manager, not the process)", BoundedDuckDBMemory, ModeDuckDBAnalystBounded, secs(bounded.Wall))
	for _, m := range []struct{ mode, label string }{{ModeDemoAnalyst, "the in-memory demo"}, {ModeLocalAnalyst, "durable local mode"}} {
		if ratio := r.RatioTo(m.mode, ModeDuckDBAnalystBounded); ratio.ok {
			p("; %s %.2fx that", m.label, ratio.Wall)
		}
	}
	p(". The targets are against DuckDB as a user runs it, with no limit.\n\n")
}
