// Package sqljob checks and makes a job of SQL queries: Check is the one
// validation of a job (its tables' names, its limits, its queries' names,
// the columns its queries read of its inputs' headers), then it compiles
// each query against the job's tables (services/dataflow/sql), places
// them on the cluster's tasks (services/dataflow/sql/physical) and checks
// the plan, and writes the plans as `wololo explain` prints them.
// `wololo explain`, `wololo demo` and the gateway's CreateJob (which
// `wololo client submit` and `wololo local run` reach) share it, so that
// a job is accepted or refused, and planned, one way wherever it is.
//
// It is pure: it reads no file, knows no topology (the caller gives the
// shape) and runs nothing. It imports only the SQL engine and the two
// files' names (services/dataflow/schema).
package sqljob

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
)

// Query is one query of a job: its name (its rows are the result file
// NAME.csv), where its text came from (a file's path, for messages; ""
// when it came with a request) and its text.
type Query struct {
	Name, From, Text string
}

// label is how messages name the query: "query NAME" or "query NAME (FROM)".
func (q Query) label() string {
	if q.From == "" {
		return "query " + q.Name
	}
	return fmt.Sprintf("query %s (%s)", q.Name, q.From)
}

// MaxNameLen is the longest query name: the name is a file name.
const MaxNameLen = 64

// nameRE is what a query name is: it becomes the file NAME.csv, so no
// path separator, no dot, and no leading '-' that a command line would
// take for a flag.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$`)

// ErrName is a query name that is not one, or given twice.
var ErrName = errors.New("bad query name")

// ErrPlanner is a physical plan that breaks an invariant: a bug of the
// planner, not of the queries.
var ErrPlanner = errors.New("the physical plan breaks an invariant (a bug of the planner)")

// Reserved is the one name no query may have, in any letter case: the
// client writes the malformed records it was told of to rejects.csv
// beside the results.
const Reserved = "rejects"

// CheckName refuses a name that is not a query's: 1-64 letters, digits,
// '_' or '-', not starting with '-', and not Reserved.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w: %q: use 1-%d letters, digits, '_' or '-', not starting with '-'", ErrName, name, MaxNameLen)
	}
	if strings.EqualFold(name, Reserved) { // case-insensitive file systems too
		return fmt.Errorf("%w: %q is reserved: %s.csv beside the results lists the malformed records", ErrName, name, name)
	}
	return nil
}

// CheckNames refuses a list of queries with a name that is not one
// (CheckName) or that two of them share.
func CheckNames(queries []Query) error {
	seen := make(map[string]bool, len(queries))
	for _, q := range queries {
		if err := CheckName(q.Name); err != nil {
			return err
		}
		if seen[q.Name] {
			return fmt.Errorf("%w: query %s is named twice", ErrName, q.Name)
		}
		seen[q.Name] = true
	}
	return nil
}

// TextBytes is the length of the queries' texts together.
func TextBytes(queries []Query) int {
	n := 0
	for _, q := range queries {
		n += len(q.Text)
	}
	return n
}

// Job is a job of SQL queries compiled and planned: each query's logical
// plan, and the job's physical plan on the shape's tasks.
type Job struct {
	Logical []physical.Logical
	Plan    *physical.Plan
	Shape   physical.Shape
	// from is where each query came from, for Explain.
	from []string
}

// Plan checks the queries' names (CheckNames), compiles each one against
// the catalog's tables, places them all on shape's tasks and checks the
// physical plan. A query the engine refuses is an error "query NAME: ..."
// (with its From in brackets when it has one) that wraps the *sql.Error,
// which errors.As finds, but a column a table lacks, which is ErrColumn
// naming the table's input (Check); a name that is not one wraps
// ErrName; a plan that breaks an invariant wraps ErrPlanner.
func Plan(queries []Query, cat sql.Catalog, shape physical.Shape) (*Job, error) {
	if len(queries) == 0 {
		return nil, errors.New("a job of SQL queries needs at least one query")
	}
	if err := CheckNames(queries); err != nil {
		return nil, err
	}
	job := &Job{Shape: shape}
	for _, q := range queries {
		l, err := compileQuery(q, cat)
		if err != nil {
			return nil, err
		}
		job.Logical = append(job.Logical, *l)
		job.from = append(job.from, q.From)
	}
	var err error
	if job.Plan, err = physical.Build(job.Logical, shape); err != nil {
		return nil, err
	}
	if err := physical.Check(job.Plan); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPlanner, err)
	}
	return job, nil
}

// Explain is the job's plans as `wololo explain` prints them: each
// query's logical plan, in order, then the physical plan.
func (j *Job) Explain() string {
	var b strings.Builder
	b.WriteString(j.LogicalText())
	b.WriteString(j.PhysicalText())
	return b.String()
}

// LogicalText is each query's logical plan, in order, as Explain starts.
func (j *Job) LogicalText() string {
	var b strings.Builder
	for i, l := range j.Logical {
		q := Query{Name: l.Name}
		if i < len(j.from) {
			q.From = j.from[i]
		}
		fmt.Fprintf(&b, "%s, logical plan:\n%s\n", q.label(), l.Plan)
	}
	return b.String()
}

// PhysicalText is the job's physical plan, as Explain ends.
func (j *Job) PhysicalText() string {
	return fmt.Sprintf("physical plan on %s and %s:\n%s", j.Shape.Gateway, j.Shape.Shard, j.Plan)
}

// Encode is the physical plan as the job record and IntroduceJob carry it
// (physical.Encode).
func (j *Job) Encode() ([]byte, error) { return physical.Encode(j.Plan) }
