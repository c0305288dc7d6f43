package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// MaxRecordBytes is the contract's default bound on one data record: a
// longer record is malformed, skipped like one with the wrong number of
// fields.
const MaxRecordBytes = 1 << 20

const usage = `usage: duckdb-queries --matches F --players F --out DIR [--max-record-bytes N | --plain | --query NAME=FILE ...] [--memory-limit M]

Answers the four queries of docs/queries.md with DuckDB and writes
q1.csv..q4.csv into DIR (created if needed): exactly, with the contract's
value rules in SQL, or with --plain as a user would write them (read_csv,
try_cast, plain SQL; not exact on messy values). With --query NAME=FILE
(repeatable) it runs those query files instead, the text as it is, over
tables matches and match_players loaded as a user would (read_csv, the
numbers, booleans and duration cast with try_cast), and writes NAME.csv of
each. With --memory-limit M (DuckDB's memory_limit, such as 512MB) its
operators spill to a temporary directory past M, as Wololo's processes
do past their budget. The baselines of wololo bench.

flags:
`

// errUsage marks a wrong command line (exit status 2).
var errUsage = errors.New("wrong command line")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "duckdb-queries: %v\n", err)
		os.Exit(1)
	}
}

// run is the command: parse the flags, answer, print the summary line.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("duckdb-queries", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	var o Options
	fs.StringVar(&o.Matches, "matches", "", "path of matches.csv (required)")
	fs.StringVar(&o.Players, "players", "", "path of match_players.csv (required)")
	fs.StringVar(&o.Out, "out", "", "directory for q1.csv..q4.csv, created if needed (required)")
	fs.IntVar(&o.MaxRecordBytes, "max-record-bytes", MaxRecordBytes, "a data record longer than this is malformed (not with --plain)")
	fs.StringVar(&o.MemoryLimit, "memory-limit", "", "DuckDB's memory_limit, such as 512MB: past it its operators spill to a temporary directory (default: DuckDB's, 80% of the machine's memory)")
	fs.BoolVar(&o.Plain, "plain", false, "run the queries as a user would write them (plain.sql), not the contract's exact ones")
	fs.Func("query", "run the query of FILE, answering NAME.csv, over the plain load (repeatable; instead of the four)", func(s string) error {
		q, err := ParseQuery(s)
		if err == nil {
			o.Queries = append(o.Queries, q)
		}
		return err
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	maxSet := false
	fs.Visit(func(f *flag.Flag) { maxSet = maxSet || f.Name == "max-record-bytes" })
	user := len(o.Queries) > 0
	if fs.NArg() > 0 || o.Matches == "" || o.Players == "" || o.Out == "" || o.MaxRecordBytes < 2 || ((o.Plain || user) && maxSet) || (o.Plain && user) {
		fmt.Fprintln(stderr, "duckdb-queries: --matches, --players and --out are required, --max-record-bytes at least 2 and not with --plain or --query, --plain not with --query, and nothing else")
		fs.Usage()
		return errUsage
	}
	start := time.Now()
	sum, err := Answer(ctx, o)
	if err != nil {
		return err
	}
	kind := "exact"
	switch {
	case user:
		kind = fmt.Sprintf("%d user", len(o.Queries))
	case o.Plain:
		kind = "plain"
	}
	fmt.Fprintf(stderr, "duckdb-queries: DuckDB %s, %s queries, %d match rows and %d player rows loaded, answers in %s, %.2f s\n",
		sum.Version, kind, sum.MatchRows, sum.PlayerRows, o.Out, time.Since(start).Seconds())
	return nil
}
