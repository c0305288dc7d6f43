package demo

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wololo/wololo/services/base/atomicfile"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// sqlTables are the files of a job of SQL queries, by table name, in the
// order they are read: matches, match_players, then each --table.
func sqlTables(matches, players string, given [][2]string) [][2]string {
	return append([][2]string{{"matches", matches}, {"match_players", players}}, given...)
}

// runSQL runs the job's physical plan with sqlops.RunFeeds in this
// process on the tables, each streamed into it by an exec.CSVReader as
// the plan runs, in the order of files; writes NAME.csv for each query
// into out (each atomically), and prints what it read and wrote.
func runSQL(job *sqljob.Job, files [][2]string, out string, stdout io.Writer) error {
	fmt.Fprintf(stdout, "SQL job in this process (the SQL engine's runner): %d queries on %s and %s\n", len(job.Logical), job.Shape.Gateway, job.Shape.Shard)
	start := time.Now()
	// Every table is read from the start, a few pieces ahead of the plan
	// at most (match_players' while the plan is given matches).
	read := scanned(job.Plan)
	readers := make([]*tableFile, len(files))
	defer func() {
		for _, r := range readers {
			if r != nil {
				r.Close()
			}
		}
	}()
	var feeds []sqlops.Feed
	for i, f := range files {
		r, err := openTable(f[1], read[f[0]])
		if err != nil {
			return fmt.Errorf("table %s: %w", f[0], err)
		}
		readers[i] = r
		feeds = append(feeds, sqlops.Feed{Table: f[0], Columns: r.Columns, Next: r.Next})
	}
	res, err := sqlops.RunFeeds(job.Plan, feeds)
	if err != nil {
		return fmt.Errorf("run the plan: %w", err)
	}
	for i, f := range files {
		// The tables the plan does not scan are read to be counted.
		for {
			b, err := readers[i].Next()
			if err != nil {
				return fmt.Errorf("table %s: %w", f[0], err)
			}
			if b == nil {
				break
			}
		}
		rows, malformed := readers[i].Counts()
		fmt.Fprintf(stdout, "  %-18s rows read %d, malformed (skipped) %d\n", f[0], rows, malformed)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	var paths []string
	for _, q := range job.Logical {
		data, ok := res.Files[q.Name]
		if !ok {
			return fmt.Errorf("run the plan: no output of query %s", q.Name)
		}
		path := filepath.Join(out, q.Name+".csv")
		if err := atomicfile.Write(path, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		paths = append(paths, path)
		fmt.Fprintf(stdout, "  %-18s %6d rows  %s\n", q.Name+".csv", schema.ResultRows(data), path)
	}
	for _, path := range paths {
		if err := printHead(stdout, path, 8); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "\nelapsed: %s (tables read, plan run, results on disk)\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// scanned is the columns the plan's scans read, by table.
func scanned(p *physical.Plan) map[string][]string {
	cols := map[string][]string{}
	for _, o := range p.Ops {
		if o.Kind != plan.Scan {
			continue
		}
		for _, c := range o.Node.Output {
			if !slices.Contains(cols[o.Node.Table], c.Name) {
				cols[o.Node.Table] = append(cols[o.Node.Table], c.Name)
			}
		}
	}
	return cols
}

// tableFile is a table's file being read batch by batch.
type tableFile struct {
	*exec.CSVReader
	f *os.File
}

// openTable starts reading a table's file batch by batch: the text of the
// columns named, the others empty (none kept for a table no scan reads a
// column of: its records are only checked and counted; exec.CSVReader).
func openTable(path string, columns []string) (*tableFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	keep := append([]string{}, columns...) // not nil: nil keeps every column
	r, err := exec.NewCSVReader(f, schema.MaxRecordBytes, keep, 0)
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
