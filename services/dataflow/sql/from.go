package sql

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// The FROM clause: its tables, their columns as the query reads them
// (slots), and the scopes that column names resolve in.

// scanInfo is one table of a FROM clause: its scan node and the columns
// the query reads of it, in the order first met. A subquery in FROM or a
// CTE's reference is one too (derived): its node is the subquery's plan,
// whose columns are all its own, of the kinds vars.
type scanInfo struct {
	alias, table string
	names        []string // the catalog's columns (a subquery's output names)
	node         *plan.Node
	slots        []*slot
	offset       int // of its first column in the FROM clause's row

	derived bool
	vars    []*tvar // derived: its columns' kinds
}

// slot is one column of a table that the query reads: its kind, and the
// references to it, numbered once the scan's columns are (finishScans).
type slot struct {
	name string
	v    *tvar
	refs []*plan.Expr
	cast plan.Type // the kind a cast reads the column as, "" for its own
}

// fromPlan resolves the FROM clause: one table, or the joins of tables
// (a comma join FROM a, b, c is a CROSS JOIN b CROSS JOIN c).
func (lv *level) fromPlan(sel *parse.Select) (*plan.Node, error) {
	from := sel.From
	if len(from) == 0 {
		return nil, lv.err(sel.Pos, "SELECT without FROM", "a query reads one table or a join of two")
	}
	for _, t := range from[1:] { // FROM a, b: a CROSS JOIN b (join.go)
		if _, ok := t.(*parse.Join); ok {
			return nil, lv.err(t.Position(), "comma join", "the item after a comma is a table or a subquery: write the joins one after the other, a CROSS JOIN b JOIN c ON ..")
		}
	}
	item := from[0]
	for _, t := range from[1:] {
		item = &parse.Join{Pos: t.Position(), Kind: crossJoin, Left: item, Right: t, OnPos: -1}
	}
	if j, ok := item.(*parse.Join); ok {
		return lv.join(j) // join.go
	}
	s, err := lv.source(item)
	if err != nil {
		return nil, err
	}
	return s.node, nil
}

// source resolves one table of FROM: a CTE's name, a table's, or a
// subquery.
func (lv *level) source(t parse.Table) (*scanInfo, error) {
	switch x := t.(type) {
	case *parse.TableName:
		if x.Schema == "" {
			if s := lv.c.lookupCTE(x.Name); s != nil {
				return lv.cteRef(x, s)
			}
		}
		return lv.table(x)
	case *parse.Derived:
		return lv.derivedTable(x)
	}
	return nil, lv.err(t.Position(), "JOIN", "a join is of two tables (or subqueries): join a third in a subquery")
}

// table resolves one table of FROM against the catalog.
func (lv *level) table(t *parse.TableName) (*scanInfo, error) {
	if t.Schema != "" || len(t.Columns) > 0 {
		return nil, lv.err(t.Pos, "table reference", "only a table name and an alias are supported")
	}
	name := t.Name
	cols, ok := lv.c.cat[name]
	if !ok {
		msg := "no such table"
		if near := nearest(name, lv.c.tableNames()); near != "" {
			msg += fmt.Sprintf("; did you mean %s?", parse.Name(near))
		}
		return nil, lv.err(t.Pos, "table "+name, "%s", msg)
	}
	alias := name
	if t.Alias != "" {
		alias = t.Alias
	}
	if err := lv.newAlias(t.Pos, alias); err != nil {
		return nil, err
	}
	s := &scanInfo{alias: alias, table: name, names: cols, node: &plan.Node{Op: plan.Scan, Table: name}}
	lv.scans = append(lv.scans, s)
	lv.c.scans = append(lv.c.scans, s)
	return s, nil
}

// newAlias refuses a FROM clause naming two of its tables alias (a
// subquery without an alias names none).
func (lv *level) newAlias(pos int, alias string) error {
	for _, s := range lv.scans {
		if alias != "" && s.alias == alias {
			return lv.err(pos, "table "+alias, "named twice in FROM: give one an alias")
		}
	}
	return nil
}

// finishScans numbers the columns each scan reads and points the column
// references at them.
func (lv *level) finishScans() {
	offset := 0
	for _, s := range lv.scans {
		s.offset = offset
		if s.derived { // every column of the subquery's, in its order
			for _, sl := range s.slots {
				for _, e := range sl.refs {
					e.Col = offset + slices.Index(s.names, sl.name)
				}
			}
			offset += len(s.names)
			continue
		}
		// In the table's order, whatever order the query names them in.
		slices.SortStableFunc(s.slots, func(a, b *slot) int {
			return slices.Index(s.names, a.name) - slices.Index(s.names, b.name)
		})
		s.node.Output = make([]plan.Column, len(s.slots))
		for i, sl := range s.slots {
			s.node.Output[i] = plan.Column{Name: sl.name}
			for _, e := range sl.refs {
				e.Col = offset + i
			}
		}
		offset += len(s.slots)
	}
}

// column resolves a column name to its slot in this level's scans,
// creating the slot on first use.
func (lv *level) column(cn *parse.Column) (*slot, error) {
	if sub := lv.usingColumn(cn); sub != nil { // join.go
		c, ok := sub.(*parse.Column)
		if !ok {
			return nil, lv.err(cn.Pos, "column "+cn.Name, "the column of a FULL JOIN's USING is COALESCE of its two sides: group by it, or name a side's, t.%s", cn.Name)
		}
		cn = c
	}
	found, err := lv.resolve(cn)
	if err != nil {
		return nil, err
	}
	return lv.slot(found, cn.Name, ""), nil
}

// resolve is the table of this level's FROM clause that has column cn.
func (lv *level) resolve(cn *parse.Column) (*scanInfo, error) {
	name := cn.Name
	var found *scanInfo
	for _, s := range lv.scans {
		if cn.Table != "" && cn.Table != s.alias {
			continue
		}
		n := 0
		for _, c := range s.names {
			if c == name {
				n++
			}
		}
		if n > 1 {
			return nil, lv.err(cn.Pos, "column "+name, "table %s has two columns named %s", s.table, name)
		}
		if n == 1 {
			if found != nil {
				return nil, lv.err(cn.Pos, "column "+name, "ambiguous: name its table")
			}
			found = s
		}
	}
	if found == nil {
		return nil, lv.noColumn(cn)
	}
	return found, nil
}

// slot is the slot of column name of s read as kind cast ("": as its
// table's kind), made on first use. A column of a table is read as one
// kind everywhere in the statement (its one tvar, over its subqueries),
// but where a cast reads a text column as a number or a boolean
// (castColumn): that is a column of the scan of its own.
func (lv *level) slot(s *scanInfo, name string, cast plan.Type) *slot {
	for _, sl := range s.slots {
		if sl.name == name && sl.cast == cast {
			return sl
		}
	}
	v := &tvar{t: cast, what: "column " + name + "::" + string(cast)}
	if cast == "" {
		v = lv.kindOf(s, name)
	}
	sl := &slot{name: name, v: v, cast: cast}
	s.slots = append(s.slots, sl)
	return sl
}

// kindOf is the kind of column name of s: a subquery's column's, else
// the table column's, one for the whole statement (declared by its
// table, or inferred from its uses).
func (lv *level) kindOf(s *scanInfo, name string) *tvar {
	if s.derived {
		return s.vars[slices.Index(s.names, name)]
	}
	key := s.table + "." + name
	v, ok := lv.c.cols[key]
	if !ok {
		v = &tvar{}
		if t, ok := lv.c.declared(s.table, name); ok {
			v = &tvar{t: t, what: "column " + name}
		}
		lv.c.cols[key] = v
	}
	return v
}

// noColumn is the error of a column no table of the query has, with a
// hint: a name in double quotes that meant a text, a name in another
// case than the table's.
func (lv *level) noColumn(cn *parse.Column) *Error {
	if e := lv.correlated(cn); e != nil {
		return e
	}
	what := cn.Name
	if cn.Table != "" {
		what = cn.Table + "." + cn.Name
	}
	msg := "no such column"
	if cn.Quoted {
		msg += ` (a text is written in single quotes: '` + strings.ReplaceAll(cn.Name, "'", "''") + `'; "` + cn.Name + `" is a name)`
	}
	if c, s := lv.closest(cn); c != "" && strings.EqualFold(c, cn.Name) {
		msg += fmt.Sprintf(" (table %s has %s: unquoted names are lower case, quote it: %s)", s.table, c, parse.Name(c))
	} else if c != "" {
		msg += fmt.Sprintf("; did you mean %s?", parse.Name(c))
	}
	e := lv.err(cn.Pos, "column "+what, "%s", msg)
	if !cn.Quoted {
		// A job's checks name the file that lacks it; a quoted name
		// keeps the engine's error, whose hint says what MySQL's
		// "text" is in this dialect.
		e.Missing = cn.Name
	}
	return e
}

// closest is the column of the query's tables (of cn's table, when it
// names one) nearest to cn's name (nearest); "" when none is near.
func (lv *level) closest(cn *parse.Column) (string, *scanInfo) {
	best, bestD := "", -1
	var in *scanInfo
	for _, s := range lv.scans {
		if cn.Table != "" && cn.Table != s.alias {
			continue
		}
		if c := nearest(cn.Name, s.names); c != "" {
			if d := editDistance(strings.ToLower(c), strings.ToLower(cn.Name)); bestD < 0 || d < bestD {
				best, bestD, in = c, d, s
			}
		}
	}
	return best, in
}

// nearest is the name of names nearest to name: the same but for case,
// else the fewest edits, at most a third of its letters (one for a name
// of up to five); "" when none is that near (the first of equally near
// ones).
func nearest(name string, names []string) string {
	best, bestD := "", max(len(name)/3, 1)+1
	for _, c := range names {
		d := editDistance(strings.ToLower(c), strings.ToLower(name))
		if d == 0 {
			return c
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is Levenshtein's distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
