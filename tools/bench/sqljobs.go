package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultExamples is the directory of the example user queries, the job
// ModeDemoExamples runs.
const DefaultExamples = "queries/examples"

// SQLJob is a job of SQL queries of its own that a mode runs, each query
// given as --query NAME=FILE, as `wololo demo` takes them. (The four
// default queries need none: `wololo demo` and `wololo local run` run
// them as SQL when given no --query.)
type SQLJob struct {
	Mode string
	// Queries are the job's queries, NAME and FILE each; the outputs are
	// NAME.csv, each only checked to be there with its header (their
	// answers are checked against DuckDB by tools/duckdb's tests).
	Queries [][2]string
}

// Args are the job's --query flags.
func (j SQLJob) Args() []string {
	var args []string
	for _, q := range j.Queries {
		args = append(args, "--query", q[0]+"="+q[1])
	}
	return args
}

// Names are the job's query names.
func (j SQLJob) Names() []string {
	var names []string
	for _, q := range j.Queries {
		names = append(names, q[0])
	}
	return names
}

// ExamplesJob is every *.sql file of dir (queries/examples), in name
// order, as one job: the user queries of the bench.
func ExamplesJob(dir string) (SQLJob, error) {
	j := SQLJob{Mode: ModeDemoExamples}
	var err error
	if j.Queries, err = queryFiles(dir); err != nil {
		return j, fmt.Errorf("the example queries: %w", err)
	}
	return j, nil
}

// queryFiles are the *.sql files of dir in name order, NAME and FILE
// each; at least one.
func queryFiles(dir string) ([][2]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.sql in %s", dir)
	}
	slices.Sort(files)
	var queries [][2]string
	for _, f := range files {
		queries = append(queries, [2]string{strings.TrimSuffix(filepath.Base(f), ".sql"), f})
	}
	return queries, nil
}

// checkSQLOutputs describes every output of j in dir that is missing or
// has no header line.
func checkSQLOutputs(j SQLJob, dir string) []string {
	var diffs []string
	for _, name := range j.Names() {
		path := filepath.Join(dir, name+".csv")
		b, err := os.ReadFile(path)
		switch {
		case err != nil:
			diffs = append(diffs, err.Error())
		case !strings.Contains(string(b), "\n"):
			diffs = append(diffs, fmt.Sprintf("%s has no header line", path))
		}
	}
	return diffs
}

// ParseModes reads a list of the modes that run in the rounds, such as
// "demo,demo-graph"; "" or "all" is every one. A retired name (demo-sql,
// local-sql) is refused with the names that took its place.
func ParseModes(s string) ([]string, error) {
	if s = strings.TrimSpace(s); s == "" || s == "all" {
		return slices.Clone(roundModes), nil
	}
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if now, ok := retiredModes[f]; ok {
			return nil, fmt.Errorf("mode %q is no more: use %s", f, now)
		}
		if !slices.Contains(roundModes, f) {
			return nil, fmt.Errorf("mode %q: want some of %s", f, strings.Join(roundModes, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no mode in %q", s)
	}
	return out, nil
}
