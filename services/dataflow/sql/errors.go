package sql

import (
	"fmt"
	"strconv"
	"strings"

	"vitess.io/vitess/go/vt/sqlparser"
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

// token is one token of the query text, by byte offsets.
type token struct {
	start, end int
	word       string // lower case, without backquotes
}

// locator finds where constructs are in the query text. The parser's tree
// carries no positions, so a construct is found by its first token (a
// keyword, a name), searched from the start of the clause being checked.
type locator struct {
	src  string
	toks []token
}

func newLocator(p *sqlparser.Parser, src string) *locator {
	l := &locator{src: src}
	tk := p.NewStringTokenizer(src)
	prev := 0
	for {
		typ, val := tk.Scan()
		if typ == 0 || tk.Pos <= prev && typ != 0 {
			break
		}
		start := prev
		for start < tk.Pos && start < len(src) && strings.IndexByte(" \t\r\n", src[start]) >= 0 {
			start++
		}
		if val == "" { // punctuation and operators carry no value
			val = src[start:min(tk.Pos, len(src))]
		}
		l.toks = append(l.toks, token{start: start, end: tk.Pos, word: strings.ToLower(val)})
		prev = tk.Pos
		if tk.Pos >= len(src) {
			break
		}
	}
	return l
}

// lineCol converts a byte offset into a 1-based line and column.
func (l *locator) lineCol(off int) (int, int) {
	off = min(max(off, 0), len(l.src))
	line := 1 + strings.Count(l.src[:off], "\n")
	col := off - strings.LastIndexByte(l.src[:off], '\n')
	return line, col
}

// find returns the offset of the first token at or after token index from
// whose text is word (any case), or of token from when there is none.
func (l *locator) find(from int, word string) int {
	word = strings.ToLower(strings.Trim(word, "`"))
	for i := from; i < len(l.toks); i++ {
		if l.toks[i].word == word {
			return l.toks[i].start
		}
	}
	for i := 0; i < from && i < len(l.toks); i++ {
		if l.toks[i].word == word {
			return l.toks[i].start
		}
	}
	if from < len(l.toks) {
		return l.toks[from].start
	}
	return 0
}

// index returns the index of the n-th (0-based) token whose text is word
// at or after from, or from when there is none.
func (l *locator) index(from int, word string, n int) int {
	for i := from; i < len(l.toks); i++ {
		if l.toks[i].word == word {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return from
}

// syntax converts the parser's error into an Error at the token it names.
func (l *locator) syntax(err error) *Error {
	msg := err.Error()
	if i := strings.LastIndex(msg, "\n"); i >= 0 { // vitess prefixes a code line
		msg = msg[i+1:]
	}
	off := 0
	if _, rest, ok := strings.Cut(msg, "at position "); ok {
		num, _, _ := strings.Cut(rest, " ")
		if n, err := strconv.Atoi(num); err == nil {
			off = n
			for _, t := range l.toks { // the token that ends there
				if t.end >= n {
					off = t.start
					break
				}
			}
		}
	}
	line, col := l.lineCol(off)
	return &Error{Construct: "syntax", Line: line, Col: col, Message: msg}
}
