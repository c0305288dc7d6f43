// Command duckdb-queries answers the four queries of docs/queries.md with
// DuckDB: the two baselines `wololo bench` measures every mode of Wololo
// against, exact DuckDB and plain DuckDB (--plain).
//
//	duckdb-queries --matches F --players F --out DIR [--plain]
//
// # Exact DuckDB
//
// It loads both CSV files into an in-memory DuckDB database with read_csv,
// every column as VARCHAR and found by its header name, so that the typing
// rules of the contract are applied in SQL (macros.sql: numbers, booleans,
// durations; anything else is NULL, a missing value), runs the four queries
// of queries.sql and writes q1.csv..q4.csv in the contract's output format.
// On success it prints one summary line on stderr and nothing else.
//
// Numbers are compared exactly: a value of at most 11 integer and 6
// fractional digits (leading and trailing zeros aside: most ratings) is a
// DECIMAL(18,6); a wider one (a mean rating such as 1523.3333333333333) is
// compared with an integer bound digit by digit in SQL (wl_text_gt), and
// in Q2's 10 × winner ≤ 7 × loser by wl_cmp, a scalar function written in
// Go over math/big (exact.go), which DuckDB calls only for the pairs that
// need it. A DECIMAL(38,18) would hold nearly every value, but DuckDB
// casts text to it about a hundred times slower than to DECIMAL(18,6),
// which made the load four fifths of the run: not a fair baseline.
//
// It is a module of its own (tools/duckdb/go.mod) because go-duckdb needs
// CGO and links the DuckDB library, while the wololo binary is static and
// CGO-free: the root module's `go build`, `go vet ./...` and `go test ./...`
// never see this directory. The program itself imports nothing of Wololo,
// so that it shares no code, and so no bug, with what it is compared to.
// Its test does import the reference evaluator (services/dataflow/reference) and
// the data generator (services/base/datagen), through `replace
// github.com/wololo/wololo => ../..` in go.mod: the comparison then always
// runs against the reference of the same checkout, in process, without
// building the whole wololo binary first. sqldiff_test.go, the
// differential test of the SQL engine (make sql-diff-test, make sql-diff),
// imports the engine (services/dataflow/sql/...) and its query generator
// the same way: random queries run by both, over the same files, typed by
// macros.sql's rules.
//
// Where DuckDB's CSV reader and the contract part (never on data that
// `wololo datagen` writes, and said here rather than papered over in Go):
//
//   - a value that is not valid UTF-8: DuckDB rejects the row, so it is
//     skipped like a malformed one, where the contract keeps the bytes;
//   - broken quoting (a quote inside an unquoted field, text after a closing
//     quote): DuckDB's strict reader recovers from it differently from the
//     contract, which skips exactly that record;
//   - a file mixing `\n` and `\r\n` line ends: DuckDB refuses the file, and
//     so does this command (with DuckDB's error);
//   - the bound on a record (--max-record-bytes, 1 MiB) is DuckDB's
//     max_line_size, which may count the line end differently, so a record
//     within a byte or two of the bound may be judged otherwise.
//
// # Query files
//
//	duckdb-queries --matches F --players F --out DIR --query NAME=FILE ...
//
// With --query (repeatable) it runs the query files instead of the four,
// their text as it is, and writes NAME.csv of each: the baseline of `wololo
// bench`'s analyst modes (queries/analyst, issue 41: Wololo on the same
// texts within 1x DuckDB's wall time in demo mode, 1.5x in durable local
// mode). The tables are matches and match_players as a DuckDB user loads
// them (user.sql): read_csv with every column as text, the rows it cannot
// read skipped, and the columns of docs/queries.md's kinds cast with
// try_cast (average_rating and rating to DOUBLE, mirror and winner to
// BOOLEAN, duration to INTERVAL), every other column text under its
// header's name, an empty field NULL. So its answers are plain DuckDB's,
// not exact: where try_cast reads what the value rules do not (yes, Y,
// NaN, +2248) they part, and a DOUBLE's sums and AVG are not exact
// decimals; the bench says, per file, which are byte-equal to Wololo's,
// which equal to a double's precision, which differ. A number is written
// without an exponent (a DOUBLE as its shortest text), NULL as an empty
// field. The rows DuckDB must give for those texts, with the contract's
// typing, are held by TestSQLAnalystQueriesAgainstDuckDB
// (analyst_test.go), not by this mode.
//
// # Plain DuckDB
//
// With --plain it runs plain.sql instead: the four queries as a DuckDB
// user would write them, the baseline the bench's targets are set on.
// read_csv with all_varchar and ignore_errors (the dialect and header
// sniffed; a row with the wrong number of fields skipped, as the contract
// skips it), try_cast to BOOLEAN, DOUBLE and INTERVAL, plain SQL; no
// header check, no macros, no wl_cmp. Its answers are not exact: DuckDB's
// casts are not the contract's value rules. TestPlainCasts pins the casts
// and TestPlainEdges one row per place they part; on data of `wololo
// datagen` they part in every query (TestPlainGenerated pins which). On
// the bench's full dataset (datagen defaults: 3,115,508 match rows,
// 9,887,678 player rows) it loads the same rows as the reference keeps,
// and against the reference's answers:
//
//   - q1.csv: 5,133 of the reference's 36,445 tokens missing, every one a
//     match whose duration is written "N days, H:MM:SS", which DuckDB's
//     INTERVAL cast does not read; 5 tokens more, ratings that DOUBLE
//     reads and the contract does not ("+2248", "2.251e+03", and "NaN",
//     which DuckDB orders above every number);
//   - q2.csv: 207 matches more than the reference's 89,584, none missing:
//     a winner or loser written yes, Y, F or N (140), which BOOLEAN reads;
//     a loser rated NaN (65), so that 10 × winner <= 7 × NaN holds; a
//     rating such as "2.747e+03" (2);
//   - q3.csv: every civilization's counts, 1,016 rows played and 645 wins
//     more over the 37: 436 rows of the 220 matches whose mirror is no, N
//     or F (false for DuckDB, missing for the contract), and 580 rows whose
//     winner is yes, no, Y, N, T or F; so every win_pct moves (Aztecs
//     50.0200 becomes 50.0300);
//   - q4.csv: the same five civilizations in the same order, each count 1
//     to 4 higher: ratings over 2000 written "+2500", "2500.", "2.5e+03" or
//     NaN (45 rows over every civilization).
//
// The percentage's rounding is not among them (both print the double
// 100 × wins / played with %.4f), nor are numbers too wide for a DOUBLE
// (2000.0000000000000000000000001 is 2000 to DuckDB, over 2000 to the
// contract: not in generated data), nor non-UTF-8 bytes (not generated
// either; DuckDB would skip the row).
package main
