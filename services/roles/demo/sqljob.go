package demo

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/wololo/wololo/services/base/atomicfile"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
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
	tables := map[string]*exec.Table{}
	for _, f := range files {
		t, err := readTable(f[1])
		if err != nil {
			return fmt.Errorf("table %s: %w", f[0], err)
		}
		tables[f[0]] = t
		fmt.Fprintf(stdout, "  %-18s rows read %d, malformed (skipped) %d\n", f[0], t.Rows, t.Malformed)
	}
	res, err := sqlops.Run(job.Plan, tables)
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

// readTable reads a table's file whole.
func readTable(path string) (*exec.Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := exec.ReadCSV(f, schema.MaxRecordBytes)
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
