package parse

import (
	"strings"
)

// Expressions, by PostgreSQL's precedence, loosest first: OR, AND, NOT,
// IS (ISNULL, NOTNULL), the comparisons, [NOT] IN / BETWEEN / LIKE /
// ILIKE, any other operator (||), + -, * / %, ^, unary + -, ::.

// enter counts one level of recursion into an expression, and fails past
// the bound.
func (p *parser) enter() {
	p.depth++
	if p.depth > 4*p.maxDepth+16 {
		p.fail(p.tok().Pos, "expression depth", "nested more than %d deep (the limit, docs/sql.md)", p.maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) expr() Expr {
	p.enter()
	defer p.leave()
	return p.orExpr()
}

func (p *parser) binary(l Expr, op Token, opText string, r Expr) *Binary {
	return &Binary{Pos: l.Position(), OpPos: op.Pos, Op: opText, L: l, R: r}
}

// leftAssoc parses next {op next}, left-associative, for the operators
// match accepts at the current token.
func (p *parser) leftAssoc(next func() Expr, match func() bool) Expr {
	e := next()
	for match() {
		op := p.next()
		e = p.binary(e, op, op.Text, next())
	}
	return e
}

func (p *parser) orExpr() Expr {
	return p.leftAssoc(p.andExpr, func() bool { return p.isKw("or") })
}

func (p *parser) andExpr() Expr {
	return p.leftAssoc(p.notExpr, func() bool { return p.isKw("and") })
}

func (p *parser) notExpr() Expr {
	if p.isKw("not") {
		p.enter()
		defer p.leave()
		t := p.next()
		return &Unary{Pos: t.Pos, Op: "not", X: p.notExpr()}
	}
	return p.isExpr()
}

func (p *parser) isExpr() Expr {
	e := p.cmpExpr()
	for {
		t := p.tok()
		switch {
		case p.isKw("isnull"), p.isKw("notnull"):
			p.next()
			e = &Is{Pos: e.Position(), IsPos: t.Pos, X: e, Not: t.Text == "notnull", What: "null"}
			continue
		case !p.isKw("is"):
			return e
		}
		p.next()
		is := &Is{Pos: e.Position(), IsPos: t.Pos, X: e}
		if p.isKw("not") {
			p.next()
			is.Not = true
		}
		switch {
		case p.isKw("null"), p.isKw("true"), p.isKw("false"), p.isKw("unknown"):
			is.What = p.next().Text
		case p.isKw("distinct"):
			p.next()
			p.expectKw("from")
			is.What = "distinct from"
			is.R = p.cmpExpr()
		default:
			p.syntax("NULL, TRUE, FALSE or DISTINCT FROM after IS")
		}
		e = is
	}
}

var comparisonOps = map[string]bool{"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}

func (p *parser) cmpExpr() Expr {
	e := p.likeExpr()
	for {
		t := p.tok()
		if t.Kind != Op || !comparisonOps[t.Text] {
			return e
		}
		p.next()
		if p.isKw("any") || p.isKw("all") || p.isKw("some") {
			p.fail(p.tok().Pos, "ANY/ALL", "not supported")
		}
		e = p.binary(e, t, t.Text, p.likeExpr())
	}
}

// likeExpr parses [NOT] IN, BETWEEN, LIKE, ILIKE after an operand.
func (p *parser) likeExpr() Expr {
	e := p.opExpr()
	for {
		t := p.tok()
		not := false
		if p.isKw("not") {
			n := p.peek(1)
			if n.Kind != Ident || !(n.Text == "in" || n.Text == "between" || n.Text == "like" || n.Text == "ilike" || n.Text == "similar") {
				return e
			}
			p.next()
			not = true
		}
		switch {
		case p.isKw("in"):
			p.next()
			in := &In{Pos: e.Position(), InPos: t.Pos, X: e, Not: not}
			p.expectOp("(")
			if p.isKw("select") || p.isKw("with") || p.selectAhead(0) {
				in.Sub = p.selectStmt()
			} else {
				in.List = p.exprList()
			}
			p.expectOp(")")
			e = in
		case p.isKw("between"):
			p.next()
			if p.isKw("symmetric") || p.isKw("asymmetric") {
				p.fail(p.tok().Pos, "BETWEEN SYMMETRIC", "not supported")
			}
			b := &Between{Pos: e.Position(), OpPos: t.Pos, X: e, Not: not, Lo: p.opExpr()}
			p.expectKw("and")
			b.Hi = p.opExpr()
			e = b
		case p.isKw("like"), p.isKw("ilike"):
			op := p.next().Text
			if not {
				op = "not " + op
			}
			e = p.binary(e, t, op, p.opExpr())
			if p.isKw("escape") {
				p.fail(p.tok().Pos, "ESCAPE", "not supported")
			}
		case p.isKw("similar"):
			p.fail(t.Pos, "SIMILAR TO", "not supported")
		default:
			return e
		}
	}
}

// structural are the operator tokens that are not PostgreSQL's "any
// other operator" (which || and the bitwise ones are).
var structural = map[string]bool{"(": true, ")": true, ",": true, ".": true, ";": true, "::": true, ":": true,
	"[": true, "]": true, "+": true, "-": true, "*": true, "/": true, "%": true, "^": true,
	"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}

func (p *parser) opExpr() Expr {
	return p.leftAssoc(p.addExpr, func() bool { t := p.tok(); return t.Kind == Op && !structural[t.Text] })
}

func (p *parser) addExpr() Expr {
	return p.leftAssoc(p.mulExpr, func() bool { return p.isOp("+") || p.isOp("-") })
}

func (p *parser) mulExpr() Expr {
	return p.leftAssoc(p.expExpr, func() bool { return p.isOp("*") || p.isOp("/") || p.isOp("%") })
}

func (p *parser) expExpr() Expr {
	return p.leftAssoc(p.unaryExpr, func() bool { return p.isOp("^") })
}

func (p *parser) unaryExpr() Expr {
	if p.isOp("-") || p.isOp("+") {
		p.enter()
		defer p.leave()
		t := p.next()
		return &Unary{Pos: t.Pos, Op: t.Text, X: p.unaryExpr()}
	}
	e := p.primary()
	for {
		switch {
		case p.isOp("::"):
			p.next()
			e = &Cast{Pos: e.Position(), X: e, Type: p.typeName()}
		case p.isOp("["):
			p.fail(p.tok().Pos, "array subscript", "not supported")
		case p.isKw("collate"):
			p.fail(p.tok().Pos, "COLLATE", "not supported")
		case p.isKw("at") && p.peek(1).Kind == Ident && p.peek(1).Text == "time":
			p.fail(p.tok().Pos, "AT TIME ZONE", "not supported")
		default:
			return e
		}
	}
}

// typeName reads a type's name: one word, or PostgreSQL's two-word
// names, and a (precision, scale) after it.
func (p *parser) typeName() string {
	t := p.tok()
	if t.Kind != Ident && t.Kind != QIdent {
		p.syntax("a type name")
	}
	p.next()
	name := t.Text
	switch {
	case name == "double" && p.isKw("precision"),
		(name == "character" || name == "char") && p.isKw("varying"):
		name += " " + p.next().Text
	case (name == "timestamp" || name == "time") && (p.isKw("with") || p.isKw("without")):
		name += " " + p.next().Text
		name += " " + p.expectKw("time").Text
		name += " " + p.expectKw("zone").Text
	}
	if p.isOp("(") {
		p.next()
		var args []string
		for {
			n := p.tok()
			if n.Kind != Num {
				p.syntax("a number")
			}
			args = append(args, p.next().Text)
			if !p.isOp(",") {
				break
			}
			p.next()
		}
		p.expectOp(")")
		name += "(" + strings.Join(args, ",") + ")"
	}
	if p.isOp("[") {
		p.fail(p.tok().Pos, "array type", "not supported")
	}
	return name
}

// subselect parses ( SELECT ... ) at the current "(".
func (p *parser) subselect() *Select {
	p.expectOp("(")
	if !p.isKw("select") && !p.isKw("with") && !p.selectAhead(0) {
		p.syntax("SELECT")
	}
	s := p.selectStmt()
	p.expectOp(")")
	return s
}

// clauseWords are reserved words that start or join clauses and that
// no column is likely named: met where an expression was expected, they
// are a missing expression, not a name to quote.
var clauseWords = setOf("from", "where", "having", "union", "intersect", "except", "on", "and", "or", "then",
	"else", "when", "as", "in", "using", "into")

// valueFunctions are SQL's functions written without parentheses.
var valueFunctions = setOf("current_date", "current_time", "current_timestamp", "localtime", "localtimestamp",
	"current_user", "session_user", "user", "current_role", "current_catalog", "current_schema", "system_user")

// typedLiteral are the type names PostgreSQL reads before a text as a
// constant of that type: DATE '2024-01-01'.
var typedLiteral = setOf("date", "time", "timestamp", "interval", "numeric", "decimal", "int", "integer",
	"bigint", "smallint", "real", "float", "boolean", "bool", "text", "varchar", "json", "uuid")

func (p *parser) primary() Expr {
	t := p.tok()
	switch t.Kind {
	case Num:
		p.next()
		return &Literal{Pos: t.Pos, Kind: NumberLit, Text: t.Text}
	case Str:
		p.next()
		return &Literal{Pos: t.Pos, Kind: StringLit, Text: t.Text}
	case QIdent:
		return p.nameExpr()
	case Op:
		if t.Text == "(" {
			if p.queryAhead() {
				return &Subquery{Pos: t.Pos, Select: p.subselect()}
			}
			p.next()
			e := p.expr()
			if p.isOp(",") {
				p.fail(p.tok().Pos, "row constructor", "(a, b) is not supported")
			}
			p.expectOp(")")
			return e
		}
		p.syntax("an expression")
	case Ident:
		switch t.Text {
		case "true", "false":
			p.next()
			return &Literal{Pos: t.Pos, Kind: BoolLit, Text: t.Text}
		case "null":
			p.next()
			return &Literal{Pos: t.Pos, Kind: NullLit, Text: "null"}
		case "case":
			return p.caseExpr()
		case "cast":
			p.next()
			p.expectOp("(")
			x := p.expr()
			p.expectKw("as")
			c := &Cast{Pos: t.Pos, X: x, Type: p.typeName()}
			p.expectOp(")")
			return c
		case "exists":
			if n := p.peek(1); n.Kind == Op && n.Text == "(" {
				p.next()
				return &Exists{Pos: t.Pos, Select: p.subselect()}
			}
		case "array", "row":
			if n := p.peek(1); n.Kind == Op && (n.Text == "(" || n.Text == "[") {
				p.fail(t.Pos, strings.ToUpper(t.Text), "not supported")
			}
		}
		if n := p.peek(1); n.Kind == Str && typedLiteral[t.Text] {
			p.next()
			p.next()
			return &Cast{Pos: t.Pos, X: &Literal{Pos: n.Pos, Kind: StringLit, Text: n.Text}, Type: t.Text}
		}
		if valueFunctions[t.Text] {
			p.fail(t.Pos, "function "+strings.ToUpper(t.Text), "not supported (docs/sql.md lists the functions)")
		}
		if reserved[t.Text] && clauseWords[t.Text] {
			p.syntax("an expression")
		}
		if reserved[t.Text] {
			p.fail(t.Pos, "syntax", "syntax error at or near %q: expected an expression (%s is a reserved word; as a name, quote it: \"%s\")", p.src[t.Pos:t.End], strings.ToUpper(t.Text), t.Text)
		}
		return p.nameExpr()
	}
	p.syntax("an expression")
	return nil
}

// nameExpr parses a column reference or a function call at a name.
func (p *parser) nameExpr() Expr {
	t := p.tok()
	if n := p.peek(1); n.Kind == Op && n.Text == "(" {
		if t.Kind == Ident && reserved[t.Text] {
			p.syntax("an expression")
		}
		p.next()
		return p.call(t)
	}
	name, _ := p.name("column")
	c := &Column{Pos: t.Pos, Name: name, Quoted: t.Kind == QIdent}
	if p.isOp(".") {
		p.next()
		if p.isOp("*") {
			p.fail(t.Pos, name+".*", "only as a SELECT item")
		}
		c.Table = c.Name
		n := p.tok()
		c.Name, _ = p.name("column")
		c.Quoted = n.Kind == QIdent
		if p.isOp(".") {
			p.fail(t.Pos, "column reference", "a column is named column or table.column")
		}
	}
	return c
}

// call parses a function call after its name, at "(".
func (p *parser) call(name Token) Expr {
	p.enter()
	defer p.leave()
	c := &Call{Pos: name.Pos, Name: name.Text}
	upper := strings.ToUpper(name.Text)
	if upper == "POSITION" {
		// POSITION(sub IN s): its IN is no IN list, so its arguments
		// would be a syntax error at s; the function is not in the
		// subset either way.
		p.fail(name.Pos, "function POSITION", "not supported (docs/sql.md lists the functions)")
	}
	p.expectOp("(")
	if upper == "EXTRACT" {
		return p.extract(c)
	}
	switch {
	case p.isOp("*"):
		p.next()
		c.Star = true
	case p.isOp(")"):
	default:
		if p.isKw("distinct") {
			p.next()
			c.Distinct = true
		} else if p.isKw("all") {
			p.next()
		}
		for {
			if p.isKw("both") || p.isKw("leading") || p.isKw("trailing") {
				p.fail(name.Pos, "function "+upper, "this form is not supported")
			}
			c.Args = append(c.Args, p.expr())
			if p.isKw("from") || p.isKw("for") || p.isKw("in") || p.isKw("placing") {
				p.fail(name.Pos, "function "+upper, "the form %s(... %s ...) is not supported", upper, strings.ToUpper(p.tok().Text))
			}
			if p.isKw("order") {
				p.fail(p.tok().Pos, "ORDER BY in an aggregate", "not supported")
			}
			if !p.isOp(",") {
				break
			}
			p.next()
		}
	}
	p.expectOp(")")
	if p.isKw("within") {
		p.fail(p.tok().Pos, "WITHIN GROUP", "not supported")
	}
	if p.isKw("filter") {
		p.next()
		p.expectOp("(")
		p.expectKw("where")
		c.Filter = p.expr()
		p.expectOp(")")
	}
	if p.isKw("over") {
		w := &Window{Pos: p.next().Pos}
		if !p.isOp("(") {
			p.fail(p.tok().Pos, "named window", "not supported: write OVER (...)")
		}
		p.next()
		if p.isKw("partition") {
			p.next()
			p.expectKw("by")
			w.PartitionBy = p.exprList()
		}
		if p.isKw("order") {
			p.next()
			p.expectKw("by")
			w.OrderBy = p.orderItems()
		}
		if p.isKw("rows") || p.isKw("range") || p.isKw("groups") {
			p.fail(p.tok().Pos, "window frame", "not supported")
		}
		p.expectOp(")")
		c.Over = w
	}
	return c
}

// extract parses EXTRACT(field FROM x) after its "(" as the call
// extract('field', x), date_part's form (which it reads too, as String
// renders it).
func (p *parser) extract(c *Call) Expr {
	t := p.tok()
	if t.Kind != Ident && t.Kind != QIdent && t.Kind != Str {
		p.syntax("a field name")
	}
	p.next()
	c.Args = append(c.Args, &Literal{Pos: t.Pos, Kind: StringLit, Text: strings.ToLower(t.Text)})
	if p.isOp(",") { // extract('field', x), as String renders it
		p.next()
	} else {
		p.expectKw("from")
	}
	c.Args = append(c.Args, p.expr())
	p.expectOp(")")
	return c
}

// caseExpr parses CASE ... END at CASE.
func (p *parser) caseExpr() Expr {
	p.enter()
	defer p.leave()
	c := &Case{Pos: p.next().Pos}
	if !p.isKw("when") {
		c.Subject = p.expr()
	}
	for p.isKw("when") {
		p.next()
		var w When
		w.Cond = p.expr()
		p.expectKw("then")
		w.Val = p.expr()
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		p.syntax("WHEN")
	}
	if p.isKw("else") {
		p.next()
		c.Else = p.expr()
	}
	p.expectKw("end")
	return c
}
