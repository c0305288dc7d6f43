// Package demo is `wololo demo`: a whole job of the default topology in
// one process. With no input flags it generates a 100,000-match dataset
// once into data/demo/ and runs on it.
//
// By default it runs the job's SQL queries (the --query ones, else the
// four default ones of queries/) in memory: compiled and planned as
// `wololo explain` does (services/cmdline/explain), run by the SQL
// engine's in-process runner (services/dataflow/sql/sqlops) on the tables
// streamed into it as it runs (exec.CSVReader: each file cut into pieces
// parsed side by side, a few pieces ahead of the plan), each query's
// NAME.csv written atomically; the files' malformed records are counted,
// listed in OUT/rejects.csv and held to --max-malformed as a job's are.
// With --grpc every instance is a node with its own gRPC server on a free
// loopback port, fed by the real client over gRPC, as a deployment is.
//
// It only wires existing parts (datagen, node.Cluster, client, explain,
// sqlops); it adds no logic of its own.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/memlimit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/cpuprofile"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/cmdline/logflags"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/roles/node"
)

// Defaults of the embedded demo.
const (
	DefaultMatches = 100_000
	DefaultData    = "data/demo"
	DefaultOut     = "out/demo"
)

// peakEvery is how often --memprofile looks at the live heap for a new
// peak to write the profile of.
const peakEvery = 200 * time.Millisecond

const usage = `usage: wololo demo [flags]
       wololo demo --query NAME=FILE.sql ... [--table NAME=F ...] [--explain] [flags]

Runs a whole job in this process and prints its answers: the four default
queries (the SQL files of queries/, docs/queries.md) unless --query gives
the job's own (docs/sql.md). In memory by default, by the SQL engine's
in-process runner: each query is compiled, the job's physical plan built
on the topology's tasks (--topology, --replicas), and every instance of
every task run in this process on the tables: matches (--matches or the
generated dataset), match_players (--players or the generated dataset)
and NAME for each --table NAME=F; with --table and neither --matches nor
--players, the job is of its tables only (nothing generated, a query of
matches or match_players refused). Any file may be gzip-compressed (read
as it is decompressed), and one may be - (standard input, spooled to a
temporary file removed at the end). Each query's rows go to --out as
NAME.csv. A query the SQL engine refuses exits 2 at once, with its file
and the construct's line:column, before any data is read. --explain
prints the plans (as wololo explain does) and exits without running.

With --epochs N the job runs as a standing job (docs/standing.md): each
table's records are cut into N contiguous runs (by where they start in
the file: the k-th run the records of its k-th N-th of the bytes, cut
as the file is read), appended one epoch at a time, and after each epoch every query has a new version of its answer,
kept up to date incrementally; a line per version gives each query's
rows, its change (+rows in -rows out) and what the epoch cost this
process (cpu: user and system time, reading its rows included; wall).
--last-epoch-percent P makes the last epoch P% of each table's bytes and
the N-1 before it the rest: its line is the cost of a small append to a
big standing job. The files written are the final answers, those of the
same job run once over all the rows.

With --grpc the job runs as a deployment runs it, every instance a gRPC
node on loopback, fed by the client. wololo local run and wololo client submit
take the same --query and --table to run a job in a cluster, durably and
exactly once.
`

// Run is the `wololo demo` command.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo demo", usage, stderr)
	matches := fs.String("matches", "", "matches.csv to run on (default: a generated dataset in --data)")
	players := fs.String("players", "", "match_players.csv to run on (default: a generated dataset in --data)")
	out := fs.String("out", DefaultOut, "directory for q1.csv..q4.csv (with --query: NAME.csv of each)")
	data := fs.String("data", DefaultData, "where the generated default dataset lives")
	gen := fs.Int64("gen-matches", DefaultMatches, "size of the generated default dataset, in matches")
	topoPath := fs.String("topology", "", "topology JSON file (default: the embedded one)")
	replicas := fs.Int("replicas", 0, "if set, run this many replicas of every task but the gateway (the shard task)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	memProfile := fs.String("memprofile", "", "write a heap profile to this file: with --epochs as the last version is out (the standing job's state live), else at the run's largest live heap (go tool pprof -sample_index=inuse_space)")
	logFlags := logflags.Register(fs, "warn")
	overGRPC := fs.Bool("grpc", false, "run every instance as a node with its own loopback gRPC server, fed by the client over gRPC (the deployment's path), instead of in memory")
	jobFlags := explain.RegisterJobFlags(fs)
	explainOnly := fs.Bool("explain", false, "print the SQL job's plans and exit without running")
	maxMalformedFlag := client.MaxMalformedFlag(fs)
	epochs := fs.Int("epochs", 0, "if set, run the job as a standing job whose input comes in this many appends, printing each version's row counts and its epoch's cost (in memory only)")
	lastPercent := fs.Float64("last-epoch-percent", 0, "with --epochs N (2 or more): the last epoch holds this percentage of each table's rows, the first N-1 the rest; its line's cpu is the cost of a small append to a big standing job")
	stateBytes := fs.Int64("job-max-state-bytes", 0, "with --query: bytes of state one instance of the job holds before its joins and aggregates spill to a temporary directory (default 768 MiB, as wololo worker's)")
	memBudget := fs.Int64("memory-budget", sqlops.DefaultMemoryBudget, "bytes of memory the run keeps within, as a worker does: the process's soft memory limit three quarters of it, and the job's state half of it less 64 MiB, shared among the instances the run holds (the gateway and every shard: an even share each, or what the others leave when that is more), each instance's joins and aggregates spilling to a temporary directory past its share (0: no budget, every instance within --job-max-state-bytes)")
	spillBytes := fs.Int64("job-max-spill-bytes", 0, "with --query: bytes of spill files one instance of the job writes; past it the job fails (default 16 GiB, as wololo worker's)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	maxMalformed, err := maxMalformedFlag()
	if err != nil {
		return err
	}
	if *epochs < 0 || *epochs > 0 && *overGRPC {
		return cli.Usagef(fs, "--epochs takes a number of appends above 0, and runs in memory: leave out --grpc")
	}
	if *lastPercent < 0 || *lastPercent > 100 || *lastPercent > 0 && *epochs < 2 {
		return cli.Usagef(fs, "--last-epoch-percent takes a percentage from 0 to 100, with --epochs 2 or more")
	}
	if (*matches == "") != (*players == "") {
		return cli.Usagef(fs, "give both --matches and --players, or neither for the generated dataset (or, with --table, a job of its tables only)")
	}
	top := deploy.Default()
	if *topoPath != "" {
		var err error
		if top, err = deploy.Load(*topoPath); err != nil {
			return err
		}
	}
	if *replicas > 0 {
		top = top.Uniform(*replicas)
	}
	queryFlags, _ := jobFlags.Given()
	remove, err := jobFlags.SpoolStdin(fs, matches, players)
	if err != nil {
		return err
	}
	defer remove()
	if err := checkTables(fs, jobFlags.Tables()); err != nil {
		return err
	}
	// With --table and neither file, the job is of its tables only (no
	// generated dataset): sqljob.Spec.NoFiles, as explain plans it.
	tablesOnly := *matches == "" && len(jobFlags.Tables()) > 0
	var job *sqljob.Job
	if !*overGRPC {
		plans := io.Discard
		if *explainOnly {
			plans = stdout
		}
		if job, err = jobFlags.Plan(fs, *matches, *players, top, plans); err != nil {
			return err
		}
		if *explainOnly {
			return explain.PrintPhysical(stdout, job)
		}
	} else if *explainOnly {
		return cli.Usagef(fs, "--explain prints the plans of the job run in memory; leave out --grpc")
	}
	if *matches == "" && !tablesOnly {
		if *matches, *players, err = ensureDataset(ctx, *data, *gen, stdout); err != nil {
			return err
		}
	}

	stopProfile, err := cpuprofile.Start(*cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	log := logFlags.Logger("wololo", stderr)
	start := time.Now()
	budget := sqlops.Budget{StateBytes: *stateBytes, SpillBytes: *spillBytes}
	if *memBudget > 0 {
		softLimit, ceiling, state := sqlops.MemoryBudget(*memBudget)
		if os.Getenv("GOMEMLIMIT") == "" {
			defer memlimit.Start(softLimit, ceiling, memlimit.DefaultHeadroom, log)()
		}
		budget.Pool = sqlops.NewStatePool(state)
	}
	rf := runFiles{*matches, *players, *out, jobFlags.Tables(), maxMalformed, *epochs, *lastPercent, *memProfile, budget}
	stopPeak := func() error { return nil }
	if *epochs == 0 { // else written as the last version is out (runEpochs)
		stopPeak = cpuprofile.WatchPeak(*memProfile, peakEvery)
	}
	var sum *client.Summary
	switch {
	case *overGRPC:
		queries, err := queryFlags.Read()
		if err != nil {
			return err
		}
		sum, err = runOverGRPC(ctx, top, rf, queries, log, stdout, stderr)
		if err != nil {
			return err
		}
	default:
		if sum, err = runSQL(ctx, job, rf, log, stdout); err != nil {
			return err
		}
	}
	if err := stopPeak(); err != nil {
		return err
	}
	client.PrintSummary(stdout, sum)
	for _, name := range client.ResultFiles(sum.Job) {
		if err := printHead(stdout, sum.Files[name], 8); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "\nelapsed: %s (graph start to results on disk)\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// runFiles is what a run reads and writes, and its limit on malformed
// records (nil: the default).
type runFiles struct {
	matches, players, out string
	tables                [][2]string // --table NAME=F
	maxMalformed          *float64
	epochs                int           // above 0: a standing job of this many appends (--epochs)
	lastPercent           float64       // above 0: the last append's share of the rows (--last-epoch-percent)
	memProfile            string        // a heap profile's file (--memprofile)
	budget                sqlops.Budget // the job's, per instance (--job-max-state-bytes, --job-max-spill-bytes, --memory-budget's Pool)
}

// addFileReport puts the report of the job's i-th input, named name, in
// its place in the job's report, as the gateway's: the two files, then
// the tables.
func addFileReport(job *wololov1.Job, i int, name string, r schema.FileReport) {
	fr := &wololov1.FileReport{File: name, Rows: r.Rows, Malformed: r.Malformed, Missing: r.Missing, OversizedAt: r.OversizedAt, Done: true}
	for _, rj := range r.Rejects {
		fr.Rejects = append(fr.Rejects, &wololov1.Reject{Offset: rj.Offset, Reason: rj.Reason, Head: rj.Head})
	}
	switch i {
	case int(schema.Matches):
		job.Matches = fr
	case int(schema.Players):
		job.Players = fr
	default:
		job.Tables = append(job.Tables, fr)
	}
}

// runOverGRPC starts every instance as a node on loopback and submits the
// files with the client.
func runOverGRPC(ctx context.Context, top deploy.Topology, rf runFiles, queries []sqljob.Query, log hclog.Logger, stdout, stderr io.Writer) (*client.Summary, error) {
	cluster, err := node.StartCluster(top, node.ClusterOptions{Log: log})
	if err != nil {
		return nil, fmt.Errorf("start the graph: %w", err)
	}
	defer cluster.Stop()
	fmt.Fprintf(stdout, "graph up: %d processes on loopback (mutual TLS, an in-memory CA), gateway at %s\n", len(cluster.Nodes), cluster.GatewayAddr())
	fmt.Fprintf(stdout, "tasks: %s\n", strings.Join(top.Tasks(), "; "))
	tlsConfig, err := cluster.ClientTLS("demo")
	if err != nil {
		return nil, err
	}
	return client.Submit(ctx, client.SubmitOptions{
		Server: cluster.GatewayAddr(), TLS: tlsConfig, Matches: rf.matches, Players: rf.players, Out: rf.out,
		Progress: stderr, Terminal: client.IsTerminal(stderr), MaxMalformed: rf.maxMalformed,
		Queries: queries, Tables: clientTables(rf.tables),
	})
}

// ensureDataset generates the default dataset unless it is already there;
// ctx done (Ctrl-C) stops the generation, leaving no dataset.
func ensureDataset(ctx context.Context, dir string, matches int64, stdout io.Writer) (string, string, error) {
	m, p := filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv")
	if fileExists(m) && fileExists(p) {
		fmt.Fprintf(stdout, "using the dataset in %s\n", dir)
		return m, p, nil
	}
	fmt.Fprintf(stdout, "generating a %d-match dataset into %s (once)\n", matches, dir)
	st, err := datagen.WriteDirContext(ctx, datagen.Config{Matches: matches, Seed: 1}, dir)
	if err != nil {
		return "", "", fmt.Errorf("generate the demo dataset: %w", err)
	}
	fmt.Fprintf(stdout, "generated %d match rows and %d player rows in %s\n", st.MatchRows, st.Players, st.Elapsed.Round(time.Millisecond))
	return m, p, nil
}

func fileExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Size() > 0
}

// printHead prints a result file's first lines.
func printHead(w io.Writer, path string, lines int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	rows := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	fmt.Fprintf(w, "\n== %s (%d rows)\n", filepath.Base(path), len(rows)-1)
	for i, r := range rows {
		if i > lines {
			fmt.Fprintf(w, "... %d more\n", len(rows)-i)
			break
		}
		fmt.Fprintln(w, r)
	}
	return nil
}
