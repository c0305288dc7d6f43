// Package explain is `wololo explain`: for a job of SQL queries, it prints
// each query's logical plan (services/dataflow/sql) and the job's
// physical plan on the topology's tasks (services/dataflow/sql/physical):
// the operators of each task, the channels with their keys, and the
// tables the keyed operators share. It runs nothing and contacts nothing:
// it reads the query files, the header rows of any table files given, and
// the topology.
//
// Its --query and --table flags and the reading of such a job's files
// (JobFlags) are exported for `wololo demo --query`, which runs the plan,
// and `wololo client submit --query`, which sends the queries to the
// gateway; the compiling and planning is services/dataflow/sql/sqljob's,
// which the gateway shares. It may import the dataflow floor (the SQL engine), deploy and
// the queries' files, never ops or roles.
package explain

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/inputfile"
	"github.com/wololo/wololo/services/dataflow/ingest"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
)

const usage = `usage: wololo explain [--query NAME=FILE.sql ...] [--matches F] [--players F]
                      [--table NAME=F ...] [--topology F]

Prints, for a job of the given queries, each query's logical plan and the
job's physical plan on the topology's tasks: the operators each task runs,
chained in order, the channels between the tasks with their keys and the
columns they carry, and the tables the keyed operators of a task share
(docs/sql.md). Nothing runs and nothing is contacted.

--query NAME=FILE.sql adds a query whose rows would be written to
NAME.csv (repeatable); with none, the job is the four default queries (q1
.. q4 of queries/). The tables are matches and match_players, with the
columns of the files the generator writes unless --matches or --players
names a file whose header row to read instead, and NAME for each --table
NAME=F (F's header row); with --table and neither --matches nor --players,
the job is of its tables only, and a query of matches or match_players is
refused. A file may be gzip-compressed, and one may be - (standard input).
A query the SQL engine refuses exits 2 with the construct and its
line:column.
`

// pairs is a repeatable NAME=VALUE flag, in the order given.
type pairs struct {
	what string // "query", "table": for errors
	list [][2]string
}

func (p *pairs) String() string {
	if p == nil {
		return ""
	}
	s := make([]string, len(p.list))
	for i, kv := range p.list {
		s[i] = kv[0] + "=" + kv[1]
	}
	return strings.Join(s, ",")
}

// Set takes NAME=VALUE. Whether NAME is a query's or a table's, and
// given once, is the job's checks' to say (sqljob.Check), the same
// wherever the job is run.
func (p *pairs) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" || value == "" {
		return fmt.Errorf("want NAME=FILE, not %q", v)
	}
	p.list = append(p.list, [2]string{name, value})
	return nil
}

// Run is `wololo explain`.
func Run(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo explain", usage, stderr)
	jf := RegisterJobFlags(fs)
	matches := fs.String("matches", "", "read the columns of matches from this file's header (default: the generator's)")
	players := fs.String("players", "", "read the columns of match_players from this file's header (default: the generator's)")
	topoPath := fs.String("topology", "", "topology JSON file (default: $WOLOLO_TOPOLOGY if set, else the embedded one)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	top, err := deploy.Select(*topoPath)
	if err != nil {
		return err
	}
	remove, err := jf.SpoolStdin(fs, matches, players)
	if err != nil {
		return err
	}
	defer remove()
	job, err := jf.Plan(fs, *matches, *players, top, stdout)
	if err != nil {
		return err
	}
	return PrintPhysical(stdout, job)
}

// QueryFlags is --query NAME=FILE.sql, repeatable, in the order given:
// the queries of a job, which `wololo explain`, `wololo demo`, `wololo
// client submit` and `wololo local run` take. A NAME that is not a
// query's (sqljob.CheckName) or given twice is refused by the job's
// checks (sqljob.Check), here or at the gateway.
type QueryFlags struct{ p *pairs }

// RegisterQueryFlags adds --query to fs, with that help text.
func RegisterQueryFlags(fs *flag.FlagSet, help string) *QueryFlags {
	q := &QueryFlags{p: &pairs{what: "query"}}
	fs.Var(q.p, "query", help)
	return q
}

// Given reports whether any --query was given.
func (q *QueryFlags) Given() bool { return len(q.p.list) > 0 }

// Read reads the files of the queries given, in order (none: nil). A file
// that cannot be read is an error naming the query.
func (q *QueryFlags) Read() ([]sqljob.Query, error) {
	var out []sqljob.Query
	for _, kv := range q.p.list {
		b, err := os.ReadFile(kv[1])
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", kv[0], err)
		}
		out = append(out, sqljob.Query{Name: kv[0], From: kv[1], Text: string(b)})
	}
	return out, nil
}

// TableFlags is --table NAME=F, repeatable, in the order given: the
// extra tables of a job of queries, which `wololo explain`, `wololo
// demo`, `wololo client submit` and `wololo local run` take. Whether
// NAME is a table's name, given once, is the job's checks' to say
// (sqljob.Check).
type TableFlags struct{ p *pairs }

// RegisterTableFlags adds --table to fs, with that help text.
func RegisterTableFlags(fs *flag.FlagSet, help string) *TableFlags {
	t := &TableFlags{p: &pairs{what: "table"}}
	fs.Var(t.p, "table", help)
	return t
}

// List is the --table flags given, NAME and file, in order.
func (t *TableFlags) List() [][2]string { return slices.Clone(t.p.list) }

// JobFlags are the flags of a job of SQL queries that `wololo explain`
// and `wololo demo` share: --query NAME=FILE.sql and --table NAME=F, both
// repeatable, in the order given.
type JobFlags struct {
	queries *QueryFlags
	tables  *TableFlags
}

// Given are the job's --query and --table flags.
func (jf *JobFlags) Given() (*QueryFlags, *TableFlags) { return jf.queries, jf.tables }

// RegisterJobFlags adds --query and --table to fs.
func RegisterJobFlags(fs *flag.FlagSet) *JobFlags {
	return &JobFlags{
		queries: RegisterQueryFlags(fs, "a query of the job, NAME=FILE.sql (repeatable; default: q1..q4)"),
		tables:  RegisterTableFlags(fs, "another table, NAME=F: F's header row names its columns (repeatable)"),
	}
}

// Tables are the --table flags given, NAME and file, in order.
func (jf *JobFlags) Tables() [][2]string { return jf.tables.List() }

// Plan checks the job and plans it as the gateway does (sqljob.Check,
// held to a gateway's default limits): its queries (the --query ones,
// else the four default ones) on its tables' columns (matches and
// match_players: the header of the file given, else the generator's;
// each --table's header), and its physical plan on top. With plans set,
// it prints each query's logical plan to w. A job the checks refuse is a
// usage error (exit 2) with their message: a query the SQL engine
// refuses names the query, its file, and the construct's line:column; a
// column an input lacks names the input, the column and the query.
func (jf *JobFlags) Plan(fs *flag.FlagSet, matches, players string, top deploy.Topology, w io.Writer) (*sqljob.Job, error) {
	spec, err := jobSpec(matches, players, jf.tables.p.list)
	if err != nil {
		return nil, err
	}
	shape, err := physical.ShapeOf(top)
	if err != nil {
		return nil, err
	}
	if spec.Queries, err = jobQueries(jf.queries); err != nil {
		return nil, err
	}
	spec.Own = jf.queries.Given()
	job, err := sqljob.Check(spec, sqljob.DefaultLimits, shape)
	if err != nil {
		if !errors.Is(err, sqljob.ErrPlanner) {
			err = cli.Mark(err, cli.ErrUsage) // the job is the command line's
		}
		return nil, err
	}
	_, err = io.WriteString(w, job.LogicalText())
	return job, err
}

// SpoolStdin puts standard input in a temporary file in place of the
// one input (--matches, --players or a --table) given as "-"
// (inputfile.SpoolStdin), for a command that reads its inputs by path
// more than once; call remove at its end. More than one "-" is a usage
// error.
func (jf *JobFlags) SpoolStdin(fs *flag.FlagSet, matches, players *string) (remove func(), err error) {
	paths := []*string{matches, players}
	for i := range jf.tables.p.list {
		paths = append(paths, &jf.tables.p.list[i][1])
	}
	remove, err = inputfile.SpoolStdin(paths, nil, "")
	if err != nil {
		return nil, cli.Usagef(fs, "%v", err)
	}
	return remove, nil
}

// PrintPhysical prints the job's physical plan.
func PrintPhysical(w io.Writer, j *sqljob.Job) error {
	_, err := io.WriteString(w, j.PhysicalText())
	return err
}

// jobQueries reads the query files given, or returns the default queries.
func jobQueries(given *QueryFlags) ([]sqljob.Query, error) {
	if given.Given() {
		return given.Read()
	}
	return DefaultQueries(), nil
}

// DefaultQueries are the four default queries of queries/, as a job that
// gives none runs them.
func DefaultQueries() []sqljob.Query {
	var out []sqljob.Query
	for _, name := range queries.Names {
		text, _ := queries.Text(name)
		out = append(out, sqljob.Query{Name: name, From: "queries/" + name + ".sql", Text: text})
	}
	return out
}

// jobSpec is the job's inputs: the two files, with the generator's
// columns or a given file's header, and the --table ones. With --table
// files and neither --matches nor --players, the job is of its tables
// only (sqljob.Spec.NoFiles).
func jobSpec(matches, players string, tables [][2]string) (sqljob.Spec, error) {
	var spec sqljob.Spec
	spec.NoFiles = matches == "" && players == "" && len(tables) > 0
	if !spec.NoFiles {
		spec.Matches, spec.Players = datagen.Headers()
	}
	for _, f := range []struct {
		path string
		cols *[]string
	}{{matches, &spec.Matches}, {players, &spec.Players}} {
		if f.path == "" {
			continue
		}
		h, err := ReadHeader(f.path)
		if err != nil {
			return spec, err
		}
		*f.cols = h.Columns
	}
	for _, kv := range tables {
		h, err := ReadHeader(kv[1])
		if err != nil {
			return spec, fmt.Errorf("table %s: %w", kv[0], err)
		}
		spec.Tables = append(spec.Tables, sqljob.Table{Name: kv[0], Columns: h.Columns})
	}
	return spec, nil
}

// ReadHeader reads the header row of a CSV file (ingest.ReadHeader), a
// plain or a gzip-compressed one (inputfile).
func ReadHeader(path string) (ingest.Header, error) {
	f, err := inputfile.Open(path, nil, "")
	if err != nil {
		return ingest.Header{}, err
	}
	defer f.Close()
	c, err := f.Content()
	if err != nil {
		return ingest.Header{}, err
	}
	defer c.Close()
	return ingest.ReadHeader(c, f.Name())
}
