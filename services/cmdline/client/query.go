package client

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"google.golang.org/grpc"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
	sqlflags "github.com/wololo/wololo/services/cmdline/explain"
)

// `client query --job ID "SELECT ..."`: a one-off query over the rows a
// standing job's epochs published so far, answered from the input the
// gateway retains of them (QueryJob), without an upload: its CSV on
// stdout, or an aligned table when stdout is a terminal.

// Query answers sql over the standing job id's published epochs: the
// answer as CSV (a header row, then the rows), and the epochs it is over.
// A call that breaks is asked again: the gateway runs the query anew.
func (s *Session) Query(ctx context.Context, id, sql string) ([]byte, int64, error) {
	var answer bytes.Buffer
	var epochs int64
	err := s.queryCall(ctx, &wololov1.QueryJobRequest{JobId: id, Sql: sql}, answer.Reset, func(r *wololov1.QueryJobResponse) {
		answer.Write(r.Data)
		epochs = r.Epochs
	})
	return answer.Bytes(), epochs, err
}

// queryCall makes a QueryJob call, asked again when it breaks (start is
// called before each), and hands each of its answers to each.
func (s *Session) queryCall(ctx context.Context, req *wololov1.QueryJobRequest, start func(), each func(*wololov1.QueryJobResponse)) error {
	return s.retry(ctx, 5, func(ctx context.Context) error {
		start()
		stream, err := s.Jobs.QueryJob(ctx, req, grpc.WaitForReady(true))
		if err != nil {
			return err
		}
		for {
			r, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			each(r)
		}
	})
}

// printTable writes a CSV answer as a table: columns aligned, a rule
// under the header, the rows' count at the end.
func printTable(w io.Writer, answer []byte) error {
	r := csv.NewReader(bytes.NewReader(answer))
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		return fmt.Errorf("the answer is not CSV: %w", err)
	}
	if len(records) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	rule := make([]string, len(records[0]))
	for i, name := range records[0] {
		rule[i] = strings.Repeat("-", max(utf8.RuneCountInString(name), 1))
	}
	for _, rec := range append([][]string{records[0], rule}, records[1:]...) {
		fmt.Fprintln(tw, strings.Join(rec, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rows := len(records) - 1
	_, err = fmt.Fprintf(w, "(%d %s)\n", rows, map[bool]string{true: "row", false: "rows"}[rows == 1])
	return err
}

// splitQuery tells the query from the flags among args: a flag of fs
// (with its value, in the next argument unless given with "=" or a
// boolean), -h, or else the query, before or after the flags. The flag
// package would stop at the query, and read one that begins with a
// comment ("-- ...") as a flag.
func splitQuery(fs *flag.FlagSet, args []string) (flags, sql []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, valued := flagName(a)
		f := fs.Lookup(name)
		if f == nil && name != "h" && name != "help" {
			sql = append(sql, a)
			continue
		}
		flags = append(flags, a)
		if f == nil || valued || i+1 == len(args) {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, sql
}

// flagName is the name of the flag a is ("" if it is none: it does not
// begin with one or two dashes and a name), and whether a gives its
// value ("--job=ID").
func flagName(a string) (name string, valued bool) {
	rest, ok := strings.CutPrefix(a, "-")
	if !ok {
		return "", false
	}
	rest = strings.TrimPrefix(rest, "-")
	name, _, valued = strings.Cut(rest, "=")
	if name == "" || strings.ContainsAny(name, " \t\r\n") {
		return "", false
	}
	return name, valued
}

func runQuery(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo client query", "usage: wololo client query --job ID \"SELECT ...\" [flags]\n"+
		"       wololo client query --job ID --query NAME=F.sql [--query ...] [flags]\n\n"+
		"Answers one SQL query (docs/sql.md) over the rows of the standing job ID's epochs\n"+
		"published so far, from the input the gateway retains of them: nothing is uploaded\n"+
		"again. The answer goes to stdout as CSV (a header row, then the rows, as a job's\n"+
		"NAME.csv), or as an aligned table when stdout is a terminal; stderr says how many\n"+
		"epochs it is over. The query is not kept: it sees no later append. A query the\n"+
		"gateway refuses exits 4 with its message (a construct the SQL engine refuses names\n"+
		"its line:column), as do an unknown job, a batch job, one with no version yet, and\n"+
		"one whose input the gateway does not retain (--retain-input=false, or closed).\n\n"+
		"With --query NAME=F.sql (repeatable) and no SELECT, the queries are added to the open\n"+
		"job instead: their first version is computed from the rows appended so far (from the\n"+
		"retained input), then they are kept up with each append like the job's own, and\n"+
		"results, watch --answers and close show them as the job's from the epoch they were\n"+
		"added at. Returns once that first version is published.\n"+environment, stderr)
	gf := registerGateway(fs)
	id := fs.String("job", "", "the standing job (required)")
	added := sqlflags.RegisterQueryFlags(fs, "a query to add to the open job, NAME=FILE.sql (repeatable; no SELECT then)")
	flags, sql := splitQuery(fs, args)
	if err := cli.Parse(fs, flags); err != nil {
		return err
	}
	if err := cli.Required(fs, "job"); err != nil {
		return err
	}
	switch {
	case added.Given() && len(sql) > 0:
		return cli.Usagef(fs, "a one-off query or --query to add, not both")
	case added.Given():
	case len(sql) == 0:
		return cli.Usagef(fs, "the query is required: wololo client query --job ID \"SELECT ...\"")
	case len(sql) > 1:
		return cli.Usagef(fs, "one query, one argument (quote it): %q, then %q", sql[0], sql[1])
	case strings.TrimSpace(sql[0]) == "":
		return cli.Usagef(fs, "the query is empty")
	}
	if err := CheckServer(gf.server); err != nil {
		return err
	}
	gw, err := gf.open()
	if err != nil {
		return err
	}
	defer gw.Close()
	gw.Notify = stderr
	if added.Given() {
		if err := addQueries(ctx, gw, *id, added, stdout); err != nil {
			return explain(gf.server, err)
		}
		return nil
	}
	answer, epochs, err := gw.Query(ctx, *id, sql[0])
	if err != nil {
		return explain(gf.server, err)
	}
	fmt.Fprintf(stderr, "job %s: over epochs 1 to %d\n", *id, epochs)
	if IsTerminal(stdout) {
		return printTable(stdout, answer)
	}
	_, err = stdout.Write(answer)
	return err
}
