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
	"path"
	"strings"
)

//go:embed q*.sql
var files embed.FS

// Names are the queries' names, NAME of each embedded NAME.sql in byte
// order: the only list of the default queries (their output files are
// NAME.csv).
var Names = names()

// names lists the embedded files' names without ".sql", sorted (fs.Glob
// sorts).
func names() []string {
	files, err := fs.Glob(files, "*.sql")
	if err != nil {
		panic("queries: " + err.Error()) // only a malformed pattern fails
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = strings.TrimSuffix(path.Base(f), ".sql")
	}
	return out
}

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
