package sql

import (
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// A column's kind belongs to its table (docs/sql.md "Kinds"): the two
// input files' columns have the kinds docs/queries.md gives them, and a
// job's --table files' columns are text, which a cast (x::numeric) reads
// as another kind. A query that compares a number with a text is refused
// when the job is created, naming both sides, where a kind inferred from
// the query's own uses made p.rating > m.average_rating a comparison of
// texts (issue 41).

// inputKinds are the kinds of the input files' columns that are not
// text (docs/queries.md "Values"); their other columns, and the columns
// a header has beyond those, are text.
var inputKinds = map[string]map[string]plan.Type{
	"matches":       {"mirror": plan.Bool, "average_rating": plan.Number, "duration": durationKind},
	"match_players": {"rating": plan.Number, "winner": plan.Bool},
}

// Options say how Compile types the columns of the tables other than the
// two input files.
type Options struct {
	// TextTables makes every column of those tables text unless cast: a
	// job's --table files (services/dataflow/sql/sqljob), whose headers
	// say nothing of their kinds. Without it, each such column takes the
	// kind its uses in the query give it, text when none does: the
	// generated tables of the tests (services/dataflow/sql/sqlgen),
	// whose queries compare numbers and test booleans uncast, as the
	// DuckDB differential test types them.
	TextTables bool
}

// declared is the kind of column col of table, when its table fixes
// it; ok is false for a column whose kind its uses infer.
func (c *compiler) declared(table, col string) (t plan.Type, ok bool) {
	if kinds, input := inputKinds[table]; input {
		if t, ok := kinds[col]; ok {
			return t, true
		}
		return plan.Text, true
	}
	if c.opts.TextTables {
		return plan.Text, true
	}
	return "", false
}

// kindName is how an error names a kind: "a number", "a text", ...
func kindName(t plan.Type) string {
	switch t {
	case plan.Number:
		return "a number"
	case plan.Bool:
		return "a boolean"
	case durationKind:
		return "a duration"
	case plan.Text:
		return "a text"
	}
	return "of no kind yet"
}
