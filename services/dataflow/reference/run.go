package reference

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/dataflow/schema"
)

// WriteDir writes q1.csv..q4.csv into dir, creating it if needed.
func WriteDir(r Result, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range r.Files() {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Run is the `wololo reference` command.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo reference", "usage: wololo reference --matches FILE --players FILE --out DIR\n\n"+
		"Answers the four queries with the single-process reference evaluator.\n", stderr)
	matches := fs.String("matches", "", "path of matches.csv (required)")
	players := fs.String("players", "", "path of match_players.csv (required)")
	out := fs.String("out", "", "directory for q1.csv..q4.csv, created if needed (required)")
	maxRecord := fs.Int("max-record-bytes", MaxRecordBytes, "a data record longer than this is malformed (the gateway's --max-record-bytes)")
	if err := cli.Parse(fs, args); err != nil {
		return err // flag.ErrHelp for -h, after the usage was printed
	}
	if err := cli.Required(fs, "matches", "players", "out"); err != nil {
		return err
	}

	start := time.Now()
	res, err := evaluateFiles(ctx, *matches, *players, *maxRecord)
	if err != nil {
		return err
	}
	if err := WriteDir(res, *out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "reference evaluation done in %s\n", time.Since(start).Round(time.Millisecond))
	for _, f := range []struct {
		path string
		r    FileReport
	}{{*matches, res.Report.Matches}, {*players, res.Report.Players}} {
		fmt.Fprintf(stdout, "  %-18s rows read %d, malformed (skipped) %d\n", filepath.Base(f.path), f.r.Rows, f.r.Malformed)
	}
	files := res.Files()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(stdout, "  %-7s %6d rows %9d bytes  %s\n", name, schema.ResultRows(files[name]), len(files[name]), filepath.Join(*out, name))
	}
	return nil
}
