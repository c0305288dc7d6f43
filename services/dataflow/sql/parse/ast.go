package parse

// The tree: what Wololo's binder (services/dataflow/sql) reads. Every
// node carries the byte offset in the query text of its first token
// (Pos), so that an error about it can name its line and column.

// Select is one SELECT: its clauses as written, nil or empty when absent.
type Select struct {
	Pos      int    // of SELECT (of WITH, when the SELECT has one)
	With     *With  // nil: none
	Text     string // the query text of the whole SELECT (a subquery's, to name it)
	Distinct bool
	Items    []*Item
	From     []Table // the FROM list: more than one is a comma join
	Where    Expr
	GroupBy  []Expr
	Having   Expr
	OrderBy  []*OrderItem
	Limit    Expr // nil: none; LIMIT ALL is none too
	Offset   Expr // nil: none
	// The offsets of the clauses' keywords, -1 when absent.
	FromPos, WherePos, GroupPos, HavingPos, OrderPos, LimitPos, OffsetPos int

	// Set, when not nil, makes the Select a set operation (setop.go):
	// its rows are Set's, and of its own clauses only With, OrderBy,
	// Limit and Offset are written (the others are empty).
	Set *SetOp
}

// With is a SELECT's WITH clause: its common table expressions, in
// order (not recursive: the parser refuses WITH RECURSIVE).
type With struct {
	Pos  int
	CTEs []*CTE
}

// CTE is one common table expression, Name [(Columns)] AS (Select).
type CTE struct {
	Pos     int // of its name
	Name    string
	Columns []string // the column list, when written
	ColPos  int      // of the column list's "(", -1 when none
	Select  *Select
}

// Item is one SELECT item: Star (* or Table.*), else Expr and its Alias
// ("" when none).
type Item struct {
	Pos   int
	Star  bool
	Table string // of Table.*
	Expr  Expr
	Alias string
}

// OrderItem is one key of ORDER BY (or of a window's ORDER BY).
type OrderItem struct {
	Expr Expr
	Desc bool
	// Nulls is "first" or "last" when NULLS FIRST/LAST is written, else "".
	Nulls string
}

// Table is one item of FROM: a *TableName, a *Join or a *Derived.
type Table interface{ Position() int }

// TableName is a table by name, with its alias ("" when none).
type TableName struct {
	Pos    int
	Schema string // of schema.table; "" when none
	Name   string
	Alias  string
	// Columns is the alias's column list, t(a, b), when written.
	Columns []string
}

// Join is Left JOIN Right: Kind is "JOIN" (inner), "LEFT JOIN",
// "RIGHT JOIN", "FULL JOIN" or "CROSS JOIN", NATURAL before it when
// written; On or Using is its condition.
type Join struct {
	Pos         int // of the join's first keyword
	Kind        string
	Left, Right Table
	On          Expr
	Using       []string
	OnPos       int // of ON, -1 when none
}

// Derived is a subquery in FROM, with its alias ("" when none) and the
// alias's column list, t(a, b), when written (at ColPos, else -1).
type Derived struct {
	Pos     int
	Select  *Select
	Alias   string
	Columns []string
	ColPos  int
}

func (t *TableName) Position() int { return t.Pos }
func (t *Join) Position() int      { return t.Pos }
func (t *Derived) Position() int   { return t.Pos }

// Expr is an expression: one of the types below.
type Expr interface{ Position() int }

// Column is a column reference, [Table.]Name. Quoted says the name was
// written in double quotes.
type Column struct {
	Pos         int
	Table, Name string
	Quoted      bool
}

// LitKind is a literal's kind.
type LitKind int

const (
	NumberLit LitKind = iota // Text as written: digits, a point, an exponent
	StringLit                // Text is the value, quotes removed
	BoolLit                  // Text is "true" or "false"
	NullLit
)

// Literal is a constant as written.
type Literal struct {
	Pos  int
	Kind LitKind
	Text string
}

// Unary is Op X: Op is "-", "+" or "not".
type Unary struct {
	Pos int
	Op  string
	X   Expr
}

// Binary is L Op R: Op is "and", "or", a comparison (= <> < <= > >=; !=
// is read as <>), an arithmetic operator (+ - * / % ^), "||", "like",
// "ilike" (NOT LIKE is a Unary not over a like), or another operator as
// written.
type Binary struct {
	Pos   int // of L
	OpPos int
	Op    string
	L, R  Expr
}

// Is is X IS [NOT] What: What is "null", "true", "false", "unknown" or
// "distinct from" (then R is its right side).
type Is struct {
	Pos   int // of X
	IsPos int // of IS
	X     Expr
	Not   bool
	What  string
	R     Expr
}

// In is X [NOT] IN (List) or X [NOT] IN (Sub).
type In struct {
	Pos   int // of X
	InPos int // of IN (of NOT before it)
	X     Expr
	Not   bool
	List  []Expr
	Sub   *Select
}

// Between is X [NOT] BETWEEN Lo AND Hi.
type Between struct {
	Pos, OpPos int
	X, Lo, Hi  Expr
	Not        bool
}

// Case is CASE [Subject] WHEN ... THEN ... [ELSE Else] END.
type Case struct {
	Pos     int
	Subject Expr
	Whens   []When
	Else    Expr
}

// When is one WHEN Cond THEN Val of a CASE.
type When struct{ Cond, Val Expr }

// Call is a function call: Name(Args), Name(*) (Star),
// Name(DISTINCT Args), with FILTER (WHERE Filter) and OVER (Over).
type Call struct {
	Pos      int
	Name     string // lower case
	Args     []Expr
	Star     bool
	Distinct bool
	Filter   Expr
	Over     *Window
}

// Window is a call's OVER (PARTITION BY ... ORDER BY ...).
type Window struct {
	Pos         int
	PartitionBy []Expr
	OrderBy     []*OrderItem
}

// Cast is CAST(X AS Type) or X::Type; Type is the type's name in lower
// case, its words separated by one space ("double precision").
type Cast struct {
	Pos  int
	X    Expr
	Type string
}

// Subquery is a (SELECT ...) as a value.
type Subquery struct {
	Pos    int
	Select *Select
}

// Exists is EXISTS (SELECT ...).
type Exists struct {
	Pos    int
	Select *Select
}

func (e *Column) Position() int   { return e.Pos }
func (e *Literal) Position() int  { return e.Pos }
func (e *Unary) Position() int    { return e.Pos }
func (e *Binary) Position() int   { return e.Pos }
func (e *Is) Position() int       { return e.Pos }
func (e *In) Position() int       { return e.Pos }
func (e *Between) Position() int  { return e.Pos }
func (e *Case) Position() int     { return e.Pos }
func (e *Call) Position() int     { return e.Pos }
func (e *Cast) Position() int     { return e.Pos }
func (e *Subquery) Position() int { return e.Pos }
func (e *Exists) Position() int   { return e.Pos }

// Children are e's operands, in order; a subquery's SELECT is not one.
func Children(e Expr) []Expr {
	switch x := e.(type) {
	case *Unary:
		return []Expr{x.X}
	case *Binary:
		return []Expr{x.L, x.R}
	case *Is:
		if x.R != nil {
			return []Expr{x.X, x.R}
		}
		return []Expr{x.X}
	case *In:
		return append([]Expr{x.X}, x.List...)
	case *Between:
		return []Expr{x.X, x.Lo, x.Hi}
	case *Case:
		var out []Expr
		if x.Subject != nil {
			out = append(out, x.Subject)
		}
		for _, w := range x.Whens {
			out = append(out, w.Cond, w.Val)
		}
		if x.Else != nil {
			out = append(out, x.Else)
		}
		return out
	case *Call:
		out := append([]Expr(nil), x.Args...)
		if x.Filter != nil {
			out = append(out, x.Filter)
		}
		if x.Over != nil {
			out = append(out, x.Over.PartitionBy...)
			for _, o := range x.Over.OrderBy {
				out = append(out, o.Expr)
			}
		}
		return out
	case *Cast:
		return []Expr{x.X}
	}
	return nil
}
