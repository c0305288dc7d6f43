package main

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Options of one run.
type Options struct {
	Matches, Players string // the input files
	Out              string // the output directory
	// MaxRecordBytes bounds a data record; a longer one is skipped. The
	// plain queries ignore it (DuckDB's own max_line_size applies).
	MaxRecordBytes int
	// Plain runs plain.sql, the queries as a user would write them, instead
	// of the contract's exact ones; no header check either (DuckDB's binder
	// names a missing column).
	Plain bool
	// Queries, when there are any, are run instead of the four, each
	// answering NAME.csv, over tables matches and match_players loaded as
	// user.sql loads them (the plain load, typed by docs/queries.md's
	// kinds; no header check).
	Queries []Query
	// MemoryLimit, when not "", is DuckDB's memory_limit ("512MB"): past
	// it its operators spill to the temporary directory, as Wololo's
	// past its budget. Unset, DuckDB takes 80% of the machine's memory.
	MemoryLimit string
}

// statement is a query and the name of the file it answers.
type statement struct {
	file, text string
}

// Summary is what a run did.
type Summary struct {
	Version               string // DuckDB's
	MatchRows, PlayerRows int64  // well-formed data records loaded
}

//go:embed macros.sql
var macrosSQL string

//go:embed queries.sql
var queriesSQL string

// Answer loads both files into an in-memory DuckDB database, runs the four
// queries and writes q1.csv..q4.csv into o.Out: exactly, with the
// contract's value rules (macros.sql, queries.sql), or, with o.Plain, as a
// user would write them (plain.sql).
func Answer(ctx context.Context, o Options) (Summary, error) {
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = MaxRecordBytes
	}
	var mh, ph header
	if !o.Plain && len(o.Queries) == 0 {
		// Both headers are checked before any row is read.
		var err error
		if mh, err = readHeader(o.Matches, matchColumns); err != nil {
			return Summary{}, err
		}
		if ph, err = readHeader(o.Players, playerColumns); err != nil {
			return Summary{}, err
		}
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return Summary{}, fmt.Errorf("output directory: %w", err)
	}
	tmp, err := os.MkdirTemp("", "duckdb-queries-")
	if err != nil {
		return Summary{}, fmt.Errorf("DuckDB's spill directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	conn, closeDB, err := open(ctx, tmp, o.MemoryLimit)
	if err != nil {
		return Summary{}, err
	}
	defer closeDB()
	var sum Summary
	if err := conn.QueryRowContext(ctx, "SELECT version()").Scan(&sum.Version); err != nil {
		return sum, fmt.Errorf("DuckDB version: %w", err)
	}
	var stmts []statement
	matchTable, playerTable := "m", "p"
	switch {
	case len(o.Queries) > 0:
		stmts, err = loadUser(ctx, conn, o.Matches, o.Players, o.Queries)
		matchTable, playerTable = "matches", "match_players"
	case o.Plain:
		stmts, err = named(loadPlain(ctx, conn, o.Matches, o.Players))
	default:
		stmts, err = named(loadExact(ctx, conn, o, mh, ph))
	}
	if err != nil {
		return sum, err
	}
	if sum.MatchRows, err = count(ctx, conn, matchTable); err != nil {
		return sum, fmt.Errorf("counting %s: %w", o.Matches, err)
	}
	if sum.PlayerRows, err = count(ctx, conn, playerTable); err != nil {
		return sum, fmt.Errorf("counting %s: %w", o.Players, err)
	}
	for _, st := range stmts {
		if err := answerQuery(ctx, conn, st.text, filepath.Join(o.Out, st.file)); err != nil {
			return sum, fmt.Errorf("%s: %w", st.file, err)
		}
	}
	return sum, nil
}

// named pairs each statement of queries.sql or plain.sql with the file
// its "-- NAME.csv:" line names.
func named(queries []string, err error) ([]statement, error) {
	if err != nil {
		return nil, err
	}
	stmts := make([]statement, len(queries))
	for i, q := range queries {
		name, err := outputFile(q)
		if err != nil {
			return nil, fmt.Errorf("query %d: %w", i+1, err)
		}
		stmts[i] = statement{file: name, text: q}
	}
	return stmts, nil
}

// fileLine is the comment of a statement that names the file it answers:
// "-- NAME.csv: what it asks".
var fileLine = regexp.MustCompile(`(?m)^-- ([a-z0-9_]+\.csv):`)

// outputFile is the name of the file a statement of queries.sql or
// plain.sql answers, from its "-- NAME.csv:" line.
func outputFile(stmt string) (string, error) {
	m := fileLine.FindStringSubmatch(stmt)
	if m == nil {
		return "", fmt.Errorf("no \"-- NAME.csv:\" line names its output file")
	}
	return m[1], nil
}

// loadExact creates the contract's value rules, loads tables m and p with
// them and returns the four queries of queries.sql.
func loadExact(ctx context.Context, conn *sql.Conn, o Options, mh, ph header) ([]string, error) {
	if err := valueRules(ctx, conn); err != nil {
		return nil, err
	}
	if err := load(ctx, conn, matchesTable(o.Matches, mh, o.MaxRecordBytes)); err != nil {
		return nil, fmt.Errorf("loading %s: %w", o.Matches, err)
	}
	if err := load(ctx, conn, playersTable(o.Players, ph, o.MaxRecordBytes)); err != nil {
		return nil, fmt.Errorf("loading %s: %w", o.Players, err)
	}
	return strings.Split(queriesSQL, "\n-- next\n"), nil
}

// open starts an in-memory database spilling into tmp, within memory
// ("": DuckDB's default), and returns its one connection.
func open(ctx context.Context, tmp, memory string) (*sql.Conn, func(), error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, nil, fmt.Errorf("opening DuckDB: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("connecting to DuckDB: %w", err)
	}
	closeAll := func() {
		conn.Close()
		db.Close()
	}
	if _, err := conn.ExecContext(ctx, "SET temp_directory = "+sqlString(tmp)); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("setting DuckDB's temp_directory: %w", err)
	}
	if memory != "" {
		if _, err := conn.ExecContext(ctx, "SET memory_limit = "+sqlString(memory)); err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("setting DuckDB's memory_limit to %q: %w", memory, err)
		}
	}
	return conn, closeAll, nil
}

// valueRules creates the contract's value rules on conn: wl_cmp and the
// macros of macros.sql.
func valueRules(ctx context.Context, conn *sql.Conn) error {
	if err := duckdb.RegisterScalarUDF(conn, "wl_cmp", exactCmp{}); err != nil {
		return fmt.Errorf("registering wl_cmp: %w", err)
	}
	if _, err := conn.ExecContext(ctx, macrosSQL); err != nil {
		return fmt.Errorf("creating the macros: %w", err)
	}
	return nil
}

// count is the number of rows of a table.
func count(ctx context.Context, conn *sql.Conn, table string) (int64, error) {
	var n int64
	err := conn.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
	return n, err
}

// load runs one CREATE TABLE ... AS statement.
func load(ctx context.Context, conn *sql.Conn, stmt table) error {
	_, err := conn.ExecContext(ctx, stmt.create)
	return err
}

// table is a table to create from a CSV file.
type table struct {
	name   string
	create string
}

// matchesTable is table m: token, ladder, map, server (text, never NULL),
// mirror (boolean), average_rating (DECIMAL) and average_rating_text (the
// number's text) and duration_s (seconds).
func matchesTable(path string, h header, maxRecord int) table {
	return table{name: "m", create: fmt.Sprintf(`CREATE TABLE m AS SELECT
    coalesce(%s, '') AS token,
    coalesce(%s, '') AS ladder,
    coalesce(%s, '') AS map,
    coalesce(%s, '') AS server,
    wl_bool(%s) AS mirror,
    wl_decimal(%[6]s) AS average_rating,
    wl_number(%[6]s) AS average_rating_text,
    wl_duration(%s) AS duration_s
FROM %s`, h.col("token"), h.col("ladder"), h.col("map"), h.col("server"), h.col("mirror"),
		h.col("average_rating"), h.col("duration"), readCSV(path, h.width, maxRecord))}
}

// playersTable is table p: match and civ (text, never NULL), winner
// (boolean), rating (DECIMAL) and rating_text (the number's text).
func playersTable(path string, h header, maxRecord int) table {
	return table{name: "p", create: fmt.Sprintf(`CREATE TABLE p AS SELECT
    coalesce(%s, '') AS match,
    coalesce(%s, '') AS civ,
    wl_bool(%s) AS winner,
    wl_decimal(%[4]s) AS rating,
    wl_number(%[4]s) AS rating_text
FROM %s`, h.col("match"), h.col("civ"), h.col("winner"), h.col("rating"), readCSV(path, h.width, maxRecord))}
}

// readCSV is the read_csv call of a file whose header has width fields:
// nothing sniffed, every column VARCHAR (named c0, c1, ... in header
// order), and a record with another number of fields, or longer than
// maxRecord bytes with its line end, skipped (ignore_errors). An empty
// field is NULL, which is missing for every kind of value.
func readCSV(path string, width, maxRecord int) string {
	cols := make([]string, width)
	for i := range cols {
		cols[i] = fmt.Sprintf("'c%d': 'VARCHAR'", i)
	}
	return fmt.Sprintf(`read_csv(%s, columns = {%s}, header = true, auto_detect = false,
    delim = ',', quote = '"', escape = '"', ignore_errors = true, max_line_size = %d)`,
		sqlString(path), strings.Join(cols, ", "), maxRecord-1)
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// answerQuery runs one query and writes its rows as a CSV file under a
// header of its columns' names.
func answerQuery(ctx context.Context, conn *sql.Conn, query, path string) error {
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	var b strings.Builder
	writeRow(&b, cols)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	fields := make([]string, len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			if fields[i], err = fieldText(v); err != nil {
				return fmt.Errorf("column %s: %w", cols[i], err)
			}
		}
		writeRow(&b, fields)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// fieldText is a value of DuckDB as a CSV field: NULL empty, a boolean
// true or false, a number without an exponent (a DOUBLE its shortest
// text, a DECIMAL its digits at its scale, a HUGEINT, a SUM of integers,
// whole).
func fieldText(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32), nil
	case *big.Int:
		return x.String(), nil
	case duckdb.Decimal:
		return decimalText(x), nil
	case int64, int32, int16, int8, uint64, uint32, uint16, uint8:
		return fmt.Sprint(x), nil
	}
	return "", fmt.Errorf("a value of type %T, which no query here writes", v)
}

// decimalText is a DECIMAL's digits at its scale.
func decimalText(x duckdb.Decimal) string {
	return new(big.Rat).SetFrac(x.Value, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil)).FloatString(int(x.Scale))
}

// writeRow writes one CSV record ending in "\n"; a field is quoted only
// when it holds a comma, a double quote or a line break, its quotes
// doubled.
func writeRow(b *strings.Builder, fields []string) {
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		if strings.ContainsAny(f, ",\"\n\r") {
			b.WriteString(`"` + strings.ReplaceAll(f, `"`, `""`) + `"`)
		} else {
			b.WriteString(f)
		}
	}
	b.WriteByte('\n')
}
