package client

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
	sqlflags "github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/cmdline/inputfile"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
)

// DefaultServer is the gateway address of the local and compose modes.
const DefaultServer = "127.0.0.1:7100"

// DefaultTLSDir is where `wololo local` writes the CA and the first client
// credential (its default data directory's tls/).
const DefaultTLSDir = "data/local/tls"

// EnvServer gives --server its default; tlsflags.EnvDir and
// tlsflags.EnvClient do the same for --tls-dir and --name. A flag on the
// command line wins over its variable, the variable over the built-in
// default.
const EnvServer = "WOLOLO_SERVER"

// environment is the part of every client command's help that names its
// variables and exit statuses.
const environment = `
environment (a flag given wins over its variable, the variable over the default):
  ` + EnvServer + `   --server
  ` + tlsflags.EnvDir + `  --tls-dir
  ` + tlsflags.EnvClient + `   --name

` + cli.ExitCodes

// gatewayFlags are the flags every client command reaches the gateway
// with: --server (default $WOLOLO_SERVER, else DefaultServer), the TLS
// flags --tls-dir, --name and --insecure (tlsflags: $WOLOLO_TLS_DIR, else
// DefaultTLSDir; $WOLOLO_CLIENT, else "client") and --connect-timeout.
type gatewayFlags struct {
	server string
	creds  *tlsflags.Flags
	reach  time.Duration
}

func registerGateway(fs *flag.FlagSet) *gatewayFlags {
	g := &gatewayFlags{}
	cli.StringEnv(fs, &g.server, "server", EnvServer, DefaultServer, "gateway address, host:port")
	g.creds = tlsflags.RegisterClient(fs, DefaultTLSDir)
	fs.DurationVar(&g.reach, "connect-timeout", DefaultReach, "give up when the gateway cannot be reached for this long")
	return g
}

const usage = `usage: wololo client <command> [flags]

commands:
  submit   upload matches.csv and match_players.csv, wait, write the results
           (q1.csv..q4.csv, or NAME.csv of each --query NAME=FILE.sql);
           --standing: a job that stays open, its answers kept up per append
  append   add rows to a standing job as its next epoch; write its version
  close    end a standing job: its last version becomes its results
  query    answer one SQL query over a standing job's rows so far (no upload)
  status   show a job's state and report
  watch    follow a job until it ends (--json: one object per line);
           --answers: a standing job's versions, as changed rows
  results  fetch a finished job's result files (--epoch N: a standing job's version)
  list     this client's jobs at the gateway, with their states
  cancel   drop one of this client's jobs at the gateway (one left uploading, say)

Run 'wololo client <command> -h' for a command's flags.
` + environment

// Run is the `wololo client` command.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) == 0 {
			fmt.Fprint(stderr, usage)
			return fmt.Errorf("%w: a command is required", cli.ErrUsage)
		}
		fmt.Fprint(stdout, usage)
		return nil
	}
	switch args[0] {
	case "submit":
		return runSubmit(ctx, args[1:], stdout, stderr)
	case "append":
		return runAppend(ctx, args[1:], stdout, stderr)
	case "close":
		return runClose(ctx, args[1:], stdout, stderr)
	case "query":
		return runQuery(ctx, args[1:], stdout, stderr)
	case "status":
		return runJob(ctx, "status", args[1:], stdout, stderr)
	case "watch":
		return runWatch(ctx, args[1:], stdout, stderr)
	case "results":
		return runJob(ctx, "results", args[1:], stdout, stderr)
	case "list":
		return runList(ctx, args[1:], stdout, stderr)
	case "cancel":
		return runCancel(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("%w: unknown client command %q", cli.ErrUsage, args[0])
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

func runSubmit(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := cli.NewFlagSet("wololo client submit", "usage: wololo client submit --matches F --players F --out DIR\n"+
		"                            [--query NAME=FILE.sql ... [--table NAME=F ...] [--explain]] [flags]\n"+
		"       wololo client submit --query NAME=FILE.sql ... --table NAME=F ... --out DIR [flags]\n\n"+
		"Creates a job (or re-attaches to --job), uploads its files, waits, and writes the\n"+
		"results: q1.csv..q4.csv of the four default queries (the SQL of queries/),\n"+
		"or with --query NAME=FILE.sql\n"+
		"(repeatable) the job's own SQL queries (docs/sql.md) over the tables matches and\n"+
		"match_players, and NAME.csv of each; --table NAME=F (repeatable) adds the CSV file F,\n"+
		"whose header row names its columns, as table NAME, uploaded after the two files.\n"+
		"Without --matches and --players the job is of its --table files only (a query of\n"+
		"matches or match_players is refused). "+inputsHelp+
		"The gateway compiles the queries; one it refuses\n"+
		"exits 4 with its message, which names the construct and its line:column.\n"+
		"--explain prints the plans the gateway made of the job's queries before the upload.\n"+
		"With --json the final report is one JSON object on stdout (job_id, state, inputs,\n"+
		"result_rows, queries, outputs with path, rows and bytes, uploaded_bytes, upload_seconds,\n"+
		"total_seconds; rejects, the path of OUT/rejects.csv, when the job listed malformed\n"+
		"records; explain, the plans, with --explain; rebuilds, why the job was lost each time it\n"+
		"was submitted again); after any failure the same object with error and hint (what to do next),\n"+
		"and job_id and state \"unknown\" when the job was not created. Progress stays on\n"+
		"stderr. The first 1000 malformed records of each file (file, offset, reason,\n"+
		"first_bytes) are written to OUT/rejects.csv, whether the job is done or failed.\n"+
		"A job lost under the client (a process lost its state, or the gateway lost the job)\n"+
		"is submitted again from the same files, at most --rebuilds times, saying so on stderr.\n"+
		"With --standing the job stays open (docs/standing.md): the files are its epoch 1, the\n"+
		"submit returns once its version is out (written to --out) and leaves the job at the\n"+
		"gateway for `client append` and `client close`. With --epoch-every DURATION the gateway\n"+
		"also ends an epoch every DURATION of input while the files upload, so that a large upload\n"+
		"publishes versions before its last byte (the submit still returns with its last one).\n"+environment, stderr)
	var o SubmitOptions
	gf := registerGateway(fs)
	fs.StringVar(&o.Matches, "matches", "", "path of matches.csv (with --players; none: a job of --table files only)")
	fs.StringVar(&o.Players, "players", "", "path of match_players.csv (with --matches)")
	fs.StringVar(&o.Out, "out", "", "directory for the results, q1.csv..q4.csv or NAME.csv of each --query (required)")
	queryFlags := sqlflags.RegisterQueryFlags(fs, "a SQL query of the job, NAME=FILE.sql: its rows are written to NAME.csv (repeatable; default: the four default queries)")
	tableFlags := sqlflags.RegisterTableFlags(fs, "another table of the --query queries, NAME=F: F's header row names its columns (repeatable)")
	printPlans := fs.Bool("explain", false, "print the plans the gateway made of the job's queries (the --query ones, else the four default ones) before uploading (with --json: in the object, as explain)")
	fs.StringVar(&o.JobID, "job", "", "job id to create or re-attach to (default: a new one)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the job at the gateway after fetching its results")
	fs.BoolVar(&o.Standing, "standing", false, "a standing job: it stays open for appends (client append), each one epoch with a new version of every query's answer; the submit returns with epoch 1's")
	fs.DurationVar(&o.EpochEvery, "epoch-every", 0, "with --standing: while the files upload, also end an epoch (a version) every DURATION of input, e.g. 1s; stored with the job for its appends (default: none, only each upload's end)")
	fs.DurationVar(&o.StallTimeout, "stall-timeout", DefaultStall, "give up (exit 6, the job kept) when the job makes no progress for this long: no upload byte acknowledged, no row applied by any process; 0 waits for ever")
	fs.IntVar(&o.Rebuilds, "rebuilds", DefaultRebuilds, "submit a lost job again from its files at most this many times (a process lost its state under it, or the gateway lost it), saying so on stderr; 0 gives up at the first loss")
	quiet := fs.Bool("quiet", false, "no progress output")
	asJSON := fs.Bool("json", false, "print the final report as one JSON object on stdout")
	maxMalformed := MaxMalformedFlag(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	var sum *Summary
	if *asJSON { // every way out from here prints one object (submitjson.go)
		defer func() { err = writeSubmitJSON(ctx, stdout, o, sum, err) }()
	}
	if err := CheckPair(fs, o.Matches, o.Players); err != nil {
		return err
	}
	if err := cli.Required(fs, "out"); err != nil {
		return err
	}
	if o.EpochEvery != 0 && !o.Standing {
		return cli.Usagef(fs, "--epoch-every is for a standing job (--standing)")
	}
	if err := CheckEpochEvery(o.EpochEvery); err != nil {
		return cli.Usagef(fs, "%v", err)
	}
	if o.MaxMalformed, err = maxMalformed(); err != nil {
		return err
	}
	if len(tableFlags.List()) > 0 && !queryFlags.Given() {
		return cli.Usagef(fs, "--table is for the tables of --query queries")
	}
	if o.Queries, err = queryFlags.Read(); err != nil {
		return err
	}
	for _, kv := range tableFlags.List() {
		o.Tables = append(o.Tables, Table{Name: kv[0], Path: kv[1]})
	}
	if o.Matches == "" && o.Players == "" && len(o.Tables) == 0 {
		return cli.Usagef(fs, "give --matches and --players, or --table files of --query queries (a job of tables only)")
	}
	if err := CheckInputs(o); err != nil {
		return cli.Usagef(fs, "%v", err)
	}
	if *printPlans {
		o.Explain = stdout
		if *asJSON {
			o.Explain = io.Discard // the object carries them
		}
	}
	if !*quiet {
		o.Progress, o.Terminal = stderr, IsTerminal(stderr)
	}
	if o.Rebuilds < 0 {
		return cli.Usagef(fs, "--rebuilds must be 0 or more")
	}
	o.Notices = stderr
	// The inputs first: a missing file is the likelier mistake, and
	// says more than a missing credential.
	if err := statInputs(o); err != nil {
		return err
	}
	o.Server, o.Reach = gf.server, gf.reach
	o.Again = gf.again()
	if err := CheckServer(o.Server); err != nil {
		return err
	}
	if o.TLS, err = gf.creds.GatewayTLS(o.Server); err != nil {
		return err
	}
	if sum, err = Submit(ctx, o); err != nil {
		return err
	}
	if !*asJSON {
		PrintSummary(stdout, sum)
	}
	return nil
}

// PrintSummary prints where the results went and the job report. Its
// first line says when the job was done as `client status` does (stateLine:
// the gateway's time from the job's creation to its end), so that the two
// never give a finished job two different times.
func PrintSummary(w io.Writer, sum *Summary) {
	if sum.Epoch > 0 {
		fmt.Fprintf(w, "job %s: version of epoch %d out after %.1fs", sum.JobID, sum.Epoch, sum.Job.GetElapsedSeconds())
	} else {
		fmt.Fprint(w, stateLine(sum.JobID, sum.Job))
	}
	if sum.Upload > 0 { // none when nothing was uploaded (the in-memory demo)
		fmt.Fprintf(w, " (upload %s)", sum.Upload.Round(time.Millisecond))
	}
	fmt.Fprintln(w)
	names := ResultFiles(sum.Job)
	width := 7 // q1.csv and a space
	for _, name := range names {
		width = max(width, len(name)+1)
	}
	for _, name := range names {
		fmt.Fprintf(w, "  %-*s %6d rows  %s\n", width, name, sum.Job.ResultRows[name], sum.Files[name])
	}
	if sum.Rejects != "" {
		fmt.Fprintf(w, "  malformed records (the first of each file) listed in %s\n", sum.Rejects)
	}
	for i, why := range sum.Rebuilds {
		fmt.Fprintf(w, "  lost and submitted again (%d): %s\n", i+1, why)
	}
	PrintReport(w, sum.Job)
}

// PrintReport prints a job's per-file report.
func PrintReport(w io.Writer, job *wololov1.Job) {
	for _, r := range InputReports(job) {
		if r == nil {
			continue
		}
		fmt.Fprintf(w, "  %-18s rows read %d, malformed (skipped) %d", r.File, r.Rows, r.Malformed)
		if len(r.Missing) > 0 {
			cols := make([]string, 0, len(r.Missing))
			for c := range r.Missing {
				cols = append(cols, c)
			}
			sort.Strings(cols)
			var parts []string
			for _, c := range cols {
				parts = append(parts, fmt.Sprintf("%s %d", c, r.Missing[c]))
			}
			fmt.Fprintf(w, ", missing values (left out) %s", strings.Join(parts, ", "))
		}
		if len(r.OversizedAt) > 0 {
			at := make([]string, len(r.OversizedAt))
			for i, o := range r.OversizedAt {
				at[i] = strconv.FormatInt(o, 10)
			}
			fmt.Fprintf(w, ", over the record size limit (malformed) at byte %s", strings.Join(at, ", "))
		}
		fmt.Fprintln(w)
	}
	for _, line := range job.GetRebuilds() {
		fmt.Fprintf(w, "  rebuilt by the gateway: %s\n", line)
	}
}

func runJob(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer) error {
	what := map[string]string{"status": "prints a job's state and report", "results": "fetches a finished job's result files into --out (q1.csv..q4.csv, or NAME.csv of each of its queries);\n" +
		"of a standing job, a version: --epoch N, else the latest (a closed job's: its results).\n" +
		"An epoch not published exits 4 naming those that are. A standing job that is open is kept"}[cmd]
	text := strings.ToUpper(what[:1]) + what[1:] + ".\n"
	if cmd == "status" {
		text += "With --json, one JSON object on stdout: job_id, state, message, elapsed_seconds,\n" +
			"inputs (file, size_bytes, uploaded_bytes, uploaded, rows, malformed, missing,\n" +
			"oversized_at), result_rows, queries and, while it runs, failing_channels (stream,\n" +
			"sender, receiver, unacknowledged, connected, last_error: a channel whose link fails).\n"
	}
	fs := cli.NewFlagSet("wololo client "+cmd, "usage: wololo client "+cmd+" --job ID [flags]\n\n"+text+environment, stderr)
	gf := registerGateway(fs)
	id := fs.String("job", "", "job id (required)")
	asJSON := false
	if cmd == "status" {
		fs.BoolVar(&asJSON, "json", false, "print the job as one JSON object")
	}
	out, keep, epoch := "", false, int64(0)
	if cmd == "results" {
		fs.StringVar(&out, "out", "", "directory for the result files (required)")
		fs.BoolVar(&keep, "keep", false, "keep the job at the gateway after fetching its results (by default it is released)")
		fs.Int64Var(&epoch, "epoch", 0, "a standing job's version to fetch (default: the latest); kept at the gateway")
	}
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := cli.Required(fs, "job", "out"); err != nil { // "out" only exists for results
		return err
	}
	if cmd == "results" {
		if epoch < 0 {
			return cli.Usagef(fs, "--epoch %d: %v", epoch, errNoEpoch)
		}
		if err := CheckWritable(out); err != nil {
			return err
		}
	}
	if err := CheckServer(gf.server); err != nil {
		return err
	}
	tlsConfig, err := gf.creds.GatewayTLS(gf.server)
	if err != nil {
		return err
	}
	gw, err := Open(gf.server, tlsConfig, gf.reach)
	if err != nil {
		return err
	}
	defer gw.Close()
	gw.Notify = stderr
	switch cmd {
	case "status":
		job, err := gw.Get(ctx, *id)
		if err != nil {
			return withLostHint(explain(gf.server, err), err, gf.again(), *id, nil)
		}
		if asJSON {
			return WriteJSON(stdout, NewJobReport(*id, job))
		}
		printJob(stdout, job)
	case "results":
		v, err := gw.fetchVersion(ctx, *id, epoch, out)
		if err != nil {
			return explain(gf.server, err)
		}
		if v.epoch > 0 {
			fmt.Fprintf(stdout, "version of epoch %d%s:\n", v.epoch, overRows(v.rows))
		}
		for _, name := range slices.Sorted(maps.Keys(v.paths)) {
			fmt.Fprintf(stdout, "wrote %s\n", v.paths[name])
		}
		if !keep && epoch == 0 && !openStanding(ctx, gw, *id) {
			if err := gw.Delete(ctx, *id); err != nil {
				return fmt.Errorf("the results are written, but job %s could not be released at the gateway (%w); it is dropped after the gateway's retention", *id, explain(gf.server, err))
			}
			fmt.Fprintf(stdout, "released job %s at the gateway\n", *id)
		}
	}
	return nil
}

// stateLine is how a job's state and time are said, by `client status`
// and at the end of `client submit`: "job ID: done after 3.2s", the time
// being the gateway's since the job was created (Job.elapsed_seconds,
// which stops when the job is done or failed).
func stateLine(id string, j *wololov1.Job) string {
	return fmt.Sprintf("job %s: %s after %.1fs", id, StateWord(j.GetState()), j.GetElapsedSeconds())
}

func printJob(w io.Writer, j *wololov1.Job) {
	fmt.Fprint(w, stateLine(j.JobId, j))
	for _, r := range InputReports(j) { // the two files (none for a job of tables only), then the tables
		if r != nil && r.Size > 0 {
			fmt.Fprintf(w, ", %s %.0f%%", r.File, 100*float64(r.Offset)/float64(r.Size))
		}
	}
	if j.Message != "" {
		fmt.Fprintf(w, " (%s)", j.Message)
	}
	fmt.Fprintln(w)
	if j.GetStanding() {
		fmt.Fprintf(w, "  %s\n", standingLine(j))
	}
	if j.State == wololov1.JobState_JOB_STATE_DONE || j.State == wololov1.JobState_JOB_STATE_FAILED {
		PrintReport(w, j)
		return
	}
	for _, b := range failingChannels(j) { // where a job that does not progress is stuck
		fmt.Fprintf(w, "  not acknowledged: %s\n", backlogLine(b))
	}
	for _, line := range j.GetRebuilds() { // a standing job runs for long
		fmt.Fprintf(w, "  rebuilt by the gateway: %s\n", line)
	}
}

// failingChannels are the channels of a job that runs whose receivers
// have not acknowledged their batches since their links' last attempt
// failed (StageProgress.backlog with a last error).
func failingChannels(j *wololov1.Job) []*wololov1.ChannelBacklog {
	var out []*wololov1.ChannelBacklog
	for _, s := range j.GetStages() {
		for _, b := range s.GetBacklog() {
			if b.GetLastError() != "" {
				out = append(out, b)
			}
		}
	}
	return out
}

// inputsHelp is what the help of a command that takes input files says
// of them.
const inputsHelp = "Any input may be gzip-compressed (told by its first\n" +
	"bytes, not its name: the client uploads the decompressed CSV, after one pass that\n" +
	"counts its size), and one of them may be - for standard input, which is spooled to\n" +
	"a temporary file as it is read (a resume or a lost job sent again reads it again;\n" +
	"the spool is removed at the end).\n"

// statInputs refuses an input file of o that is not there, naming it,
// before anything else (standard input is there).
func statInputs(o SubmitOptions) error {
	for _, path := range inputPaths(o) {
		if path == inputfile.Stdin {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			return err
		}
	}
	return nil
}
