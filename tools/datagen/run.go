package datagen

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/cli"
)

// Run is the `wololo datagen` subcommand. It parses args (without the
// subcommand name), writes the two files and prints a one-line summary to
// stdout. -h prints the usage to stdout and returns nil. Errors are
// returned, never turned into os.Exit.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo datagen", "usage: wololo datagen [--matches N] [--seed S] [--out DIR] [--shuffle-columns] [--crlf] [--quote-all]\n\n"+
		"Writes a synthetic Age of Empires II DE match dataset (matches.csv and\nmatch_players.csv) with the irregularities the queries must cope with.\n", stderr)
	matches := fs.Int64("matches", datagen.DefaultMatches, "number of distinct matches (about 3.2 player rows each)")
	seed := fs.Int64("seed", 1, "random seed: the same seed and flags give byte-identical files")
	out := fs.String("out", "data/full", "output folder, created if needed; gets matches.csv and match_players.csv")
	shuffle := fs.Bool("shuffle-columns", false, "write columns in a seed-determined order, plus one extra unused column per file")
	crlf := fs.Bool("crlf", false, "end lines with \\r\\n")
	quoteAll := fs.Bool("quote-all", false, "wrap every field in double quotes")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *matches <= 0 {
		return cli.Usagef(fs, "--matches must be a positive number of matches, got %d", *matches)
	}
	if *out == "" {
		return cli.Usagef(fs, "--out must name an output folder")
	}
	cfg := datagen.Config{Matches: *matches, Seed: *seed, ShuffleColumns: *shuffle, CRLF: *crlf, QuoteAll: *quoteAll}
	st, err := datagen.WriteDirContext(ctx, cfg, *out)
	if err != nil {
		return err
	}
	secs := st.Elapsed.Seconds()
	if secs <= 0 {
		secs = 1e-9
	}
	rows := st.MatchRows + st.Players
	_, err = fmt.Fprintf(stdout, "datagen: %d matches (%d match rows, %d player rows), %.1f MB in %s in %.2fs: %.2fM rows/s, %.1f MB/s\n",
		st.Matches, st.MatchRows, st.Players, float64(st.Bytes)/1e6, filepath.Clean(*out), secs,
		float64(rows)/secs/1e6, float64(st.Bytes)/1e6/secs)
	return err
}
