package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wololo/wololo/services/dataflow/schema"
)

// Defaults of the SQL jobs.
const (
	DefaultQueries  = "queries"
	DefaultExamples = "queries/examples"
)

// SQLJob is a job of SQL queries that a mode runs: each query given as
// --query NAME=FILE, as `wololo demo` takes them (and as `wololo local
// run` will: a mode "local, SQL" is runLocal given Args).
type SQLJob struct {
	Mode string
	// Queries are the job's queries, NAME and FILE each; the outputs are
	// NAME.csv.
	Queries [][2]string
	// Reference says the outputs are the four files of the reference
	// evaluator, to be byte-equal to its; otherwise each output must only
	// be there, with its header (their answers are checked against DuckDB
	// by tools/duckdb's tests).
	Reference bool
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

// DefaultsJob is the four default queries as SQL: NAME.sql in dir for
// each output file of the reference (q1 .. q4).
func DefaultsJob(dir string) (SQLJob, error) {
	j := SQLJob{Mode: ModeDemoSQL, Reference: true}
	for _, f := range schema.ResultFiles {
		name := strings.TrimSuffix(f, ".csv")
		path := filepath.Join(dir, name+".sql")
		if _, err := os.Stat(path); err != nil {
			return j, fmt.Errorf("the SQL of the default queries: %w", err)
		}
		j.Queries = append(j.Queries, [2]string{name, path})
	}
	return j, nil
}

// ExamplesJob is every *.sql file of dir (queries/examples), in name
// order, as one job: the user queries of the bench.
func ExamplesJob(dir string) (SQLJob, error) {
	j := SQLJob{Mode: ModeDemoExamples}
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		return j, err
	}
	if len(files) == 0 {
		return j, fmt.Errorf("the example queries: no *.sql in %s", dir)
	}
	slices.Sort(files)
	for _, f := range files {
		j.Queries = append(j.Queries, [2]string{strings.TrimSuffix(filepath.Base(f), ".sql"), f})
	}
	return j, nil
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
// "demo,demo-sql"; "" or "all" is every one.
func ParseModes(s string) ([]string, error) {
	if s = strings.TrimSpace(s); s == "" || s == "all" {
		return slices.Clone(roundModes), nil
	}
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
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
