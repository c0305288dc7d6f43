// Package queries holds the four queries of docs/queries.md as SQL files
// (q1.sql .. q4.sql, in the dialect of docs/sql.md), embedded so that the
// binary carries them: the default queries of a job once the SQL engine
// (services/dataflow/sql) runs jobs. Its tests run each file through the
// engine and compare the output byte for byte with the reference
// evaluator's.
//
// It imports nothing of this module.
package queries

import (
	"embed"
	"io/fs"
	"strings"
)

//go:embed q*.sql
var files embed.FS

// Names are the queries' names, in order: the output files are NAME.csv.
var Names = []string{"q1", "q2", "q3", "q4"}

// FS is the query files, NAME.sql each.
func FS() fs.FS { return files }

// Text returns the SQL text of the named query, and false when there is
// no such query.
func Text(name string) (string, bool) {
	if strings.ContainsAny(name, "/.") {
		return "", false
	}
	b, err := files.ReadFile(name + ".sql")
	if err != nil {
		return "", false
	}
	return string(b), true
}
