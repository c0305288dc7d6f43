package demo

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/cmdline/epochsplit"
	"github.com/wololo/wololo/services/cmdline/inputfile"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// clientTables are the --table flags as the client takes them.
func clientTables(given [][2]string) []client.Table {
	var out []client.Table
	for _, kv := range given {
		out = append(out, client.Table{Name: kv[0], Path: kv[1]})
	}
	return out
}

// runSQL runs the job's physical plan with sqlops.RunFeeds in this
// process on the tables (matches, match_players, then each --table), each
// streamed into it by an exec.CSVReader as the plan runs; holds each
// table's malformed records to the limit (failing as a job fails,
// cli.ErrJobFailed, naming the first); writes NAME.csv for each query into
// out (each atomically) and OUT/rejects.csv, and returns the job's
// summary as a gateway would report it. ctx done (Ctrl-C) stops it, soon,
// with an error wrapping ctx.Err().
func runSQL(ctx context.Context, job *sqljob.Job, rf runFiles, log hclog.Logger, stdout io.Writer) (*client.Summary, error) {
	log = log.With("job", "demo", "stage", job.Shape.Gateway.Name, "instance", "demo")
	fmt.Fprintf(stdout, "SQL job in this process (the SQL engine's runner): queries %s on %s and %s\n", strings.Join(queryNames(job), ", "), job.Shape.Gateway, job.Shape.Shard)
	start := time.Now()
	// The job's inputs, each with its index among a job's inputs (the
	// two files, then the tables): a job of tables only has no file.
	files, index := rf.tables, len(schema.Files)
	if rf.matches != "" {
		files, index = append([][2]string{{"matches", rf.matches}, {"match_players", rf.players}}, rf.tables...), 0
	}
	// Every table is read from the start, a few pieces ahead of the plan
	// at most (match_players' while the plan is given matches).
	read := job.Plan.Scanned()
	readers := make([]*tableFile, len(files))
	defer func() {
		for _, r := range readers {
			if r != nil {
				r.Close()
			}
		}
	}()
	var feeds []sqlops.Feed
	var runs []func() int
	for i, f := range files {
		var route func(header []string) (exec.PartBy, error)
		if rf.epochs == 0 { // a batch job: its rows parted by receiver as they are parsed
			route = func(header []string) (exec.PartBy, error) { return sqlops.RouteOf(job.Plan, f[0], header) }
		}
		r, err := openTable(f[1], read[f[0]], rf.epochs, rf.lastPercent, route)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", f[0], err)
		}
		readers[i] = r
		feed := sqlops.Feed{Table: f[0], Columns: r.Columns, Next: r.Next}
		if r.Parted() {
			feed.Part = r.Part
		}
		feeds = append(feeds, feed)
		runs = append(runs, r.Run)
	}
	var res *sqlops.Result
	var err error
	if rf.epochs > 0 {
		res, err = runEpochs(ctx, job, feeds, runs, rf.epochs, rf.memProfile, stdout)
	} else {
		res, err = runSpilling(ctx, job, feeds, rf.budget, log)
	}
	if err != nil {
		return nil, fmt.Errorf("run the plan: %w", err)
	}
	limit := schema.MalformedLimit(schema.DefaultMaxMalformed)
	if rf.maxMalformed != nil {
		limit = schema.MalformedLimit(*rf.maxMalformed)
	}
	nulls := nullCounts(res.Stats)
	sum := &client.Summary{JobID: "demo", Files: map[string]string{}}
	sum.Job = &wololov1.Job{JobId: "demo", State: wololov1.JobState_JOB_STATE_DONE, ResultRows: map[string]int64{}}
	for i, f := range files {
		// The tables the plan does not scan are read to be counted.
		for {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("table %s: %w", f[0], err)
			}
			b, err := readers[i].Next()
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", f[0], err)
			}
			if b == nil {
				break
			}
		}
		name := inputName(index+i, f[0])
		r := schema.FileReport{Missing: nulls[f[0]]}
		r.Rows, r.Malformed = readers[i].Counts()
		for _, rj := range readers[i].Rejects() {
			r.AddReject(rj.Offset, rejectReason[rj.Kind], rj.Head)
		}
		log.Info("table read", "table", f[0], "rows", r.Rows, "malformed", r.Malformed)
		if err := limit.CheckNamed(name, r); err != nil {
			log.Error("job failed", "error", err)
			return nil, cli.Mark(err, cli.ErrJobFailed)
		}
		addFileReport(sum.Job, index+i, name, r)
	}
	out := map[string][]byte{}
	for _, q := range job.Logical {
		data, ok := res.Files[q.Name]
		if !ok {
			return nil, fmt.Errorf("run the plan: no output of query %s", q.Name)
		}
		out[q.Name+".csv"] = data
		sum.Job.Queries = append(sum.Job.Queries, q.Name)
		sum.Job.ResultRows[q.Name+".csv"] = int64(schema.ResultRows(data))
	}
	if sum.Files, err = client.WriteResults(rf.out, out); err != nil {
		return nil, err
	}
	if sum.Rejects, _, err = client.WriteRejects(rf.out, sum.Job); err != nil {
		return nil, err
	}
	sum.Total = time.Since(start)
	log.Info("job done", "queries", strings.Join(queryNames(job), ","), "elapsed", sum.Total)
	return sum, nil
}

// queryNames are the job's queries' names, in order.
func queryNames(job *sqljob.Job) []string {
	var out []string
	for _, q := range job.Logical {
		out = append(out, q.Name)
	}
	return out
}

// inputName is how the job's report names its i-th table, as the
// gateway's does: the two files by their file names, the others "table
// NAME".
func inputName(i int, table string) string {
	if i < len(schema.Files) {
		return schema.File(i).String()
	}
	return "table " + table
}

// rejectReason is the report's word for each kind of malformed record.
var rejectReason = map[exec.RejectKind]string{
	exec.TooLong:    schema.RejectTooLong,
	exec.Quoting:    schema.RejectQuoting,
	exec.FieldCount: schema.RejectFieldCount,
}

// nullCounts are the values that read as NULL (missing or not of their
// type), by table and column, as the job's report counts them: each
// column once, however many scans read it.
func nullCounts(stats []exec.ColumnStats) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for _, st := range stats {
		n := st.Missing + st.Invalid
		if n == 0 {
			continue
		}
		if out[st.Table] == nil {
			out[st.Table] = map[string]int64{}
		}
		col := strings.TrimPrefix(st.Column, st.Table+".")
		out[st.Table][col] = max(out[st.Table][col], n)
	}
	return out
}

// tableFile is a table's file being read batch by batch.
type tableFile struct {
	*exec.CSVReader
	f io.Closer
}

// openTable starts reading a table's file batch by batch: the text of the
// columns named, the others empty (none kept for a table no scan reads a
// column of: its records are only checked and counted; exec.CSVReader).
// A gzip-compressed file is read as it is decompressed (inputfile). With
// epochs above 0, its records are cut into that many runs as it is read
// (exec.NewCSVReaderCut at epochsplit.Cuts). Else, when route (nil:
// none) says how, from the header, its records are parted by the
// receiving instance of their rows (exec.NewCSVReaderParted).
func openTable(path string, columns []string, epochs int, lastPercent float64, route func(header []string) (exec.PartBy, error)) (*tableFile, error) {
	src, err := inputfile.Open(path, nil, "")
	if err != nil {
		return nil, err
	}
	f, err := src.Reader(0)
	if err != nil {
		return nil, err
	}
	keep := append([]string{}, columns...) // not nil: nil keeps every column
	var r *exec.CSVReader
	if cuts := epochsplit.Cuts(src.Size(), epochs, lastPercent); cuts != nil || route == nil {
		r, err = exec.NewCSVReaderCut(f, schema.MaxRecordBytes, keep, 0, cuts)
	} else {
		r, err = exec.NewCSVReaderParted(f, schema.MaxRecordBytes, keep, 0, route)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &tableFile{r, f}, nil
}

// Close stops the reading and closes the file.
func (t *tableFile) Close() {
	t.CSVReader.Close()
	t.f.Close()
}

// checkTables refuses, as a usage error, a --table whose file is not
// there, before anything is read or run.
func checkTables(fs *flag.FlagSet, given [][2]string) error {
	for _, kv := range given {
		info, err := os.Stat(kv[1])
		if err == nil && !info.Mode().IsRegular() {
			err = fmt.Errorf("not a regular file")
		}
		if err != nil {
			return cli.Usagef(fs, "--table %s=%s: %v", kv[0], kv[1], err)
		}
	}
	return nil
}

// runSpilling runs the job's plan with sqlops.RunFeedsBudget, held to
// budget b, its state past b's spilled to a temporary directory, removed
// at the end; it logs where an operator first spills.
func runSpilling(ctx context.Context, job *sqljob.Job, feeds []sqlops.Feed, b sqlops.Budget, log hclog.Logger) (*sqlops.Result, error) {
	dir, err := os.MkdirTemp("", "wololo-demo-spill-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	b.SpillDir = dir
	if b.Pool != nil {
		// The run holds every instance: each is one of the pool's.
		for _, t := range []physical.Task{job.Plan.Gateway, job.Plan.Shard} {
			for i := range t.Replicas {
				b.Pool.Join(fmt.Sprintf("%s-%d", t.Name, i))
			}
		}
	}
	b.Spilled = func(where string, held int64) {
		log.Info("the job spills state to disk", "where", where, "state-bytes", held, "dir", dir)
	}
	return sqlops.RunFeedsBudget(ctx, job.Plan, feeds, b)
}
