package parse

import (
	"strings"
)

// TokKind is a token's kind.
type TokKind int

const (
	EOF    TokKind = iota
	Ident          // a name, unquoted: Text folded to lower case
	QIdent         // a "quoted" name: Text as written, "" read as "
	Str            // a 'text' literal: Text is its value
	Num            // a number as written
	Op             // an operator or punctuation: ( ) , . ; :: <= >= <> != || and one-byte ones
)

// Token is one token of the query text.
type Token struct {
	Kind     TokKind
	Text     string
	Pos, End int // byte offsets
}

// opBytes are the bytes PostgreSQL's operators are made of.
const opBytes = "+-*/<>=~!@#%^&|`?"

// Lex splits src into tokens by PostgreSQL's lexical rules: names
// [A-Za-z_][A-Za-z0-9_$]* folded to lower case (bytes of 0x80 and above
// are letters), "names" quoted, 'texts' with ” for a quote, numbers,
// operators, -- and /* */ (nested) comments. It stops at the first
// error: an unterminated quote or comment, a byte no token starts with,
// a form of literal Wololo does not read (E”, X”, $1, $$...$$).
func Lex(src string) ([]Token, *Error) {
	var toks []Token
	i := 0
	for {
		var err *Error
		if i, err = skipBlank(src, i); err != nil {
			return toks, err
		}
		if i >= len(src) {
			toks = append(toks, Token{Kind: EOF, Pos: len(src), End: len(src)})
			return toks, nil
		}
		tok, err := lexToken(src, i)
		if err != nil {
			return toks, err
		}
		toks = append(toks, tok)
		i = tok.End
	}
}

// skipBlank returns the position of the first byte at or after i that is
// neither a blank nor in a comment (-- to the end of the line, or /* */,
// which nest as in PostgreSQL).
func skipBlank(src string, i int) (int, *Error) {
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case strings.HasPrefix(src[i:], "--"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			start, depth := i, 0
			for i < len(src) {
				if strings.HasPrefix(src[i:], "/*") {
					depth++
					i += 2
				} else if strings.HasPrefix(src[i:], "*/") {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			if depth > 0 {
				return i, &Error{Pos: start, Construct: "syntax", Message: "unterminated /* comment"}
			}
		default:
			return i, nil
		}
	}
	return i, nil
}

// lexToken reads the token that starts at start (not a blank), or says
// why none does.
func lexToken(src string, start int) (Token, *Error) {
	i, c := start, src[start]
	switch {
	case isIdentStart(c):
		for i < len(src) && isIdentByte(src[i]) {
			i++
		}
		word := src[start:i]
		if i < len(src) && src[i] == '\'' && len(word) == 1 && strings.ContainsRune("eEbBxXnN", rune(word[0])) {
			return Token{}, &Error{Pos: start, Construct: "literal " + word + "'...'", Message: "not supported: a text is written 'text'"}
		}
		if strings.EqualFold(word, "u") && strings.HasPrefix(src[i:], "&") {
			return Token{}, &Error{Pos: start, Construct: "literal U&", Message: "Unicode escapes are not supported"}
		}
		return Token{Kind: Ident, Text: foldASCII(word), Pos: start, End: i}, nil
	case c == '"':
		text, end, ok := quoted(src, i, '"')
		if !ok {
			return Token{}, &Error{Pos: start, Construct: "syntax", Message: `unterminated quoted name: a " has no closing "`}
		}
		if text == "" {
			return Token{}, &Error{Pos: start, Construct: "name \"\"", Message: "a quoted name is not empty"}
		}
		return Token{Kind: QIdent, Text: text, Pos: start, End: end}, nil
	case c == '\'':
		text, end, ok := quoted(src, i, '\'')
		if !ok {
			return Token{}, &Error{Pos: start, Construct: "syntax", Message: "unterminated text literal: a ' has no closing '"}
		}
		return Token{Kind: Str, Text: text, Pos: start, End: end}, nil
	case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
		i = number(src, i)
		if i < len(src) && isIdentStart(src[i]) {
			end := i
			for end < len(src) && isIdentByte(src[end]) {
				end++
			}
			return Token{}, &Error{Pos: start, Construct: "number " + src[start:end], Message: "trailing junk after a number"}
		}
		return Token{Kind: Num, Text: src[start:i], Pos: start, End: i}, nil
	case c == '`':
		end := strings.IndexByte(src[i+1:], '`')
		msg := `backquotes do not quote names in PostgreSQL's dialect: write "name"`
		if end > 0 {
			name := src[i+1 : i+1+end]
			msg = `backquotes do not quote names in PostgreSQL's dialect: write "` + name + `" (or ` + name + ` unquoted: match, rank, server and map are plain names)`
		}
		return Token{}, &Error{Pos: start, Construct: "backquote", Message: msg}
	case c == '$':
		return Token{}, &Error{Pos: start, Construct: "$", Message: "parameters ($1) and dollar-quoted texts are not supported"}
	case strings.IndexByte("(),;[].", c) >= 0:
		return Token{Kind: Op, Text: src[start : i+1], Pos: start, End: i + 1}, nil
	case c == ':':
		if strings.HasPrefix(src[i:], "::") {
			i += 2
		} else {
			i++
		}
		return Token{Kind: Op, Text: src[start:i], Pos: start, End: i}, nil
	case strings.IndexByte(opBytes, c) >= 0:
		i = operator(src, i)
		op := src[start:i]
		if op == "!=" {
			op = "<>"
		}
		return Token{Kind: Op, Text: op, Pos: start, End: i}, nil
	}
	return Token{}, &Error{Pos: start, Construct: "syntax", Message: "syntax error at or near \"" + src[start:start+1] + "\""}
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentByte(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '$' }

// foldASCII lower-cases the ASCII letters of a name, as PostgreSQL folds
// an unquoted name (bytes of 0x80 and above are kept).
func foldASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// quoted reads the quoted token at src[i] (quote q, doubled inside for
// itself): its text, the offset after it, false when unterminated.
func quoted(src string, i int, q byte) (string, int, bool) {
	var b strings.Builder
	j := i + 1
	for j < len(src) {
		if src[j] == q {
			if j+1 < len(src) && src[j+1] == q {
				b.WriteByte(q)
				j += 2
				continue
			}
			return b.String(), j + 1, true
		}
		b.WriteByte(src[j])
		j++
	}
	return "", j, false
}

// number returns the offset after the number at src[i]: digits, a point
// and digits, an exponent.
func number(src string, i int) int {
	digits := func() {
		for i < len(src) && (src[i] >= '0' && src[i] <= '9') {
			i++
		}
	}
	digits()
	if i < len(src) && src[i] == '.' && !strings.HasPrefix(src[i:], "..") {
		i++
		digits()
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && src[j] >= '0' && src[j] <= '9' {
			i = j
			digits()
		}
	}
	return i
}

// operator returns the offset after the operator at src[i], by
// PostgreSQL's rule: the longest run of operator bytes, not across a
// comment start, and a trailing + or - is its own operator unless the
// run holds one of ~ ! @ # % ^ & | ` ?.
func operator(src string, i int) int {
	start := i
	for i < len(src) && strings.IndexByte(opBytes, src[i]) >= 0 && src[i] != '`' {
		if i > start && (strings.HasPrefix(src[i:], "--") || strings.HasPrefix(src[i:], "/*")) {
			break
		}
		i++
	}
	if i-start > 1 && !strings.ContainsAny(src[start:i], "~!@#%^&|`?") {
		for i-start > 1 && (src[i-1] == '+' || src[i-1] == '-') {
			i--
		}
	}
	return i
}
