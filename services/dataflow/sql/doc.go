// Package sql is the front end of Wololo's SQL engine: it parses a query, checks that it is inside the subset of
// docs/sql.md, binds its names against a Catalog (table -> column names,
// e.g. CSV headers), infers the kind each column is read as, and returns
// the logical plan (services/dataflow/sql/plan) that
// services/dataflow/sql/exec runs. Anything outside the subset, an unknown
// table or column, a type conflict or a syntax error is an *Error naming
// the construct and its line:column, never a wrong answer.
//
// The parser is vitess.io/vitess/go/vt/sqlparser: pure Go (the binary stays
// static for the FROM scratch image), maintained as part of Vitess, which
// runs it in production on MySQL traffic, and it parses every construct of
// the subset, window functions included, into a typed tree. Its dialect is
// MySQL's: names that are MySQL keywords (match, rank) are written in
// backquotes, and a double-quoted text is a string. Its tree carries no
// positions, so an Error's position is found by searching the query's
// tokens for the construct's first word from the start of the clause
// being checked (locator).
//
// A query's cost is bounded before it is bound (limits.go, docs/sql.md
// "Limits"): parentheses nested deeper than MaxExprDepth are refused from
// the tokens before parsing, and expressions nested deeper than
// MaxExprDepth or of more than MaxExprNodes nodes in all after parsing.
// Compiling is linear in the query: each expression is rendered as text
// (to match a group key, to name a column) a bounded number of times,
// not once per level above it.
//
// A column has one kind per query, inferred from its uses (compared with a
// number, summed, tested as a condition, passed to DURATION_SECONDS),
// text when nothing says otherwise; two uses that disagree are refused.
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
