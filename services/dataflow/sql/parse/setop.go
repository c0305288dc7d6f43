package parse

// Set operations: SELECTs joined by UNION, INTERSECT and EXCEPT, as
// PostgreSQL reads them: INTERSECT binds tighter than UNION and EXCEPT,
// which are read left to right; a parenthesized SELECT (with its own
// WITH, ORDER BY, LIMIT, OFFSET) is an operand; the ORDER BY, LIMIT and
// OFFSET after the last operand are the whole statement's.

// SetOp is Left Op Right: Op is "union", "intersect" or "except"; All is
// written ALL (DISTINCT, the default, is read and is not All).
type SetOp struct {
	Pos         int // of the operator's keyword
	Op          string
	All         bool
	Left, Right *Select
}

// setPrec is the precedence of the set operation at the current token,
// and its name; 0 and "" when there is none.
func (p *parser) setPrec() (int, string) {
	switch {
	case p.isKw("union"):
		return 1, "union"
	case p.isKw("except"):
		return 1, "except"
	case p.isKw("intersect"):
		return 2, "intersect"
	}
	return 0, ""
}

// setExpr parses operands joined by set operations of precedence at
// least minPrec (1: any). paren says the result is one parenthesized
// operand, whose ORDER BY, LIMIT and OFFSET are its own.
func (p *parser) setExpr(minPrec int) (s *Select, paren bool) {
	start := p.tok().Pos
	s, paren = p.setOperand()
	for {
		prec, op := p.setPrec()
		if prec == 0 || prec < minPrec {
			return s, paren
		}
		t := p.next()
		all := false
		switch {
		case p.isKw("all"):
			p.next()
			all = true
		case p.isKw("distinct"):
			p.next()
		}
		right, _ := p.setExpr(prec + 1)
		s = &Select{Pos: start, Set: &SetOp{Pos: t.Pos, Op: op, All: all, Left: s, Right: right},
			FromPos: -1, WherePos: -1, GroupPos: -1, HavingPos: -1, OrderPos: -1, LimitPos: -1, OffsetPos: -1}
		s.Text = p.src[s.Pos:p.toks[max(p.i-1, 0)].End]
		paren = false
	}
}

// setOperand parses one operand of a set operation: a SELECT, or a
// parenthesized statement.
func (p *parser) setOperand() (*Select, bool) {
	if !p.isOp("(") {
		return p.simpleSelect(), false
	}
	p.enter()
	defer p.leave()
	p.next()
	if !p.isKw("select") && !p.isKw("with") && !p.isOp("(") {
		p.syntax("SELECT")
	}
	s := p.selectStmt()
	p.expectOp(")")
	return s, true
}

// selectAhead reports whether the tokens from k after the current one
// are parentheses opening a SELECT (or WITH): ((SELECT ...) UNION ...)
// is a subquery, where ((a JOIN b)) and ((1)) are not.
func (p *parser) selectAhead(k int) bool {
	i := min(p.i+k, len(p.toks)-1)
	for i < len(p.toks)-1 && p.toks[i].Kind == Op && p.toks[i].Text == "(" {
		i++
	}
	t := p.toks[i]
	return i > p.i+k && t.Kind == Ident && (t.Text == "select" || t.Text == "with")
}
