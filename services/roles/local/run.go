package local

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/base/cpuprofile"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/cmdline/inputfile"
	"github.com/wololo/wololo/services/cmdline/logflags"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
)

const usage = `usage: wololo local [flags]            run the topology as OS processes until interrupted
       wololo local run [--matches F --players F] --out DIR [--query NAME=FILE.sql ... [--table NAME=F ...]] [--epochs N] [--epoch-every D] [flags]
                                          start it, run one job, print time and memory, stop

Every instance runs as its own 'wololo gateway' or 'wololo worker' process
on 127.0.0.1 with its data in DIR/<instance>, its log in DIR/<instance>.log
and its address in DIR/peers.json. The topology's masters (3 by default)
run beside them as 'wololo master' processes: they elect a leader, which
restarts any process that dies or goes silent, masters included. With
--masters 0 the runner restarts its children itself.

One runner per data directory: a second one on it is refused at once,
naming the first one's pid (DIR/local.lock). A port in use fails the start,
naming the port: choose others with --base-port N or --free-ports.

'local run' submits its job as 'wololo client submit' does: the four
default queries (q1.csv..q4.csv), or with --query NAME=FILE.sql (repeatable)
the job's own SQL queries (docs/sql.md), NAME.csv of each; --table NAME=F
(repeatable) adds the CSV file F as table NAME of the queries; --explain
prints the plans the gateway made of them before the upload. Without
--matches and --players the job is of its --table files only. Any file
may be gzip-compressed (its decompressed CSV is uploaded), and one may be
- (standard input, spooled to a temporary file removed at the end).

With --epochs N the job is a standing one (docs/standing.md): the files
(and tables) are cut into N contiguous runs of records, the first
submitted with --standing, each next one appended; a line per version
gives each query's rows and its change (rows in, rows out), as
'wololo demo --epochs N' prints them, and when it came out (the time
since the upload began); then the job is closed and its results, a batch
job's over all the rows, written to --out. With --epoch-every DURATION
the gateway also cuts an epoch every DURATION of input while a file
uploads (client submit --epoch-every): alone, the files are one upload
whose versions come out while it runs.
`

// common are the flags both forms take.
type common struct {
	data, topology, binary      string
	basePort, masters           int
	freePorts, follow, insecure bool
	log                         *logflags.Flags
	memBudget                   int64
}

func (c *common) register(fs *flag.FlagSet, defaultData string) {
	fs.StringVar(&c.data, "data", defaultData, "data directory: DIR/<instance> data, DIR/<instance>.log logs, DIR/peers.json")
	fs.StringVar(&c.topology, "topology", "", "topology JSON file (default: the embedded one)")
	fs.IntVar(&c.basePort, "base-port", 0, "first port (default: the topology's base_port)")
	fs.BoolVar(&c.freePorts, "free-ports", false, "use free loopback ports instead of the topology's")
	fs.StringVar(&c.binary, "binary", "", "wololo binary to run the processes with (default: this one)")
	c.log = logflags.Register(fs, "info")
	fs.Lookup("log-level").Usage = "the processes' log level: trace, debug, info, warn, error (the runner's own is info)"
	fs.Lookup("log-json").Usage = "log one JSON object per line: the runner here, and every process it starts (passed on as --log-json, and its DIR/<instance>.log all JSON)"
	fs.IntVar(&c.masters, "masters", -1, "masters to run (default: the topology's); 0: the runner restarts processes itself")
	fs.BoolVar(&c.follow, "follow", false, "also print every process's log lines here, prefixed with its instance")
	fs.BoolVar(&c.insecure, "insecure", false, "run every process without TLS or identity checks: for debugging only")
	fs.Int64Var(&c.memBudget, "memory-budget", 0, "bytes of memory each gateway and worker process keeps within, passed on as its --memory-budget (default: theirs, 512 MiB)")
}

func (c *common) options(stdout, stderr io.Writer) (Options, error) {
	runner := logflags.Flags{Level: "info", JSON: c.log.JSON}
	o := Options{Binary: c.binary, DataDir: c.data, BasePort: c.basePort, FreePorts: c.freePorts, LogLevel: c.log.Level, LogJSON: c.log.JSON,
		Insecure: c.insecure, Log: runner.Logger("local", stderr)}
	if c.memBudget > 0 {
		o.ExtraArgs = append(o.ExtraArgs, "--memory-budget", strconv.FormatInt(c.memBudget, 10))
	}
	if c.topology != "" {
		top, err := deploy.Load(c.topology)
		if err != nil {
			return o, err
		}
		o.Topology = top
	}
	o.Masters = c.masters
	if c.masters < 0 {
		o.Masters = deploy.Default().Masters
		if c.topology != "" {
			o.Masters = o.Topology.Masters
		}
	}
	if c.follow {
		o.Stdout = stdout
	}
	return o, nil
}

// Run is the `wololo local` command.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "run" {
		return runJob(ctx, args[1:], stdout, stderr)
	}
	fs := cli.NewFlagSet("wololo local", usage, stderr)
	var c common
	c.register(fs, DefaultDataDir)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	o, err := c.options(stdout, stderr)
	if err != nil {
		return err
	}
	cl, err := Start(ctx, o)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	fmt.Fprintf(stdout, "wololo local: %d processes up; gateway listening on %s\n", len(cl.Instances()), cl.GatewayAddr())
	if cl.TLSDir() == "" {
		fmt.Fprintf(stdout, "  INSECURE: no TLS, no identities (--insecure)\n")
		fmt.Fprintf(stdout, "  submit with: wololo client submit --insecure --server %s --matches F --players F --out DIR\n", cl.GatewayAddr())
	} else {
		fmt.Fprintf(stdout, "  submit with: wololo client submit --tls-dir %s --server %s --matches F --players F --out DIR\n", cl.TLSDir(), cl.GatewayAddr())
		fmt.Fprintf(stdout, "  CA and credentials (client, operator): %s; another client: wololo certs client --dir %s --name NAME\n", cl.TLSDir(), cl.TLSDir())
	}
	fmt.Fprintf(stdout, "  data and logs: %s/<instance>{,.log}; peers: %s\n", cl.DataDir(), cl.PeersFile())
	top := "--tls-dir " + cl.TLSDir()
	if cl.TLSDir() == "" {
		top = "--insecure"
	}
	fmt.Fprintf(stdout, "  watch it: %s (the web page, the operator's: the address carries operator.token; every process's /metrics on its admin port, job labels with the token as Authorization: Bearer), or wololo top --server %s %s\n", cl.DashboardURL(), cl.GatewayAddr(), top)
	fmt.Fprintf(stdout, "  Ctrl-C stops every process.\n")
	<-cl.Done() // ctx cancelled (SIGTERM/Ctrl-C) → Start's watcher stops the cluster
	if err := cl.Stop(); err != nil {
		fmt.Fprintf(stderr, "wololo local: %v\n", err)
	}
	return nil
}

// runJob is `wololo local run`.
func runJob(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo local run", usage, stderr)
	var c common
	c.register(fs, "")
	matches := fs.String("matches", "", "path of matches.csv (with --players; none: a job of --table files only)")
	players := fs.String("players", "", "path of match_players.csv (with --matches)")
	out := fs.String("out", "", "directory for the results, q1.csv..q4.csv or NAME.csv of each --query (required)")
	queryFlags := explain.RegisterQueryFlags(fs, "a SQL query of the job, NAME=FILE.sql: its rows are written to NAME.csv (repeatable; default: the four default queries)")
	tableFlags := explain.RegisterTableFlags(fs, "another table of the --query queries, NAME=F: F's header row names its columns (repeatable)")
	printPlans := fs.Bool("explain", false, "print the plans the gateway made of the job's queries (the --query ones, else the four default ones) before uploading")
	keep := fs.Bool("keep", false, "keep the data directory (a fresh temporary one unless --data is given)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of this process (the runner and the submitting client) to this file")
	maxMalformedFlag := client.MaxMalformedFlag(fs)
	epochs := fs.Int("epochs", 0, "run the job as a standing job fed in N appends, printing each version's rows (0: a batch job)")
	epochEvery := fs.Duration("epoch-every", 0, "run the job as a standing job whose uploads the gateway also cuts into an epoch every DURATION of input (client submit --epoch-every), printing each version's rows and when it came out (with --epochs: of each append)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *epochs < 0 {
		return cli.Usagef(fs, "--epochs %d: a number of appends, at least 1", *epochs)
	}
	if err := client.CheckEpochEvery(*epochEvery); err != nil {
		return cli.Usagef(fs, "%v", err)
	}
	if *epochEvery > 0 && *epochs == 0 {
		*epochs = 1 // one upload, cut by the gateway
	}
	if err := client.CheckPair(fs, *matches, *players); err != nil {
		return err
	}
	if err := cli.Required(fs, "out"); err != nil {
		return err
	}
	maxMalformed, err := maxMalformedFlag()
	if err != nil {
		return err
	}
	if len(tableFlags.List()) > 0 && !queryFlags.Given() {
		return cli.Usagef(fs, "--table is for the tables of --query queries")
	}
	queries, err := queryFlags.Read()
	if err != nil {
		return err
	}
	var tables []client.Table
	for _, kv := range tableFlags.List() {
		tables = append(tables, client.Table{Name: kv[0], Path: kv[1]})
	}
	if *matches == "" && *players == "" && len(tables) == 0 {
		return cli.Usagef(fs, "give --matches and --players, or --table files of --query queries (a job of tables only)")
	}
	if err := client.CheckInputs(client.SubmitOptions{Matches: *matches, Players: *players, Tables: tables}); err != nil {
		return cli.Usagef(fs, "%v", err)
	}
	// Standard input is read once, here: the job (and its --epochs
	// split) reads the spool.
	paths := []*string{matches, players}
	for i := range tables {
		paths = append(paths, &tables[i].Path)
	}
	removeSpool, err := inputfile.SpoolStdin(paths, nil, "")
	if err != nil {
		return cli.Usagef(fs, "%v", err)
	}
	defer removeSpool()
	for _, t := range tables {
		if _, err := os.Stat(t.Path); err != nil {
			return cli.Usagef(fs, "--table %s=%s: %v", t.Name, t.Path, err)
		}
	}
	var plans io.Writer
	if *printPlans {
		plans = stdout
	}
	stopProfile, err := cpuprofile.Start(*cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	temp := c.data == ""
	if temp {
		dir, err := os.MkdirTemp("", "wololo-local-")
		if err != nil {
			return err
		}
		c.data = dir
	}
	o, err := c.options(stdout, stderr)
	if err != nil {
		return err
	}
	// A temporary data directory goes when the run is interrupted (it
	// holds nothing to resume from: the cluster is stopped, and the next
	// run makes another) or fails to start.
	removeTemp := func() {
		if temp && !*keep {
			os.RemoveAll(c.data)
		}
	}
	start := time.Now()
	cl, err := Start(ctx, o)
	if err != nil {
		removeTemp()
		return err
	}
	up := time.Since(start)
	fmt.Fprintf(stdout, "%d processes up in %s; gateway at %s; logs in %s\n", len(cl.Instances()), up.Round(time.Millisecond), cl.GatewayAddr(), cl.DataDir())
	tlsConfig, err := cl.ClientTLS(tlsflags.DefaultClient)
	if err != nil {
		cl.Stop()
		return err
	}
	so := client.SubmitOptions{
		Server: cl.GatewayAddr(), TLS: tlsConfig, Matches: *matches, Players: *players, Out: *out,
		Progress: stderr, Terminal: client.IsTerminal(stderr), MaxMalformed: maxMalformed,
		Queries: queries, Tables: tables, Explain: plans,
		Rebuilds: client.DefaultRebuilds, Notices: stderr, Again: again(cl),
		EpochEvery: *epochEvery,
	}
	var sum *client.Summary
	if *epochs > 0 {
		sum, err = runEpochs(ctx, so, *epochs, stdout)
	} else {
		sum, err = client.Submit(ctx, so)
	}
	procs := cl.Processes() // while alive: VmHWM of each
	stopErr := cl.Stop()
	for i, p := range cl.Processes() { // after: rusage, which also covers the last moments
		if i < len(procs) {
			procs[i].MaxPeakRSS = max(procs[i].MaxPeakRSS, p.MaxPeakRSS)
		}
	}
	if err != nil && ctx.Err() != nil {
		// Interrupted: the cluster is stopped, so the submit's hint
		// (resume at its gateway) cannot work as it is.
		if temp {
			removeTemp()
			return fmt.Errorf("job interrupted: %v", err)
		}
		return c.restartHint(cl, err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "the processes' logs are in %s/*.log\n", cl.DataDir())
		return err
	}
	client.PrintSummary(stdout, sum)
	fmt.Fprintf(stdout, "elapsed: job %s (upload %s), cluster start %s, total %s\n",
		sum.Total.Round(time.Millisecond), sum.Upload.Round(time.Millisecond), up.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "peak resident memory per process:\n")
	FormatProcesses(stdout, procs)
	if stopErr != nil {
		fmt.Fprintf(stderr, "warning: %v (logs in %s)\n", stopErr, cl.DataDir())
	}
	if temp && !*keep {
		if err := os.RemoveAll(cl.DataDir()); err != nil {
			return errors.Join(stopErr, err)
		}
	}
	return nil
}

// again is how the hints of a submit to cl's gateway run the client:
// with its address and credential (or --insecure).
func again(cl *Cluster) client.Invocation {
	args := []string{"--server", cl.GatewayAddr()}
	if cl.TLSDir() == "" {
		args = append(args, "--insecure")
	} else {
		args = append(args, "--tls-dir", cl.TLSDir())
	}
	return client.Invocation{Program: os.Args[0], Gateway: args}
}

// restartHint is the error of a `local run` on --data interrupted while
// its submit, whose error is err, followed the job: the cluster is
// stopped, and the job is kept in the data directory. On the topology's
// ports the hint starts it again there with `wololo local` and resumes
// the job at it (err's own hint); on free ports, which another start does
// not find again, it only says where the job is kept.
func (c *common) restartHint(cl *Cluster, err error) error {
	var resume cli.Hinted
	hinted := errors.As(err, &resume)
	err = fmt.Errorf("job interrupted: %v", err) // without the submit's hint
	if c.freePorts {
		return cli.WithHint(err, fmt.Sprintf("the cluster is stopped; its data, and the job, are kept in %s (it ran on free ports: a new `wololo local --data %s --free-ports` runs on others, whose gateway address it prints)", cl.DataDir(), cl.DataDir()))
	}
	if !hinted {
		return cli.WithHint(err, fmt.Sprintf("the cluster is stopped; its data is kept in %s", cl.DataDir()))
	}
	words := []string{os.Args[0], "local", "--data", cl.DataDir()}
	if c.topology != "" {
		words = append(words, "--topology", c.topology)
	}
	if c.basePort != 0 {
		words = append(words, "--base-port", strconv.Itoa(c.basePort))
	}
	if c.masters >= 0 {
		words = append(words, "--masters", strconv.Itoa(c.masters))
	}
	if c.insecure {
		words = append(words, "--insecure")
	}
	return cli.WithHint(err, fmt.Sprintf("the cluster is stopped and the job kept in %s: start the cluster again on it with `%s`, then, in another terminal, %s", cl.DataDir(), client.ShellCommand(words...), resume.Hint()))
}
