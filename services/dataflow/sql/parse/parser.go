package parse

import (
	"fmt"
	"strings"
)

// Error is a query the parser refuses: a syntax error, or a construct of
// PostgreSQL's grammar outside Wololo's subset, named. Pos is the byte
// offset of the offending token.
type Error struct {
	Pos       int
	Construct string // "syntax", or what was refused: "WITH", "UNION", "backquote"
	Message   string
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s: %s", e.Pos, e.Construct, e.Message) }

// Parse parses one SELECT statement (a ; after it is allowed). maxDepth
// bounds the nesting of expressions the parser recurses into: past about
// four times maxDepth it stops with an "expression depth" error (the
// binder checks the exact bound on the tree), so that no query recurses
// without bound.
func Parse(src string, maxDepth int) (sel *Select, err *Error) {
	toks, e := Lex(src)
	if e != nil {
		return nil, e
	}
	p := &parser{src: src, toks: toks, maxDepth: maxDepth}
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			sel, err = nil, pe
		}
	}()
	t := p.tok()
	switch {
	case p.isKw("select"), p.isKw("with"), p.isOp("("):
	case t.Kind == Ident && statements[t.Text]:
		p.fail(t.Pos, strings.ToUpper(t.Text)+" statement", "only SELECT is supported")
	default:
		p.syntax("SELECT")
	}
	sel = p.selectStmt()
	if p.isOp(";") {
		p.next()
	}
	if p.tok().Kind != EOF {
		p.syntax("the end of the query")
	}
	return sel, nil
}

// statements are the first words of PostgreSQL's statements other than
// SELECT, which a query is refused as by name.
var statements = setOf("insert", "update", "delete", "merge", "create", "drop", "alter", "truncate", "copy",
	"set", "show", "reset", "explain", "analyze", "values", "table", "begin", "commit", "rollback",
	"grant", "revoke", "call", "do", "prepare", "execute", "vacuum", "lock", "listen", "notify")

type parser struct {
	src      string
	toks     []Token
	i        int
	depth    int
	maxDepth int
}

func (p *parser) tok() Token       { return p.toks[p.i] }
func (p *parser) peek(n int) Token { return p.toks[min(p.i+n, len(p.toks)-1)] }
func (p *parser) next() Token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

// isKw reports whether the current token is the unquoted word w.
func (p *parser) isKw(w string) bool { t := p.tok(); return t.Kind == Ident && t.Text == w }

func (p *parser) isOp(o string) bool { t := p.tok(); return t.Kind == Op && t.Text == o }

func (p *parser) fail(pos int, construct, format string, args ...any) {
	panic(&Error{Pos: pos, Construct: construct, Message: fmt.Sprintf(format, args...)})
}

// syntax fails at the current token, as PostgreSQL says it, with what
// was expected there.
func (p *parser) syntax(expected string) {
	t := p.tok()
	msg := "syntax error at end of input"
	if t.Kind != EOF {
		msg = fmt.Sprintf("syntax error at or near %q", p.src[t.Pos:t.End])
	}
	if expected != "" {
		msg += ": expected " + expected
	}
	p.fail(t.Pos, "syntax", "%s", msg)
}

func (p *parser) expectKw(w string) Token {
	if !p.isKw(w) {
		p.syntax(strings.ToUpper(w))
	}
	return p.next()
}

func (p *parser) expectOp(o string) Token {
	if !p.isOp(o) {
		p.syntax(`"` + o + `"`)
	}
	return p.next()
}

// name reads a name: an unquoted word that is not reserved, or a quoted
// one; what says what it names, for the error.
func (p *parser) name(what string) (string, Token) {
	t := p.tok()
	switch {
	case t.Kind == QIdent:
	case t.Kind == Ident && Reserved(t.Text):
		p.fail(t.Pos, "syntax", "syntax error at or near %q: %s is a reserved word; as a %s, quote it: \"%s\"", p.src[t.Pos:t.End], strings.ToUpper(t.Text), what, t.Text)
	case t.Kind == Ident:
	default:
		p.syntax(what)
	}
	p.next()
	return t.Text, t
}

// selectStmt parses [WITH ...] SELECT ... at the current token: a SELECT,
// or SELECTs joined by set operations (setop.go), then the ORDER BY,
// LIMIT and OFFSET of the whole.
func (p *parser) selectStmt() *Select {
	var with *With
	if p.isKw("with") {
		with = p.with()
	}
	s, paren := p.setExpr(0)
	if with != nil {
		if s.With != nil {
			p.fail(with.Pos, "WITH", "not supported before a parenthesized SELECT that has its own WITH")
		}
		s.With, s.Pos = with, with.Pos
	}
	if paren && (p.isKw("order") || p.isKw("limit") || p.isKw("offset")) && (s.OrderPos >= 0 || s.LimitPos >= 0 || s.OffsetPos >= 0) {
		p.fail(p.tok().Pos, strings.ToUpper(p.tok().Text), "not supported after a parenthesized SELECT that has its own ORDER BY, LIMIT or OFFSET")
	}
	p.tail(s)
	s.Text = p.src[s.Pos:p.toks[max(p.i-1, 0)].End]
	return s
}

// simpleSelect parses SELECT ... [HAVING ...] at the current token: one
// SELECT without ORDER BY, LIMIT or OFFSET, which a set operation may
// join to another.
func (p *parser) simpleSelect() *Select {
	start := p.expectKw("select")
	s := &Select{Pos: start.Pos, FromPos: -1, WherePos: -1, GroupPos: -1, HavingPos: -1, OrderPos: -1, LimitPos: -1, OffsetPos: -1}
	switch {
	case p.isKw("distinct"):
		p.next()
		if p.isKw("on") {
			p.fail(p.tok().Pos, "DISTINCT ON", "not supported")
		}
		s.Distinct = true
	case p.isKw("all"):
		p.next()
	}
	s.Items = p.items()
	if p.isKw("into") {
		p.fail(p.tok().Pos, "SELECT INTO", "not supported")
	}
	if p.isKw("from") {
		s.FromPos = p.next().Pos
		s.From = append(s.From, p.tableRef())
		for p.isOp(",") {
			p.next()
			s.From = append(s.From, p.tableRef())
		}
	}
	if p.isKw("where") {
		s.WherePos = p.next().Pos
		s.Where = p.expr()
	}
	if p.isKw("group") {
		s.GroupPos = p.next().Pos
		p.expectKw("by")
		s.GroupBy = p.exprList()
	}
	if p.isKw("having") {
		s.HavingPos = p.next().Pos
		s.Having = p.expr()
	}
	if p.isKw("window") {
		p.fail(p.tok().Pos, "WINDOW", "named windows are not supported")
	}
	s.Text = p.src[s.Pos:p.toks[max(p.i-1, 0)].End]
	return s
}

// tail parses the ORDER BY, LIMIT and OFFSET of s, where they are written.
func (p *parser) tail(s *Select) {
	if p.isKw("order") {
		s.OrderPos = p.next().Pos
		p.expectKw("by")
		s.OrderBy = p.orderItems()
	}
	for {
		switch {
		case p.isKw("limit") && s.LimitPos < 0:
			s.LimitPos = p.next().Pos
			if p.isKw("all") {
				p.next()
			} else {
				s.Limit = p.expr()
			}
			continue
		case p.isKw("offset") && s.OffsetPos < 0:
			s.OffsetPos = p.next().Pos
			s.Offset = p.expr()
			if p.isKw("row") || p.isKw("rows") {
				p.next()
			}
			continue
		case p.isKw("fetch") && s.LimitPos < 0:
			p.fetch(s)
			continue
		case p.isKw("fetch"):
			p.fail(p.tok().Pos, "FETCH", "a query has one LIMIT or FETCH")
		case p.isKw("for"):
			p.fail(p.tok().Pos, "locking clause", "not supported")
		}
		break
	}
}

// fetch parses the SQL standard's LIMIT, FETCH {FIRST | NEXT} [n]
// {ROW | ROWS} ONLY (n 1 when left out), as s's Limit; WITH TIES is
// refused.
func (p *parser) fetch(s *Select) {
	s.LimitPos = p.next().Pos
	if !p.isKw("first") && !p.isKw("next") {
		p.syntax("FIRST or NEXT")
	}
	p.next()
	if p.isKw("row") || p.isKw("rows") {
		s.Limit = &Literal{Pos: p.tok().Pos, Kind: NumberLit, Text: "1"}
	} else {
		s.Limit = p.unaryExpr()
	}
	if !p.isKw("row") && !p.isKw("rows") {
		p.syntax("ROW or ROWS")
	}
	p.next()
	if p.isKw("with") {
		p.fail(p.tok().Pos, "FETCH ... WITH TIES", "not supported")
	}
	p.expectKw("only")
}

// with parses WITH name [(columns)] AS [[NOT] MATERIALIZED] (SELECT ...)
// [, ...]. RECURSIVE is refused here, by name, before its body (a UNION,
// as a rule) is refused for what it holds; MATERIALIZED is a hint to
// PostgreSQL's planner, which changes no answer: read and ignored.
func (p *parser) with() *With {
	w := &With{Pos: p.next().Pos}
	if p.isKw("recursive") {
		p.fail(p.tok().Pos, "WITH RECURSIVE", "recursive common table expressions are not supported")
	}
	for {
		_, t := p.name("common table expression")
		c := &CTE{Pos: t.Pos, Name: t.Text, ColPos: -1}
		if p.isOp("(") {
			c.ColPos = p.tok().Pos
			c.Columns = p.nameList()
		}
		p.expectKw("as")
		if p.isKw("not") {
			p.next()
			p.expectKw("materialized")
		} else if p.isKw("materialized") {
			p.next()
		}
		p.expectOp("(")
		if !p.isKw("select") && !p.isKw("with") && !p.selectAhead(0) {
			if p.tok().Kind == Ident && statements[p.tok().Text] {
				p.fail(p.tok().Pos, strings.ToUpper(p.tok().Text)+" statement", "a common table expression is a SELECT")
			}
			p.syntax("SELECT")
		}
		p.enter()
		c.Select = p.selectStmt()
		p.leave()
		p.expectOp(")")
		w.CTEs = append(w.CTEs, c)
		if !p.isOp(",") {
			return w
		}
		p.next()
	}
}

// items parses the SELECT list.
func (p *parser) items() []*Item {
	var out []*Item
	for {
		t := p.tok()
		it := &Item{Pos: t.Pos}
		switch {
		case p.isOp("*"):
			p.next()
			it.Star = true
		case (t.Kind == Ident || t.Kind == QIdent) && p.peek(1).Kind == Op && p.peek(1).Text == "." && p.peek(2).Kind == Op && p.peek(2).Text == "*":
			it.Table, _ = p.name("table")
			p.next()
			p.next()
			it.Star = true
		default:
			it.Expr = p.expr()
			it.Alias = p.alias(true)
		}
		out = append(out, it)
		if !p.isOp(",") {
			return out
		}
		p.next()
	}
}

// alias reads [AS] name; "" when none. After AS any word is a name (a
// label, as PostgreSQL reads it); without, an unreserved one.
func (p *parser) alias(label bool) string {
	if p.isKw("as") {
		p.next()
		t := p.tok()
		if t.Kind == QIdent || t.Kind == Ident && (label || !Reserved(t.Text)) {
			p.next()
			return t.Text
		}
		p.syntax("a name after AS")
	}
	if t := p.tok(); t.Kind == QIdent || t.Kind == Ident && !Reserved(t.Text) {
		p.next()
		return t.Text
	}
	return ""
}

// tableRef parses one item of FROM: a table, a subquery, and the joins
// after it.
func (p *parser) tableRef() Table {
	left := p.tablePrimary()
	for {
		t := p.tok()
		kind := ""
		natural := p.isKw("natural")
		if natural {
			p.next()
		}
		switch {
		case p.isKw("cross"):
			p.next()
			kind = "CROSS JOIN"
		case p.isKw("inner"):
			p.next()
			kind = "JOIN"
		case p.isKw("left"), p.isKw("right"), p.isKw("full"):
			kind = strings.ToUpper(p.next().Text) + " JOIN"
			if p.isKw("outer") {
				p.next()
			}
		case p.isKw("join"):
			kind = "JOIN"
		}
		if kind == "" {
			if natural {
				p.syntax("JOIN")
			}
			return left
		}
		p.expectKw("join")
		if natural {
			kind = "NATURAL " + kind
		}
		j := &Join{Pos: t.Pos, Kind: kind, Left: left, Right: p.tablePrimary(), OnPos: -1}
		if kind == "JOIN" || kind == "LEFT JOIN" || kind == "RIGHT JOIN" || kind == "FULL JOIN" {
			switch {
			case p.isKw("on"):
				j.OnPos = p.next().Pos
				j.On = p.expr()
			case p.isKw("using"):
				p.next()
				j.Using = p.nameList()
			default:
				p.syntax("ON or USING")
			}
		}
		left = j
	}
}

// tablePrimary parses a table name or a subquery, with its alias.
func (p *parser) tablePrimary() Table {
	t := p.tok()
	switch {
	case p.isKw("lateral"):
		p.fail(t.Pos, "LATERAL", "not supported")
	case p.isKw("only"):
		p.fail(t.Pos, "ONLY", "not supported")
	case p.isOp("("):
		p.enter()
		defer p.leave()
		p.next()
		if p.isKw("select") || p.isKw("with") || p.selectAhead(0) {
			d := &Derived{Pos: t.Pos, Select: p.selectStmt(), ColPos: -1}
			p.expectOp(")")
			d.Alias = p.alias(false)
			if d.Alias != "" && p.isOp("(") {
				d.ColPos = p.tok().Pos
				d.Columns = p.nameList()
			}
			return d
		}
		inner := p.tableRef()
		p.expectOp(")")
		return inner
	}
	tn := &TableName{Pos: t.Pos}
	tn.Name, _ = p.name("table")
	if p.isOp(".") {
		p.next()
		tn.Schema = tn.Name
		tn.Name, _ = p.name("table")
	}
	if p.isOp("(") {
		p.fail(t.Pos, "table function "+tn.Name, "FROM reads tables, not functions")
	}
	if p.isKw("tablesample") {
		p.fail(p.tok().Pos, "TABLESAMPLE", "not supported")
	}
	tn.Alias = p.alias(false)
	if tn.Alias != "" && p.isOp("(") {
		tn.Columns = p.nameList()
	}
	return tn
}

// nameList parses ( name, ... ) of columns.
func (p *parser) nameList() []string {
	p.expectOp("(")
	var out []string
	for {
		n, _ := p.name("column")
		out = append(out, n)
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	p.expectOp(")")
	return out
}

// orderItems parses the keys of an ORDER BY.
func (p *parser) orderItems() []*OrderItem {
	var out []*OrderItem
	for {
		o := &OrderItem{Expr: p.expr()}
		switch {
		case p.isKw("asc"):
			p.next()
		case p.isKw("desc"):
			p.next()
			o.Desc = true
		case p.isKw("using"):
			p.fail(p.tok().Pos, "ORDER BY USING", "not supported: use ASC or DESC")
		}
		if p.isKw("nulls") {
			p.next()
			switch {
			case p.isKw("first"), p.isKw("last"):
				o.Nulls = p.next().Text
			default:
				p.syntax("FIRST or LAST")
			}
		}
		out = append(out, o)
		if !p.isOp(",") {
			return out
		}
		p.next()
	}
}

func (p *parser) exprList() []Expr {
	out := []Expr{p.expr()}
	for p.isOp(",") {
		p.next()
		out = append(out, p.expr())
	}
	return out
}
