package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/tools/compose"
)

// Defaults of the CLI.
const (
	DefaultDataset    = "data/chaos"
	DefaultGenMatches = 20_000
	DefaultOut        = "out/chaos"
)

const usage = `usage: wololo chaos local [--matches F --players F] [--out DIR] [--kills N] [--seed S] [--sql] [--query NAME=FILE.sql ...] [--standing [--epochs N]] [flags]
       wololo chaos docker [--matches F --players F] [--out DIR] [--kills N] [--project P] [--sql] [--query NAME=FILE.sql ...] [--standing [--epochs N]] [flags]
       wololo chaos swarm [--matches F --players F] [--out DIR] [--kills N] [--project P] [--port-base N] [--sql] [--query NAME=FILE.sql ...] [--standing [--epochs N]] [flags]
       wololo chaos election [--matches F --players F] [--out DIR] [--kills N] [--seed S] [--standing [--epochs N]] [flags]

local: starts the topology as OS processes on a fresh data directory, with
the masters doing every restart, submits one job, SIGKILLs --kills randomly
chosen processes while it runs (every kind, the leading master included,
some after the upload finished), and exits 0 only if the four outputs are
byte-equal to the reference evaluator's.

docker: the same against a deployed compose project (make up): containers
killed through the Docker Engine API, and one worker frozen with docker
pause until the masters notice and replace it.

swarm: the same against a swarm stack on this one-node swarm (make
swarm-up): the tasks' containers killed and paused, the masters replacing
them with forced service updates; the stack's ports published from
--port-base.

The job runs the four default queries as SQL (queries/q1.sql .. q4.sql),
as any job that gives none does. A job of its own SQL queries
(docs/sql.md): --query NAME=FILE.sql adds a query (repeatable), --sql the
four default queries and the user queries of tools/chaos/sql (maps: a join grouped by map; twice: two
semi-joins on different keys, a shuffle from shard to shard). The job
writes NAME.csv for each query; a default one must be byte-equal to the
reference evaluator's answer, any other to the SQL engine's answer in
this process on the same files and tasks.

election: starts the topology as OS processes with its masters, submits one
job, and SIGKILLs the leading master --kills times while it runs (sometimes
with a second master, sometimes right after its election); times every
failover until the live masters agree on a new acting leader, checks the
masters' Status and logs for two masters leading or acting at once, prints
the p50/p99/max failover, and exits 0 only with no violation, every
failover done, every killed master back and the four outputs byte-equal to
the reference evaluator's. With --docker, against a deployed compose project;
with --swarm, against a swarm stack (no --partition there).

--standing (every mode) makes the job a standing one (docs/standing.md):
both files cut into --epochs parts (default 4) at record boundaries in the
run's data directory, the job submitted --standing with the first, the
others appended one epoch each, then closed, the kills spread over the
epochs (while one uploads, while its version is made, between epochs),
the burst once the last epoch's input is whole. Besides the final results (in --out), every
version K (client results --epoch K, into --out/versions/K) and the
version each submit or append returned with must be byte-equal to the
answers over the rows of epochs 1..K. Disks are lost as for a batch job
(--disk-losses): a worker's lost store makes the gateway run the standing
job again from its copies of the epochs; a gateway's takes the copies and
the job with it, and the harness submits the job again and appends every
epoch again, as a client would, once per disk lost at most.

Without --matches/--players both generate a dataset into data/chaos once.
`

// Defaults of `wololo chaos docker`: containers take longer to come back
// than processes, so the kills are further apart.
const (
	DefaultDockerInterval = time.Second
	DefaultDockerKills    = 15
	DefaultDockerOut      = "out/chaos-docker"
	DefaultSwarmOut       = "out/chaos-swarm"
)

// Run is the `wololo chaos` command.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	mode := ""
	if len(args) > 0 {
		mode = args[0]
	}
	if mode == "election" {
		return runElection(ctx, args[1:], stdout, stderr)
	}
	if mode != "local" && mode != "docker" && mode != "swarm" {
		fmt.Fprint(stderr, usage)
		if mode == "-h" || mode == "--help" || mode == "help" {
			return nil
		}
		return errors.New("want 'wololo chaos local|docker|swarm|election [flags]'")
	}
	fs := cli.NewFlagSet("wololo chaos "+mode, usage, stderr)
	var o Options
	out, kills, interval := DefaultOut, DefaultKills, DefaultInterval
	switch mode {
	case "docker":
		out, kills, interval = DefaultDockerOut, DefaultDockerKills, DefaultDockerInterval
	case "swarm":
		out, kills, interval = DefaultSwarmOut, DefaultDockerKills, DefaultDockerInterval
	}
	fs.StringVar(&o.Matches, "matches", "", "matches.csv (default: a generated dataset in --dataset)")
	fs.StringVar(&o.Players, "players", "", "match_players.csv (default: a generated dataset in --dataset)")
	fs.StringVar(&o.Out, "out", out, "directory for the outputs: q1.csv..q4.csv, or NAME.csv for each query")
	fs.IntVar(&o.Kills, "kills", kills, "SIGKILLs to deliver during the job")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the kill schedule")
	fs.DurationVar(&o.Interval, "interval", interval, "mean time between kills during the upload (after it: a burst with gaps of 1/20 to 1/5 of it)")
	fs.Int64Var(&o.UploadRate, "upload-rate", 0, "upload pace in bytes/s through the shaping proxy; 0 = fit the planned kills, -1 = no proxy")
	fs.IntVar(&o.UploadChunk, "upload-chunk", DefaultUploadChunk, "largest upload frame the proxy forwards, in bytes")
	fs.StringVar(&o.TempDir, "tmp", "", "where to make the run's fresh data directory (default: the system's temp dir)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the run's data directory even if it passes")
	fs.DurationVar(&o.Timeout, "timeout", DefaultTimeout, "give up on the job after this long")
	fs.BoolVar(&o.DryRun, "dry-run", false, "send the null signal instead of SIGKILL: see when the kills would land, harm nothing")
	topoPath := fs.String("topology", "", "topology JSON file (default: the embedded one)")
	queryFlags := explain.RegisterQueryFlags(fs, "a SQL query of the job, NAME=FILE.sql (repeatable): the job runs its queries, NAME.csv each, instead of the four default ones")
	withSQL := fs.Bool("sql", false, "the job's queries: the four default ones as SQL and the user queries of tools/chaos/sql, before any --query")
	registerStanding(fs, &o.Standing, &o.Epochs)
	var verbose *bool
	var project, host *string
	var portBase *int
	var tlsFlags *tlsflags.Flags
	fs.IntVar(&o.DiskLosses, "disk-losses", -1, "how many of the kills also delete the victim's data directory (a container's: its volume, through its directory on this machine) before its restart (a gateway or worker; the gateway rebuilds a lost shard alone from the batches it kept, or runs the lost job again from its retained input, or the client submits it again); -1: a tenth of --kills")
	if mode == "local" {
		fs.StringVar(&o.Binary, "binary", "", "wololo binary for the processes (default: this one)")
		fs.IntVar(&o.Masters, "masters", -1, "masters doing the restarts, the leading one among the victims (default: the topology's); 0: the local runner restarts")
		verbose = fs.Bool("verbose", false, "log every start and restart of the local runner, not only deaths")
	} else {
		defProject := "wololo"
		if mode == "swarm" {
			defProject = compose.DefaultStackProject
			portBase = fs.Int("port-base", compose.DefaultPortBase, "the stack's published port of the gateway's public port (the masters' shifted alike)")
		}
		project = fs.String("project", defProject, "the compose project or swarm stack (its containers' wololo.project label)")
		host = fs.String("host", "127.0.0.1", "where the gateway's and the masters' published ports answer")
		tlsFlags = tlsflags.Register(fs, DefaultDockerTLSDir)
		o.Masters = -1
	}
	if err := parseInputs(fs, args[1:], &o.Matches, &o.Players, stdout); err != nil {
		return err
	}
	if err := checkEpochs(fs, o.Epochs); err != nil {
		return err
	}
	var err error
	if o.Queries, err = jobQueries(fs, *withSQL, queryFlags); err != nil {
		return err
	}
	if *topoPath != "" {
		top, err := deploy.Load(*topoPath)
		if err != nil {
			return err
		}
		o.Topology = top
	}
	level := hclog.Warn
	if verbose != nil && *verbose {
		level = hclog.Info
	}
	o.Log = hclog.New(&hclog.LoggerOptions{Name: "chaos", Level: level, Output: stderr})
	o.Stdout, o.Progress = stdout, stderr
	switch mode {
	case "docker":
		_, err = Docker(ctx, o, *project, *host, tlsFlags.DirOrInsecure())
	case "swarm":
		_, err = Swarm(ctx, o, *project, *host, tlsFlags.DirOrInsecure(), *portBase)
	default:
		_, err = Local(ctx, o)
	}
	return err
}

// runElection is `wololo chaos election`.
func runElection(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo chaos election", usage, stderr)
	var o ElectionOptions
	fs.StringVar(&o.Matches, "matches", "", "matches.csv (default: a generated dataset in --dataset)")
	fs.StringVar(&o.Players, "players", "", "match_players.csv (default: a generated dataset in --dataset)")
	fs.StringVar(&o.Out, "out", DefaultElectionOut, "directory for the outputs: q1.csv..q4.csv, or NAME.csv for each query")
	fs.IntVar(&o.Kills, "kills", DefaultElectionKills, "times to SIGKILL the leading master during the job")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the kinds of kill, the pauses and the second victims")
	fs.Float64Var(&o.Double, "double", DefaultDoubleKills, "fraction of kills that also SIGKILL a second, random master at the same moment")
	fs.Float64Var(&o.RightAfter, "right-after", DefaultRightAfter, "fraction of kills that hit the leader as soon as the masters agree on it (no pause)")
	fs.IntVar(&o.Masters, "masters", 3, "masters to run")
	fs.Int64Var(&o.UploadRate, "upload-rate", 0, "upload pace in bytes/s through the shaping proxy; 0 = about 2.5 s of upload per kill, -1 = no proxy")
	fs.DurationVar(&o.FailoverTimeout, "failover-timeout", DefaultFailoverTimeout, "give up on a failover, or on a killed master coming back, after this long")
	fs.StringVar(&o.Binary, "binary", "", "wololo binary for the processes (default: this one)")
	fs.StringVar(&o.TempDir, "tmp", "", "where to make the cluster's fresh data directory (default: the system's temp dir)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the cluster's data directory and logs even if the run passes")
	fs.DurationVar(&o.Timeout, "timeout", electionTimeout, "give up on the run (the job and the kills) after this long")
	verbose := fs.Bool("verbose", false, "log the local runner's events (deaths, starts), not only its errors")
	docker := fs.Bool("docker", false, "against a deployed compose project (make up) instead of a local cluster of its own")
	swarm := fs.Bool("swarm", false, "against a swarm stack on this one-node swarm (make swarm-up) instead of a local cluster of its own")
	project := fs.String("project", "", `with --docker or --swarm: the compose project or stack (its containers' wololo.project label; default "wololo", with --swarm "`+compose.DefaultStackProject+`")`)
	portBase := fs.Int("port-base", compose.DefaultPortBase, "with --swarm: the stack's published port of the gateway's public port")
	host := fs.String("host", "127.0.0.1", "with --docker or --swarm: where the gateway's and the masters' published ports answer")
	fs.DurationVar(&o.Partition, "partition", 0, "with --docker: end by cutting the leader off the network (docker network disconnect) for this long")
	topoPath := fs.String("topology", "", "with --docker: the deployed topology (default: the embedded one)")
	tlsFlags := tlsflags.Register(fs, DefaultDockerTLSDir)
	queryFlags := explain.RegisterQueryFlags(fs, "a SQL query of the job, NAME=FILE.sql (repeatable): the job runs its queries, NAME.csv each, instead of the four default ones")
	withSQL := fs.Bool("sql", false, "the job's queries: the four default ones as SQL and the user queries of tools/chaos/sql, before any --query")
	registerStanding(fs, &o.Standing, &o.Epochs)
	if err := parseInputs(fs, args, &o.Matches, &o.Players, stdout); err != nil {
		return err
	}
	if err := checkEpochs(fs, o.Epochs); err != nil {
		return err
	}
	var err error
	if o.Queries, err = jobQueries(fs, *withSQL, queryFlags); err != nil {
		return err
	}
	level := hclog.Error
	if *verbose {
		level = hclog.Info
	}
	o.Log = hclog.New(&hclog.LoggerOptions{Name: "chaos", Level: level, Output: stderr})
	o.Stdout, o.Progress = stdout, stderr
	if *docker && *swarm {
		return cli.Usagef(fs, "give --docker or --swarm, not both")
	}
	if !*docker && !*swarm {
		if o.Partition > 0 {
			return errors.New("--partition needs --docker: local processes share one network")
		}
		_, err := Election(ctx, o)
		return err
	}
	top, err := deploy.Select(*topoPath)
	if err != nil {
		return err
	}
	if *swarm {
		if *project == "" {
			*project = compose.DefaultStackProject
		}
		_, err = ElectionSwarm(ctx, o, top, *project, *host, tlsFlags.DirOrInsecure(), *portBase)
		return err
	}
	if *project == "" {
		*project = "wololo"
	}
	_, err = ElectionDocker(ctx, o, top, *project, *host, tlsFlags.DirOrInsecure())
	return err
}

// registerStanding registers --standing and --epochs, a run's job as a
// standing one (standing.go).
func registerStanding(fs *flag.FlagSet, standing *bool, epochs *int) {
	fs.BoolVar(standing, "standing", false, "the job is a standing one: the input cut into --epochs parts at record boundaries, submitted --standing with the first, the others appended, then closed; every version (results --epoch K) must equal the answers over the rows of epochs 1..K (no disk is lost)")
	fs.IntVar(epochs, "epochs", DefaultEpochs, "with --standing: the job's epochs (the submit's and the appends)")
}

// checkEpochs refuses an --epochs below 1 (0 would mean the default to
// Options, not to a user who typed it).
func checkEpochs(fs *flag.FlagSet, epochs int) error {
	if epochs < 1 {
		return cli.Usagef(fs, "--epochs %d: a standing job has at least 1 epoch", epochs)
	}
	return nil
}

// jobQueries are the queries of a run: with sql, SQLQueries, then each
// --query. A name given twice is a usage error.
func jobQueries(fs *flag.FlagSet, sql bool, given *explain.QueryFlags) ([]sqljob.Query, error) {
	var qs []sqljob.Query
	if sql {
		var err error
		if qs, err = SQLQueries(); err != nil {
			return nil, err
		}
	}
	more, err := given.Read()
	if err != nil {
		return nil, err
	}
	qs = append(qs, more...)
	if err := sqljob.CheckNames(qs); err != nil {
		return nil, cli.Usagef(fs, "%v", err)
	}
	return qs, nil
}

// parseInputs registers the generated dataset's flags, parses args and
// settles a run's two input files: both given (--matches, --players), or
// the generated dataset, made on first use.
func parseInputs(fs *flag.FlagSet, args []string, matches, players *string, stdout io.Writer) error {
	dataset := fs.String("dataset", DefaultDataset, "where the generated dataset lives")
	gen := fs.Int64("gen-matches", DefaultGenMatches, "size of the generated dataset, in matches")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if (*matches == "") != (*players == "") {
		return cli.Usagef(fs, "give both --matches and --players, or neither for the generated dataset")
	}
	if *matches != "" {
		return nil
	}
	var err error
	*matches, *players, err = EnsureDataset(*dataset, *gen, 1, stdout)
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
