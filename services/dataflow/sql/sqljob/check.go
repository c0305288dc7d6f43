package sqljob

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
)

// The kinds of refusal of a job's checks (Check), which errors.Is finds
// in every error Check returns but ErrPlanner's and a *sql.Error's (a
// query the engine refuses: errors.As finds it). Every way of running a
// job refuses the same job with the same kind and message.
var (
	// ErrTable is a table that is not one: tables without queries of
	// the job's own, a name that is not an identifier, is one of the two
	// files' or is given twice, a table without a header; or a query
	// of a job without the two files (Spec.NoFiles) reading one of
	// their tables.
	ErrTable = errors.New("bad table")
	// ErrColumn is a column a query reads that its input's header lacks.
	ErrColumn = errors.New("no such column in the input")
	// ErrLimit is a job over a limit every receiver enforces: more
	// queries, more bytes of query text or more tables than Limits allow.
	ErrLimit = errors.New("over a job's limits")
)

// refusal is an error of one of the kinds above with its own message.
type refusal struct {
	kind error
	msg  string
	// cause is the engine's refusal it says more of, if any (errors.As
	// finds its *sql.Error: its line:column).
	cause error
}

func (r *refusal) Error() string        { return r.msg }
func (r *refusal) Is(target error) bool { return target == r.kind }
func (r *refusal) Unwrap() error        { return r.cause }

func refusef(kind error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// Limits are the bounds on a job's queries and tables. The gateway takes
// them from its flags (--max-queries, --max-query-bytes, --max-tables);
// `wololo explain` and `wololo demo` hold a job to DefaultLimits, a
// gateway's unless told otherwise.
type Limits struct {
	MaxQueries    int // queries of the job's own
	MaxQueryBytes int // their texts' bytes together
	MaxTables     int // extra tables
}

// The default limits: a job of 32 queries (the 24 analyst ones,
// queries/analyst, fit in one) of 2 KiB each is far more than the four
// default ones (2 KiB together).
const (
	DefaultMaxQueries    = 32
	DefaultMaxQueryBytes = 64 << 10
	DefaultMaxTables     = 8
)

// DefaultLimits are the limits of a gateway run with no flag for them.
var DefaultLimits = Limits{MaxQueries: DefaultMaxQueries, MaxQueryBytes: DefaultMaxQueryBytes, MaxTables: DefaultMaxTables}

// Table is an extra table of a job: its name in the queries and its
// header's columns (nil: no header given).
type Table struct {
	Name    string
	Columns []string
}

// Spec is a job as any way of running it describes it: the header
// columns of its two files, its extra tables, and its queries.
type Spec struct {
	Matches, Players []string // the header columns of matches.csv and match_players.csv
	// NoFiles is a job of its tables only: it has neither of the two
	// files, and its queries have no table matches or match_players.
	NoFiles bool
	Tables  []Table
	// Queries are the job's queries: its own when Own is set, else the
	// four default ones (the callers hold them: queries/), which the
	// limits do not bound and which read no extra table.
	Queries []Query
	Own     bool
}

// FileTable is the SQL table of one of the two files: matches or
// match_players.
func FileTable(f schema.File) string {
	if f == schema.Players {
		return "match_players"
	}
	return "matches"
}

// InputName is how messages name the input whose table is table: the
// file's name for the two files' tables, "table NAME" for another.
func InputName(table string) string {
	for _, f := range schema.Files {
		if table == FileTable(f) {
			return f.String()
		}
	}
	return "table " + table
}

// Check is the one validation of a job, which `wololo explain`, `wololo
// demo`, `wololo local run` and `wololo client submit` (through the
// gateway) and the gateway's CreateJob share, so that they accept the
// same jobs and refuse the others with the same message. In order:
//
//   - the tables (CheckTables): ErrTable, or ErrLimit for too many;
//   - the job's own queries against the limits: ErrLimit;
//   - the queries' names (CheckNames): ErrName;
//   - each query compiled against the inputs' header columns: a column
//     an input lacks is ErrColumn naming the input, the column and the
//     query, where the query reads it and the input's column nearest to
//     it (`matches.csv: no column "severs" (read by query q1 at 1:8);
//     did you mean server?`), so
//     that of the two files only the columns the queries read are
//     required; any other refusal of the engine wraps its *sql.Error;
//   - the physical plan on shape (Plan): ErrPlanner.
//
// It is pure, as Plan is.
func Check(spec Spec, lim Limits, shape physical.Shape) (*Job, error) {
	own := 0
	if spec.Own {
		own = len(spec.Queries)
	}
	if err := CheckTables(spec.Tables, own, lim); err != nil {
		return nil, err
	}
	if spec.NoFiles && len(spec.Tables) == 0 {
		return nil, refusef(ErrTable, "a job of neither matches.csv nor match_players.csv and no table: give both files (--matches, --players), or --table files of its --query queries")
	}
	if spec.Own {
		if len(spec.Queries) > lim.MaxQueries {
			return nil, refusef(ErrLimit, "%d queries, more than a job may have (%d, --max-queries)", len(spec.Queries), lim.MaxQueries)
		}
		if n := TextBytes(spec.Queries); n > lim.MaxQueryBytes {
			return nil, refusef(ErrLimit, "queries of %d bytes together, more than a job may have (%d, --max-query-bytes)", n, lim.MaxQueryBytes)
		}
	}
	cat := sql.Catalog{}
	shape.Arrival = nil
	if !spec.NoFiles {
		cat[FileTable(schema.Matches)], cat[FileTable(schema.Players)] = spec.Matches, spec.Players
		for _, f := range schema.Files {
			shape.Arrival = append(shape.Arrival, FileTable(f))
		}
	}
	for _, t := range spec.Tables {
		cat[t.Name] = t.Columns
		shape.Arrival = append(shape.Arrival, t.Name)
	}
	job, err := Plan(spec.Queries, cat, shape)
	if spec.NoFiles {
		err = noFile(err)
	}
	return job, err
}

// noFile is the refusal of a query of a job without the two files that
// reads one of their tables (err, the engine's "no such table"), naming
// the file the job lacks; err as it is otherwise.
func noFile(err error) error {
	var se *sql.Error
	if !errors.As(err, &se) {
		return err
	}
	for _, f := range schema.Files {
		if se.Construct == "table "+FileTable(f) {
			r := refusef(ErrTable, "this job has no %s: %v (a job of --table files only has no table %s; give --matches and --players to read it)", f, err, FileTable(f)).(*refusal)
			r.cause = err
			return r
		}
	}
	return err
}

// CheckTables refuses a job's extra tables that no job may have: tables
// without queries of the job's own (ownQueries of them) to read them, a
// name that is not a table's (CheckTableName) or is given twice in any
// letter case, a table without a header (ErrTable); more tables than
// lim.MaxTables (ErrLimit).
func CheckTables(tables []Table, ownQueries int, lim Limits) error {
	if len(tables) == 0 {
		return nil
	}
	if ownQueries == 0 {
		return refusef(ErrTable, "%d tables and no queries: only a job of queries reads tables (--query)", len(tables))
	}
	if len(tables) > lim.MaxTables {
		return refusef(ErrLimit, "%d tables, more than a job may have (%d, --max-tables)", len(tables), lim.MaxTables)
	}
	seen := map[string]bool{}
	for i, t := range tables {
		if err := CheckTableName(t.Name); err != nil {
			return refusef(ErrTable, "table %d: %v", i+1, err)
		}
		if seen[strings.ToLower(t.Name)] {
			return refusef(ErrTable, "table %q given twice (names are told apart regardless of case)", t.Name)
		}
		seen[strings.ToLower(t.Name)] = true
		if t.Columns == nil {
			return refusef(ErrTable, "table %q: no header", t.Name)
		}
	}
	return nil
}

// CheckTableName refuses a name that is not a table's: an identifier
// (letters, digits and '_', not starting with a digit, at most 64
// bytes), not matches or match_players in any case.
func CheckTableName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("table name %q: 1 to 64 letters, digits or '_'", name)
	}
	for i, c := range name {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && !(i > 0 && c >= '0' && c <= '9') {
			return fmt.Errorf("table name %q: letters, digits and '_' only, not starting with a digit", name)
		}
	}
	for _, f := range schema.Files {
		if strings.EqualFold(name, FileTable(f)) {
			return fmt.Errorf("table name %q is the table of %s", name, f)
		}
	}
	return nil
}

// compileOptions type a job's --table files' columns as text unless a
// query casts them (docs/sql.md "Kinds"): their headers say nothing of
// their kinds, and a kind inferred from one query's uses made a
// comparison of a number with a text a comparison of texts.
var compileOptions = sql.Options{TextTables: true}

// compileQuery compiles q against cat. A column no table of the query
// has is, when giving it to exactly one table of cat gets the compiler
// past it, an ErrColumn naming that table's input; when several would
// (an unqualified column of a join that both tables lack), which one is
// meant cannot be known, and the refusal is the engine's, as any other,
// named by the query.
func compileQuery(q Query, cat sql.Catalog) (*physical.Logical, error) {
	root, err := sql.CompileWith(q.Text, cat, compileOptions)
	if err == nil {
		return &physical.Logical{Name: q.Name, Plan: root}, nil
	}
	var se *sql.Error
	if errors.As(err, &se) && se.Missing != "" {
		if table, ok := lackingTable(q.Text, cat, se); ok {
			return nil, refusef(ErrColumn, "%s: no column %q (read by query %s at %d:%d)%s", InputName(table), se.Missing, q.Name, se.Line, se.Col, hintOf(se.Message))
		}
	}
	return nil, fmt.Errorf("%s: %w", q.label(), err)
}

// hintOf is the hint of an engine's message ("no such column; did you
// mean civ?"): "; did you mean civ?", or "" when it has none.
func hintOf(msg string) string {
	if _, hint, ok := strings.Cut(msg, "; did you mean "); ok {
		return "; did you mean " + hint
	}
	return ""
}

// lackingTable is the table of cat that the query reads the missing
// column of se from: the one table that, given that column, lets the
// compiler past where it stopped (compiled, or refused further along);
// false if none or several do. It compiles the query once per table of
// cat that lacks the column.
func lackingTable(text string, cat sql.Catalog, se *sql.Error) (string, bool) {
	var found []string
	for _, table := range slices.Sorted(maps.Keys(cat)) {
		cols := cat[table]
		if slices.Contains(cols, se.Missing) {
			continue
		}
		try := maps.Clone(cat)
		try[table] = append(slices.Clone(cols), se.Missing)
		_, err := sql.CompileWith(text, try, compileOptions)
		var again *sql.Error
		if errors.As(err, &again) && again.Line == se.Line && again.Col == se.Col && again.Construct == se.Construct && again.Message == se.Message {
			continue
		}
		found = append(found, table)
	}
	if len(found) != 1 {
		return "", false
	}
	return found[0], true
}
