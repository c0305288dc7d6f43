// Package sqlgen makes random test cases for the SQL engine: small tables
// as CSV text and a random query of the subset of docs/sql.md over them,
// generated together with its meaning, so that each case also carries the
// rows the query must return, computed by a naive evaluator (row at a time,
// over math/big.Rat values, formatted and ordered by docs/sql.md's rules:
// a group key's and a DISTINCT row's numbers in their normal form, rows
// equal by value ordered by their numbers' scales, so that the answer
// does not depend on the order of the rows).
//
// Two tests use it: services/dataflow/sql/sqlgen/oracle's property test
// compares the engine's logic (the oracle runs the plan with exec's
// operators) with the naive evaluator, and tools/duckdb's differential test
// compares it with DuckDB running the same query over the same files.
//
// The queries: WHERE conditions (comparisons, AND, OR, NOT, [NOT] IN
// lists, [NOT] BETWEEN, IS [NOT] NULL, booleans as they are or against
// TRUE/FALSE), arithmetic (+ - * and unary minus), CASE, COALESCE,
// NULLIF, DURATION_SECONDS, an inner
// join or a semi-join (IN (SELECT ...)), DISTINCT, GROUP BY a column or an
// expression (by itself, its position or its alias) with COUNT(*), COUNT, SUM, MIN, MAX (of numbers and texts),
// PERCENT and HAVING, ORDER BY positions ASC/DESC, LIMIT. With
// Options.Subqueries (GenerateWith), t is also read through a subquery
// in FROM or a CTE that filters it (WITH, a CTE reading an earlier one,
// column lists, a CTE read twice), u's semi-join set through a CTE and
// a join's u through a subquery grouping it by k (COUNT, SUM with
// HAVING, MAX);
// Generate leaves them out, so that its cases stay what they were.
// With Options.SetOps (setop.go), also FILTER (WHERE ...) on COUNT(*),
// SUM and MAX, COUNT/SUM/MIN of DISTINCT, OFFSET after the ORDER BY (with
// or without LIMIT), and two SELECTs joined by UNION ALL, UNION,
// INTERSECT or EXCEPT (t's rows of two conditions, or t's and u's).
// With Options.ExprSubqueries (exprsubquery.go), conditions and numbers
// also hold uncorrelated subqueries of u: [NOT] EXISTS, x [NOT] IN
// (SELECT ...) of texts or of numbers with u's NULLs (under AND, OR, NOT
// and CASE), and scalar subqueries of MAX, MIN, SUM or COUNT(*).
//
// With Options.Windows (window.go), also window functions: RANK,
// DENSE_RANK, ROW_NUMBER (ordered totally over the selected columns),
// COUNT, SUM, MIN and MAX OVER ([PARTITION BY ...] [ORDER BY ...]), over
// t's rows or over its groups by k.
//
// A case is a pure function of its seed. The tables are t(k, n, b, s, d) and
// u(k, m); their values include missing ones, bytes that are not UTF-8,
// numbers wider than a double and texts with commas and quotes. Identifiers
// are plain lower-case words that are keywords of neither Wololo's nor
// DuckDB's grammar (PostgreSQL's), and Query is the one text both run:
// its ORDER BY ends with every output column, so that the order
// docs/sql.md defines is the one DuckDB gives (NULL sorts last in both),
// and its one integer literal wider than a BIGINT is written with a
// decimal point (wideInt says why).
//
// The evaluator bounds numbers as docs/sql.md "Numbers" does: a number
// read, computed or summed (the total) past 38 digits, those after the
// point included, is NULL; products of the tables' widest values (21 to
// 23 digits) go past it.
//
// What the generator leaves out, and why: `/` and AVG (DuckDB divides
// decimals in double precision, ours rounds exactly to the dividend's scale
// plus 4, docs/sql.md "Numbers": a real difference of the dialects, not a
// bug of either). The naive evaluator covers them nowhere either.
//
// The package imports nothing of this module: it is an oracle, and shares
// no code with the engine it checks.
package sqlgen
