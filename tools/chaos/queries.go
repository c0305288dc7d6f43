package chaos

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
)

// userSQL are the user queries of `--sql`, NAME.sql each: a join grouped
// by another key than the join's, and two semi-joins on different keys
// (a shuffle from shard to shard).
//
//go:embed sql/*.sql
var userSQL embed.FS

// SQLQueries are the queries of `wololo chaos ... --sql`: the four default
// queries as SQL (queries/q1.sql .. q4.sql), then the user queries
// embedded from tools/chaos/sql, in name order.
func SQLQueries() ([]sqljob.Query, error) {
	var qs []sqljob.Query
	for _, name := range queries.Names {
		text, ok := queries.Text(name)
		if !ok {
			return nil, fmt.Errorf("the default query %s has no SQL file", name)
		}
		qs = append(qs, sqljob.Query{Name: name, From: "queries/" + name + ".sql", Text: text})
	}
	files, err := fs.Glob(userSQL, "sql/*.sql")
	if err != nil {
		return nil, err
	}
	for _, f := range files { // fs.Glob sorts
		b, err := userSQL.ReadFile(f)
		if err != nil {
			return nil, err
		}
		qs = append(qs, sqljob.Query{Name: strings.TrimSuffix(path.Base(f), ".sql"), From: "tools/chaos/" + f, Text: string(b)})
	}
	return qs, nil
}

// isDefault reports whether q is one of the four default queries, by name
// and text: its answer is the reference evaluator's.
func isDefault(q sqljob.Query) bool {
	text, ok := queries.Text(q.Name)
	return ok && text == q.Text
}
