package demo

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
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

// runSQL reads the tables and runs the job's physical plan on them with
// sqlops.Run in this process, writes NAME.csv for each query into out
// (each atomically), and prints what it wrote.
func runSQL(job *sqljob.Job, files [][2]string, out string, stdout io.Writer) error {
	fmt.Fprintf(stdout, "SQL job in this process (the SQL engine's runner): %d queries on %s and %s\n", len(job.Logical), job.Shape.Gateway, job.Shape.Shard)
	start := time.Now()
	// The tables are read at once, each by a goroutine of its own.
	read := scanned(job.Plan)
	got := make([]*exec.Table, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Go(func() { got[i], errs[i] = readTable(f[1], read[f[0]]...) })
	}
	wg.Wait()
	tables := map[string]*exec.Table{}
	var order []string // as a client uploads them: the two files, then the tables
	for i, f := range files {
		order = append(order, f[0])
		if errs[i] != nil {
			return fmt.Errorf("table %s: %w", f[0], errs[i])
		}
		t := got[i]
		tables[f[0]] = t
		fmt.Fprintf(stdout, "  %-18s rows read %d, malformed (skipped) %d\n", f[0], t.Rows, t.Malformed)
	}
	res, err := sqlops.Run(job.Plan, tables, order...)
	if err != nil {
		return fmt.Errorf("run the plan: %w", err)
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

// readTable reads a table's file whole: the text of the columns named
// (every one when none is), the others empty (exec.ReadCSVColumns).
func readTable(path string, columns ...string) (*exec.Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var keep []string
	if len(columns) > 0 {
		keep = columns
	}
	t, err := exec.ReadCSVColumns(f, schema.MaxRecordBytes, keep)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
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
