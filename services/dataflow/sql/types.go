package sql

import (
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// tvar is a type variable: a column's kind, or an expression's, which
// uses unify. Each table column has one per query (over its
// subqueries too), so a column is read as one kind everywhere in it.
// A kind is a plan.Type, or durationKind.
type tvar struct {
	parent *tvar
	t      plan.Type // "" while unknown; on the root only
	what   string    // what set t, for a conflict's message ("column rating at 1:20")
}

func known(t plan.Type) *tvar { return &tvar{t: t} }

func (v *tvar) root() *tvar {
	for v.parent != nil {
		if v.parent.parent != nil {
			v.parent = v.parent.parent
		}
		v = v.parent
	}
	return v
}

// resolved is the kind v stands for: text when nothing constrained it.
func (v *tvar) resolved() plan.Type {
	if t := v.root().t; t != "" {
		return t
	}
	return plan.Text
}

// durationKind is the kind of a column DURATION_SECONDS reads: numbers
// (of seconds) read by plan.ReadDuration. A kind of the binder's only,
// apart from plan.Number so that no query reads a column both ways.
const durationKind plan.Type = "duration"

// column is the scanned column name of kind v: a duration's values are
// numbers, read by its rule.
func (v *tvar) column(name string) plan.Column {
	if t := v.resolved(); t != durationKind {
		return plan.Column{Name: name, Type: t}
	}
	return plan.Column{Name: name, Type: plan.Number, Read: plan.ReadDuration}
}

// unify makes a and b one kind, or says why they cannot be.
func unify(a, b *tvar) (ok bool, ta, tb plan.Type) {
	ra, rb := a.root(), b.root()
	if ra == rb {
		return true, "", ""
	}
	switch {
	case ra.t == "":
		ra.parent = rb
		if rb.what == "" {
			rb.what = ra.what
		}
	case rb.t == "" || ra.t == rb.t:
		rb.parent = ra
		if ra.what == "" {
			ra.what = rb.what
		}
	default:
		return false, ra.t, rb.t
	}
	return true, "", ""
}

// unify makes two kinds one, or refuses the construct at byte offset pos.
func (lv *level) unify(a, b *tvar, pos int, construct string) error {
	ok, ta, tb := unify(a, b)
	if ok {
		return nil
	}
	what := ""
	if w := a.root().what; w != "" {
		what = " (" + w + ")"
	} else if w := b.root().what; w != "" {
		what = " (" + w + ")"
	}
	return lv.err(pos, construct, "a %s is used as a %s%s", ta, tb, what)
}
