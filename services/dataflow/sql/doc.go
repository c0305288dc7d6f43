// Package sql is the front end of Wololo's SQL engine: it parses a query, checks that it is inside the subset of
// docs/sql.md, binds its names against a Catalog (table -> column names,
// e.g. CSV headers), infers the kind each column is read as, and returns
// the logical plan (services/dataflow/sql/plan) that
// services/dataflow/sql/exec runs. Anything outside the subset, an unknown
// table or column, a type conflict or a syntax error is an *Error naming
// the construct and its line:column, never a wrong answer.
//
// The parser is services/dataflow/sql/parse: PostgreSQL's dialect (the
// one DuckDB reads, so that a query runs unchanged on both), into a tree
// of Wololo's own whose every node carries its byte offset, so that an
// Error names the line:column of the construct itself (its package doc
// says why this parser and not another, with the figures). The binders
// read that tree directly: its dozen node types are named for what they
// are, so there is no second tree to translate into.
//
// A query's cost is bounded before it is bound (limits.go, docs/sql.md
// "Limits"): parentheses nested deeper than MaxExprDepth are refused from
// the tokens before parsing, and expressions nested deeper than
// MaxExprDepth or of more than MaxExprNodes nodes in all after parsing.
// Compiling is linear in the query: each expression is rendered as text
// (to match a group key, to name a column) a bounded number of times,
// not once per level above it.
//
// A column's kind is its table's (kinds.go): the two input files' as
// docs/queries.md gives them, a job's --table files' text, a cast
// reading a text column as a number or a boolean; a comparison of two
// kinds is refused naming both sides. Tables Options do not type take
// the kinds their uses in the query give them (the tests' generated
// tables), text when nothing says otherwise; two uses that disagree are
// refused.
//
// FILTER (WHERE ...) and aggregates of DISTINCT (aggdistinct.go), OFFSET
// (offset.go) and the set operations UNION [ALL], INTERSECT and EXCEPT
// (setop.go) are bound onto the plan's operators (a CASE in the
// aggregate; two aggregates; the Limit's and RowNumber's Offset; a
// UnionAll under a Distinct or an aggregate of the whole row), so that
// the layers after the binder run them as any other plan.
// The joins of FROM (join.go) are bound left-deep, each a plan.Join of
// its type keyed by ON's equalities or USING's columns (several: one
// KEY() of them per side), USING's columns resolved as PostgreSQL's; a
// CROSS JOIN (and a comma join) is a join on a constant key, planned as
// a subquery's cross product (the right side broadcast). Casts that
// convert a number (to an integer type, to numeric(p, s): cast.go) are
// calls of the plan, as the functions are.
//
// Window functions (window.go) are bound where the SELECT list and ORDER
// BY call them, as references to the columns of plan.Window nodes that
// assemble stacks between the rows the clauses read (the FROM row, or the
// groups after HAVING) and the projection, one node per OVER clause; q4's
// ROW_NUMBER() of the query's order stays the RowNumber node after the
// sort and LIMIT.
// The subqueries of expressions, EXISTS, scalar subqueries and
// x [NOT] IN (SELECT ...) other than a top-level WHERE condition, are
// bound onto joins (subquery.go says how and why): a cross product with
// a one-row aggregate of the subquery, a mark join keyed by x. A
// correlated subquery is refused, naming its outer query's column.
//
// WITH and subqueries in FROM (with.go, derived.go) are bound as the
// SELECT they are, where they are read: a CTE's body once per reference,
// so that its plan is the inline one, a subtree per reference, placed
// on the cluster as any other.
//
// A SELECT is bound clause by clause, one binder per clause, each in a
// file of its concern (select.go lists them and stacks the plan's nodes);
// bind.go binds the expressions the clauses hold. The plan is the query
// as written: the rewrites that make it cheaper (filters pushed below
// joins, unread columns pruned) are services/dataflow/sql/rewrite's, and
// placing it on the cluster's tasks is services/dataflow/sql/physical's;
// services/dataflow/sql/sqljob chains the three for the gateway,
// `wololo explain` and `wololo demo`.
//
// The package imports the parser, plan and value; it does no I/O.
package sql
