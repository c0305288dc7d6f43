package parse

// queryAhead reports whether the parenthesis at the current token opens
// a query, not an expression (queryParen): ((SELECT ...) UNION ...) is a
// query, ((SELECT ...) + 1) an expression over a scalar subquery.
func (p *parser) queryAhead() bool {
	if n := p.peek(1); n.Kind == Ident && (n.Text == "select" || n.Text == "with") {
		return true
	}
	if !p.selectAhead(1) { // no SELECT after the parentheses: the common case, read no further
		return false
	}
	q, _ := p.queryParen(p.i)
	return q
}

// queryParen reports whether the parenthesis at token a opens a query,
// and where it closes: its first token is SELECT or WITH, or a
// parenthesis that opens a query and, once closed, is followed by the
// closing parenthesis or by what continues a query (a set operation,
// ORDER BY, LIMIT, OFFSET).
func (p *parser) queryParen(a int) (bool, int) {
	if a+1 >= len(p.toks) {
		return false, len(p.toks) - 1
	}
	n := p.toks[a+1]
	inner := false
	if n.Kind == Ident && (n.Text == "select" || n.Text == "with") {
		return true, p.closing(a)
	}
	if n.Kind == Op && n.Text == "(" {
		q, c := p.queryParen(a + 1)
		if q && c+1 < len(p.toks) {
			t := p.toks[c+1]
			switch {
			case t.Kind == Op && t.Text == ")":
				inner = true
			case t.Kind == Ident:
				switch t.Text {
				case "union", "intersect", "except", "order", "limit", "offset":
					inner = true
				}
			}
		}
	}
	return inner, p.closing(a)
}

// closing is the index of the parenthesis that closes the one at token
// a (the last token when none does).
func (p *parser) closing(a int) int {
	depth := 0
	for i := a; i < len(p.toks); i++ {
		if t := p.toks[i]; t.Kind == Op {
			switch t.Text {
			case "(":
				depth++
			case ")":
				depth--
				if depth == 0 {
					return i
				}
			}
		}
	}
	return len(p.toks) - 1
}
