package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/tools/datagen"
)

// Defaults of the CLI.
const (
	DefaultDataset    = "data/chaos"
	DefaultGenMatches = 20_000
	DefaultOut        = "out/chaos"
	DefaultBatchRows  = 500
)

const usage = `usage: wololo chaos local [--matches F --players F] [--out DIR] [--kills N] [--seed S] [flags]

Starts the topology as OS processes on a fresh data directory, submits one
job, SIGKILLs --kills randomly chosen processes while it runs (every kind,
some after the upload finished), and exits 0 only if the four outputs are
byte-equal to the reference evaluator's. Without --matches/--players it
generates a dataset into data/chaos once.
`

// Run is the `wololo chaos` command.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "local" {
		fmt.Fprint(stderr, usage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return nil
		}
		return errors.New("want 'wololo chaos local [flags]'")
	}
	fs := flag.NewFlagSet("wololo chaos local", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage+"\nflags:\n")
		fs.PrintDefaults()
	}
	var o Options
	fs.StringVar(&o.Matches, "matches", "", "matches.csv (default: a generated dataset in --dataset)")
	fs.StringVar(&o.Players, "players", "", "match_players.csv (default: a generated dataset in --dataset)")
	fs.StringVar(&o.Out, "out", DefaultOut, "directory for q1.csv..q4.csv")
	fs.IntVar(&o.Kills, "kills", DefaultKills, "SIGKILLs to deliver during the job")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the kill schedule")
	fs.DurationVar(&o.Interval, "interval", DefaultInterval, "mean time between kills during the upload (after it: a burst with gaps of 1/20 to 1/5 of it)")
	fs.Int64Var(&o.UploadRate, "upload-rate", 0, "upload pace in bytes/s through the shaping proxy; 0 = fit the planned kills, -1 = no proxy")
	fs.IntVar(&o.UploadChunk, "upload-chunk", DefaultUploadChunk, "largest upload frame the proxy forwards, in bytes")
	fs.IntVar(&o.BatchRows, "batch-rows", DefaultBatchRows, "pass --batch-rows N to every process if the binary takes it (small batches: more commits for the kills to land between); 0 = their default")
	fs.StringVar(&o.Binary, "binary", "", "wololo binary for the processes (default: this one)")
	fs.StringVar(&o.TempDir, "tmp", "", "where to make the cluster's fresh data directory (default: the system's temp dir)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the cluster's data directory and logs even if the run passes")
	fs.DurationVar(&o.Timeout, "timeout", DefaultTimeout, "give up on the job after this long")
	fs.BoolVar(&o.DryRun, "dry-run", false, "send the null signal instead of SIGKILL: see when the kills would land, harm nothing")
	fs.BoolVar(&o.ForceMemory, "force-memory", false, "run even if the binary keeps no state on disk (to see what breaks)")
	topoPath := fs.String("topology", "", "topology JSON file (default: the embedded one)")
	dataset := fs.String("dataset", DefaultDataset, "where the generated dataset lives")
	gen := fs.Int64("gen-matches", DefaultGenMatches, "size of the generated dataset, in matches")
	verbose := fs.Bool("verbose", false, "log every start and restart of the local runner, not only deaths")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if (o.Matches == "") != (o.Players == "") {
		return errors.New("give both --matches and --players, or neither for the generated dataset")
	}
	if o.Matches == "" {
		var err error
		if o.Matches, o.Players, err = EnsureDataset(*dataset, *gen, 1, stdout); err != nil {
			return err
		}
	}
	if *topoPath != "" {
		top, err := deploy.Load(*topoPath)
		if err != nil {
			return err
		}
		o.Topology = top
	}
	level := hclog.Warn
	if *verbose {
		level = hclog.Info
	}
	o.Log = hclog.New(&hclog.LoggerOptions{Name: "chaos", Level: level, Output: stderr})
	o.Stdout, o.Progress = stdout, stderr
	_, err := Local(ctx, o)
	return err
}

// EnsureDataset generates a dataset of the given size into dir unless it is
// already there, and returns its two files.
func EnsureDataset(dir string, matches, seed int64, stdout io.Writer) (string, string, error) {
	m, p := filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv")
	if fileExists(m) && fileExists(p) {
		fmt.Fprintf(stdout, "chaos: using the dataset in %s\n", dir)
		return m, p, nil
	}
	fmt.Fprintf(stdout, "chaos: generating a %d-match dataset into %s (once)\n", matches, dir)
	if _, err := datagen.WriteDir(datagen.Config{Matches: matches, Seed: seed}, dir); err != nil {
		return "", "", fmt.Errorf("generate the chaos dataset: %w", err)
	}
	return m, p, nil
}

func fileExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Size() > 0
}
