package parse

import (
	"strings"
)

// String renders e as query text, in lower case but for quoted names
// and texts, with the parentheses its precedence needs and no others:
// "count(*)", "sum(case when winner then 1 else 0 end)". The binder
// names an unnamed column by it and matches GROUP BY keys with it.
func String(e Expr) string {
	var b strings.Builder
	render(&b, e)
	return b.String()
}

// precedence of an expression's operator, loosest 1: OR.
func precedence(e Expr) int {
	switch x := e.(type) {
	case *Binary:
		switch x.Op {
		case "or":
			return 1
		case "and":
			return 2
		case "=", "<>", "<", "<=", ">", ">=":
			return 5
		case "like", "ilike", "not like", "not ilike":
			return 6
		case "+", "-":
			return 8
		case "*", "/", "%":
			return 9
		case "^":
			return 10
		}
		return 7
	case *Unary:
		if x.Op == "not" {
			return 3
		}
		return 11
	case *Is:
		return 4
	case *In, *Between:
		return 6
	case *Cast:
		return 12
	}
	return 13
}

// Name renders a name, quoted when it must be: not a plain lower-case
// word, or a reserved one.
func Name(s string) string {
	plain := s != "" && !Reserved(s) && !(s[0] >= '0' && s[0] <= '9')
	for i := 0; plain && i < len(s); i++ {
		c := s[i]
		plain = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// child renders e, in parentheses when it binds looser than min.
func child(b *strings.Builder, e Expr, min int) {
	if precedence(e) < min {
		b.WriteByte('(')
		render(b, e)
		b.WriteByte(')')
		return
	}
	render(b, e)
}

func renderList(b *strings.Builder, es []Expr) {
	for i, a := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		render(b, a)
	}
}

func renderOrder(b *strings.Builder, items []*OrderItem) {
	for i, o := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		render(b, o.Expr)
		if o.Desc {
			b.WriteString(" desc")
		}
		if o.Nulls != "" {
			b.WriteString(" nulls " + o.Nulls)
		}
	}
}

func render(b *strings.Builder, e Expr) {
	switch x := e.(type) {
	case *Column:
		if x.Table != "" {
			b.WriteString(Name(x.Table) + ".")
		}
		b.WriteString(Name(x.Name))
	case *Literal:
		switch x.Kind {
		case StringLit:
			b.WriteString("'" + strings.ReplaceAll(x.Text, "'", "''") + "'")
		default:
			b.WriteString(x.Text)
		}
	case *Unary:
		b.WriteString(x.Op)
		if x.Op == "not" {
			b.WriteByte(' ')
		}
		child(b, x.X, precedence(x))
	case *Binary:
		p := precedence(x)
		child(b, x.L, p)
		b.WriteString(" " + x.Op + " ")
		child(b, x.R, p+1)
	case *Is:
		child(b, x.X, 5)
		b.WriteString(" is ")
		if x.Not {
			b.WriteString("not ")
		}
		b.WriteString(x.What)
		if x.R != nil {
			b.WriteByte(' ')
			child(b, x.R, 5)
		}
	case *In:
		child(b, x.X, 7)
		if x.Not {
			b.WriteString(" not")
		}
		b.WriteString(" in (")
		if x.Sub != nil {
			b.WriteString(x.Sub.Text)
		} else {
			renderList(b, x.List)
		}
		b.WriteByte(')')
	case *Between:
		child(b, x.X, 7)
		if x.Not {
			b.WriteString(" not")
		}
		b.WriteString(" between ")
		child(b, x.Lo, 7)
		b.WriteString(" and ")
		child(b, x.Hi, 7)
	case *Case:
		renderCase(b, x)
	case *Call:
		renderCall(b, x)
	case *Cast:
		child(b, x.X, 12)
		b.WriteString("::" + x.Type)
	case *Subquery:
		b.WriteString("(" + x.Select.Text + ")")
	case *Exists:
		b.WriteString("exists (" + x.Select.Text + ")")
	}
}

func renderCase(b *strings.Builder, x *Case) {
	b.WriteString("case")
	if x.Subject != nil {
		b.WriteByte(' ')
		render(b, x.Subject)
	}
	for _, w := range x.Whens {
		b.WriteString(" when ")
		render(b, w.Cond)
		b.WriteString(" then ")
		render(b, w.Val)
	}
	if x.Else != nil {
		b.WriteString(" else ")
		render(b, x.Else)
	}
	b.WriteString(" end")
}

func renderCall(b *strings.Builder, x *Call) {
	b.WriteString(Name(x.Name) + "(")
	if x.Distinct {
		b.WriteString("distinct ")
	}
	if x.Star {
		b.WriteByte('*')
	}
	renderList(b, x.Args)
	b.WriteByte(')')
	if x.Filter != nil {
		b.WriteString(" filter (where ")
		render(b, x.Filter)
		b.WriteByte(')')
	}
	if w := x.Over; w != nil {
		b.WriteString(" over (")
		if len(w.PartitionBy) > 0 {
			b.WriteString("partition by ")
			renderList(b, w.PartitionBy)
			if len(w.OrderBy) > 0 {
				b.WriteByte(' ')
			}
		}
		if len(w.OrderBy) > 0 {
			b.WriteString("order by ")
			renderOrder(b, w.OrderBy)
		}
		b.WriteByte(')')
	}
}
