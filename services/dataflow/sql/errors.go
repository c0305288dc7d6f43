package sql

import (
	"fmt"
	"strings"
)

// Error is a query the engine refuses: outside the subset, a syntax error,
// an unknown table or column, or a type conflict. It names the construct
// and where it starts in the query text (1-based line and column, in
// bytes), so that a server can answer gRPC InvalidArgument with it.
type Error struct {
	Construct string // what was refused: "LEFT JOIN", "function CONCAT", "column foo", "syntax"
	Line, Col int
	Message   string
	// Missing is, for a column no table of the query has ("no such
	// column"), that column's name without its qualifier; "" otherwise.
	// A job's checks (services/dataflow/sql/sqljob) find with it which
	// input lacks the column.
	Missing string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d:%d: %s: %s", e.Line, e.Col, e.Construct, e.Message)
}

// lineCol converts a byte offset of src into a 1-based line and column.
func lineCol(src string, off int) (int, int) {
	off = min(max(off, 0), len(src))
	line := 1 + strings.Count(src[:off], "\n")
	col := off - strings.LastIndexByte(src[:off], '\n')
	return line, col
}
