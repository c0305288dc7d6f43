package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/atomicfile"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
	"github.com/wololo/wololo/services/dataflow/csvio"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/roles/local"
	"github.com/wololo/wololo/services/wire/rpc"
	"github.com/wololo/wololo/transport/diskuse"
)

// Defaults of the CLI.
const (
	DefaultOut       = "BENCHMARKS.md"
	DefaultWork      = "data/bench"
	DefaultLocalData = "data/bench-local"
	DefaultDuckDB    = "bin/duckdb-queries"
	DefaultDuckDBSrc = "tools/duckdb"
)

// ErrMismatch is returned when a mode's outputs differ from the
// reference's.
var ErrMismatch = errors.New("outputs differ from the reference")

// Options of one bench run.
type Options struct {
	Matches, Players string
	// Binary is the wololo binary every child runs; os.Executable() if
	// empty.
	Binary string
	// Work holds the outputs of every mode, the logs and the profiles.
	Work string
	// LocalData is the local cluster's data directory, emptied first.
	LocalData string
	// Profile runs every local process with --cpuprofile.
	Profile bool
	// KeepData keeps the local processes' stores after the run (their
	// logs are kept either way).
	KeepData bool
	// Go is the go command, for `go tool pprof`; "go" if empty.
	Go string
	// Runs is how many times every mode of Modes runs, interleaved
	// (the reference runs once, before them); 1 if less.
	Runs int
	// Kills runs local mode once more per kind of process with that
	// process SIGKILLed at KillAt of the job.
	Kills bool
	// DuckDB is the DuckDB baseline's binary (duckdb-queries); "" runs no
	// baseline.
	DuckDB string
	// DuckDBSrc is the tools/duckdb module, built into DuckDB (with CGO)
	// before the runs; "" runs DuckDB as it is.
	DuckDBSrc string
	// Micro is a file with the micro-benchmarks' output to include.
	Micro string
	// Scaling are the replica counts of the sharded task (ScaledTask) at
	// which local mode runs once more, for the cost of a row; none: no
	// such runs.
	Scaling []int
	// Sizes are the multiples of the dataset the sizes table runs
	// (sizes.go: the first 1, the dataset itself); none: no such table.
	Sizes []int
	// SizesData is where the larger datasets are generated (x2, x4, ...)
	// and kept; SizesMatches is the dataset's distinct matches, which a
	// factor multiplies (DefaultSizesMatches if 0).
	SizesData    string
	SizesMatches int
	// Topology is local mode's; deploy.Default() if it has no stages.
	Topology deploy.Topology
	// Modes are the modes that run in the rounds (ModeDuckDBPlain,
	// ModeDuckDB, ModeDemo, ModeDemoExamples, ModeLocal); every one if
	// empty. Without local mode, neither do
	// its runs after the rounds (insecure, kills, scaling) nor its
	// profiles.
	Modes []string
	// Examples holds the example queries (ModeDemoExamples's job, every
	// *.sql); DefaultExamples if empty.
	Examples string
	// Compose is the client address of a deployed compose project's
	// gateway (`make up`'s 127.0.0.1:7100); "" runs none. Its job, the
	// four default queries as `make submit` sends them, runs Runs times
	// after the rounds, for the deployment's time beside local mode's.
	Compose string
	// ComposeTLS is that deployment's certificate directory (`make up`
	// writes deploy/tls); the client presents tlsflags.DefaultClient.
	ComposeTLS string
	// ComposeUp and ComposeDown, if set, are shell commands run before
	// the compose runs and after them (`make up`, `make down`), so that
	// the deployment's containers are not on the machine while the other
	// modes are measured.
	ComposeUp, ComposeDown string
	// Command is shown in the report.
	Command string
	// Progress receives what the bench is doing; nil for nothing.
	Progress io.Writer
	// epochEvery, set for a round of ModeLocalStanding, makes runLocal's
	// job a standing one whose upload the gateway cuts every epochEvery,
	// closed once its upload's last version is out.
	epochEvery time.Duration
	// queries, set for a round of ModeLocalAnalyst, are runLocal's job's
	// own queries instead of the four default ones.
	queries []sqljob.Query
	// Analyst holds the analyst queries (the analyst modes' jobs, every
	// *.sql); DefaultAnalyst if empty.
	Analyst string
	// AnalystJobQueries is how many analyst queries one job of Wololo's
	// analyst modes holds; DefaultAnalystJobQueries if 0.
	AnalystJobQueries int
}

const usage = `usage: wololo bench --matches F --players F [--out BENCHMARKS.md] [--runs 3] [flags]

Measures the reference evaluator, the DuckDB baselines (tools/duckdb, built
with CGO into --duckdb first: plain DuckDB, the SQL a user would write, run
with --plain, and exact DuckDB, the contract's value rules), demo mode
(demo: wololo demo as a user runs it, the four default queries through
their SQL plan; demo-examples: a job of the example user queries, every
--examples/*.sql) and local mode (separate processes, durable segment-log
stores; local: the SQL plan of the four default queries, as wololo local
run submits a job; local-standing: the same job as a standing job of one
upload that the gateway cuts every second, first version and wall time; the
analyst queries, every --analyst/*.sql, by DuckDB on a user's load of the
files, all in one process (duckdb-analyst), and the same texts as jobs of
--analyst-job-queries by demo (demo-analyst) and local mode (local-analyst))
on one dataset: each mode of --modes --runs times,
interleaved, for their medians and their ratios to plain and exact
DuckDB's; then local mode (the SQL plan) with --insecure, once
per kind of process SIGKILLed, and once per --scaling replica count of the
shard task, for the CPU-seconds a row costs. Checks that every mode's outputs
are byte-equal to the reference's (the example queries' only that they
are written; plain DuckDB's differences are reported, not a failure), profiles the local processes and writes a markdown report.
With --compose ADDR it also submits the job --runs times to the compose
deployment whose gateway is there, last (--compose-up and --compose-down:
commands that deploy it before those runs and remove it after, as make
bench passes make up and make down).
Where DuckDB cannot be built, the report says so and the bench goes on
without it. If the outputs differ, the report goes to OUT.failed.md
instead and the command fails.
`

// Run is the `wololo bench` command.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo bench", usage, stderr)
	o := Options{Progress: stderr}
	fs.StringVar(&o.Matches, "matches", "", "matches.csv (required)")
	fs.StringVar(&o.Players, "players", "", "match_players.csv (required)")
	out := fs.String("out", DefaultOut, "the markdown report to write")
	fs.StringVar(&o.Binary, "binary", "", "wololo binary for the child processes (default: this one)")
	fs.StringVar(&o.Work, "work", DefaultWork, "directory for the outputs, logs and profiles of every mode")
	fs.StringVar(&o.LocalData, "local-data", DefaultLocalData, "data directory of the local cluster (emptied first)")
	fs.BoolVar(&o.Kills, "kills", true, "also run local mode once per kind of process with it SIGKILLed at 70% of the job")
	fs.BoolVar(&o.Profile, "profile", true, "run every local process with --cpuprofile and report the busiest one's profile")
	fs.BoolVar(&o.KeepData, "keep-data", false, "keep the local processes' stores after the run (their logs are kept either way)")
	fs.StringVar(&o.Go, "go", "go", "go command, for go tool pprof")
	fs.StringVar(&o.Micro, "micro", "", "file with `go test -bench` output to include in the report")
	fs.IntVar(&o.Runs, "runs", 3, "run every mode of --modes this many times, interleaved, and report their medians")
	fs.StringVar(&o.DuckDB, "duckdb", DefaultDuckDB, "the DuckDB baseline (duckdb-queries) to run; \"\" for none")
	fs.StringVar(&o.DuckDBSrc, "duckdb-src", DefaultDuckDBSrc, "build --duckdb from this module first (CGO_ENABLED=1 go build); \"\" to run it as it is")
	modes := fs.String("modes", "all", "the modes to run in the rounds, some of "+strings.Join(roundModes, ",")+" (demo and local: the four default queries through SQL, as users run them); without local, no local runs at all")
	fs.StringVar(&o.Examples, "examples", DefaultExamples, "directory of the example queries demo-examples runs as one job (every *.sql)")
	fs.StringVar(&o.Analyst, "analyst", DefaultAnalyst, "directory of the analyst queries duckdb-analyst (all in one process), demo-analyst and local-analyst (as jobs of --analyst-job-queries) run (every *.sql)")
	fs.IntVar(&o.AnalystJobQueries, "analyst-job-queries", DefaultAnalystJobQueries, "analyst queries per job of demo-analyst and local-analyst (1 to 32, a job's --max-queries; all of them in one job by default)")
	fs.StringVar(&o.Compose, "compose", "", "also submit the job --runs times to the compose deployment whose gateway is at this address (make up's 127.0.0.1:7100); \"\" for none")
	fs.StringVar(&o.ComposeUp, "compose-up", "", "shell command that deploys the compose project before its runs (make up); \"\" if it is up already")
	fs.StringVar(&o.ComposeDown, "compose-down", "", "shell command that removes it after them (make down), run even when they fail")
	fs.StringVar(&o.ComposeTLS, "compose-tls", "deploy/tls", "the compose deployment's certificate directory (the client presents its \""+tlsflags.DefaultClient+"\" credential)")
	scaling := fs.String("scaling", "1,2,4", "run local mode once more at each of these replica counts of the "+ScaledTask+" task, for the CPU per row; \"\" for none")
	sizes := fs.String("sizes", "", "the cost of more data: run plain DuckDB, demo and local mode on the dataset and on datasets these multiples of it (e.g. 1,2,4; generated by wololo datagen into --sizes-data, kept there), --runs rounds; \"\" for none")
	fs.StringVar(&o.SizesData, "sizes-data", "data", "directory the --sizes datasets are generated into (x2, x4, ...)")
	fs.IntVar(&o.SizesMatches, "sizes-matches", DefaultSizesMatches, "the dataset's distinct matches (wololo datagen --matches), which each --sizes factor multiplies")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	var err error
	if o.Scaling, err = ParseScaling(*scaling); err != nil {
		return cli.Usagef(fs, "--scaling: %v", err)
	}
	if o.Sizes, err = ParseSizes(*sizes); err != nil {
		return cli.Usagef(fs, "--sizes: %v", err)
	}
	if o.Modes, err = ParseModes(*modes); err != nil {
		return cli.Usagef(fs, "--modes: %v", err)
	}
	if o.Matches == "" || o.Players == "" {
		fs.Usage()
		return errors.New("--matches and --players are required")
	}
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = a
		if a == "" || strings.ContainsAny(a, " '\"$") {
			shown[i] = shQuote(a)
		}
	}
	o.Command = "wololo bench " + strings.Join(shown, " ")
	rep, err := Bench(ctx, o)
	if err != nil && !errors.Is(err, ErrMismatch) {
		return err
	}
	path := *out
	if err != nil {
		path = strings.TrimSuffix(path, ".md") + ".failed.md"
	}
	if werr := writeReport(path, rep); werr != nil {
		return errors.Join(err, werr)
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return err
}

func writeReport(path string, r Report) error {
	var b bytes.Buffer
	if err := Render(&b, r); err != nil {
		return err
	}
	return atomicfile.Write(path, b.Bytes(), 0o644)
}

// runLocal starts a local cluster on a fresh data directory, runs one job
// through it and describes its processes; each of during runs alongside
// the job, on a context that ends with it, and is waited for.
func runLocal(ctx context.Context, o Options, bin, outDir, profDir string, insecure bool, logf func(string, ...any), during ...func(context.Context, *local.Cluster)) (LocalRun, error) {
	var lr LocalRun
	for _, d := range []string{o.LocalData, outDir, profDir} {
		if err := os.RemoveAll(d); err != nil {
			return lr, err
		}
	}
	binary := bin
	if o.Profile {
		abs, err := filepath.Abs(profDir)
		if err != nil {
			return lr, err
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return lr, err
		}
		// local.Options.ExtraArgs are the same for every child, so a
		// wrapper adds the per-instance --cpuprofile and execs wololo (the
		// pid stays the same).
		binary = filepath.Join(abs, "wololo-profiled.sh")
		if err := os.WriteFile(binary, []byte(ProfileWrapper(bin, abs)), 0o755); err != nil {
			return lr, err
		}
	}
	busy0, _ := machineBusy()
	self0 := selfCPU()
	t0 := time.Now()
	cl, err := local.Start(ctx, local.Options{
		Binary: binary, DataDir: o.LocalData, FreePorts: true, Insecure: insecure, Topology: o.Topology,
		Log: hclog.New(&hclog.LoggerOptions{Name: "local", Level: hclog.Warn, Output: o.Progress}),
	})
	if err != nil {
		return lr, err
	}
	defer cl.Stop()
	lr.Startup = time.Since(t0)
	lr.Durable = true // local mode gives every process a data directory
	logf("local: %d processes up in %s; submitting", len(cl.Instances()), secs(lr.Startup))

	lr.DiskIdle = diskuse.Dir(o.LocalData)
	idle := map[string]int64{}
	for _, p := range cl.Processes() {
		if p.DataDir != "" {
			idle[p.Instance] = diskuse.Dir(p.DataDir)
		}
	}
	s0 := time.Now()
	tlsConfig, err := cl.ClientTLS(tlsflags.DefaultClient)
	if err != nil {
		return lr, err
	}
	jobCtx, jobDone := context.WithCancel(ctx)
	peak := sampleDisk(jobCtx, o.LocalData, 250*time.Millisecond)
	var alongside sync.WaitGroup
	for _, f := range during {
		alongside.Go(func() { f(jobCtx, cl) })
	}
	so := client.SubmitOptions{Server: cl.GatewayAddr(), TLS: tlsConfig, Matches: o.Matches, Players: o.Players, Out: outDir, Queries: o.queries}
	var first *firstVersion
	if o.epochEvery > 0 {
		var err error
		if first, err = followFirstVersion(jobCtx, &so, s0); err != nil {
			jobDone()
			return lr, err
		}
		defer first.gw.Close()
		so.Standing, so.EpochEvery = true, o.epochEvery
	}
	sum, err := client.Submit(ctx, so)
	if err == nil && first != nil {
		so.JobID = sum.JobID
		upload := sum.Upload
		if lr.AddedQueries, err = addDefaultQueries(ctx, so); err == nil {
			if sum, err = client.Finish(ctx, so); err == nil {
				sum.Upload = upload
				lr.FirstVersion, err = first.wait(ctx)
			}
		}
	}
	lr.Wall = time.Since(s0) - lr.AddedQueries // the standing job's own
	jobDone()
	alongside.Wait() // what runs during the job is done with the cluster before it stops
	peaks := <-peak
	lr.DiskPeak, lr.RetainedPeak = peaks[0], peaks[1]
	if err != nil {
		return lr, fmt.Errorf("local mode: %w (logs in %s/*.log)", err, cl.DataDir())
	}
	lr.Upload, lr.Rebuilds = sum.Upload, sum.Job.GetRebuilds()

	// While the processes are alive: their store counters and CPU time.
	stats := map[string]*ProcStat{}
	var order []string
	for _, p := range cl.Processes() {
		if p.Replaced {
			continue
		}
		ps := &ProcStat{Instance: p.Instance, PID: p.PID, PeakRSS: p.MaxPeakRSS, Restarts: p.Restarts, DiskIdle: idle[p.Instance]}
		if st, err := storeCounters(ctx, cl, p.Instance); err != nil {
			logf("local: status of %s: %v", p.Instance, err)
		} else if st != nil {
			ps.Commits, ps.Syncs, ps.StoreBytes, ps.Durable = st.Commits, st.Syncs, st.Bytes, st.Durable
		}
		if p.Alive {
			ps.CPU, _ = procCPU(p.PID)
		}
		stats[p.Instance] = ps
		order = append(order, p.Instance)
	}
	lr.ClientCPU = selfCPU() - self0
	if busy1, err := machineBusy(); err == nil && busy0 > 0 {
		lr.MachineBusy = busy1 - busy0
		var own time.Duration
		for _, ps := range stats {
			own += ps.CPU
		}
		lr.OtherCPU = max(lr.MachineBusy-own-lr.ClientCPU, 0)
	}
	lr.CPUNote = "CPU is each process's utime+stime from /proc/PID/stat just before the stop (its shutdown is not counted)."
	if err := cl.Stop(); err != nil {
		logf("local: stop: %v", err)
	}
	// After the stop: the kernel's peak RSS of each exited process.
	for _, p := range cl.Processes() {
		if ps, ok := stats[p.Instance]; ok && !p.Replaced {
			ps.PeakRSS = max(ps.PeakRSS, p.MaxPeakRSS)
		}
	}
	for _, name := range order {
		lr.Procs = append(lr.Procs, *stats[name])
	}
	if !o.KeepData {
		for _, p := range cl.Processes() {
			if p.DataDir != "" {
				os.RemoveAll(p.DataDir)
			}
		}
	}
	return lr, nil
}

// ProfileWrapper is a shell script that runs bin with the arguments it is
// given, adding --cpuprofile DIR/<instance>.prof when they start a gateway
// or a worker (a command line with --listen, so not -h). It execs, so the
// process keeps the script's pid.
func ProfileWrapper(bin, dir string) string {
	return `#!/bin/sh
# Written by wololo bench: runs wololo with a CPU profile per instance.
bin=` + shQuote(bin) + `
dir=` + shQuote(dir) + `
name=
listen=
prev=
case "$1" in gateway) name=gateway-0 ;; esac
for a in "$@"; do
	case "$prev" in --instance|-instance) name=$a ;; esac
	case "$a" in
	--instance=*|-instance=*) name=${a#*=} ;;
	--listen|-listen|--listen=*|-listen=*) listen=1 ;;
	esac
	prev=$a
done
if [ -n "$name" ] && [ -n "$listen" ]; then
	exec "$bin" "$@" --cpuprofile "$dir/$name.prof"
fi
exec "$bin" "$@"
`
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// storeCounters asks a process for its Status.
func storeCounters(ctx context.Context, cl *local.Cluster, instance string) (*wololov1.StoreCounters, error) {
	tlsConfig, err := cl.OperatorTLS(instance)
	if err != nil {
		return nil, err
	}
	conn, err := rpc.NewClient(cl.Addr(instance), tlsConfig)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := wololov1.NewStatusClient(conn).Get(ctx, &wololov1.GetRequest{})
	if err != nil {
		return nil, err
	}
	return r.Store, nil
}

// clockTick is USER_HZ, the unit of /proc's CPU times: 100 on Linux.
const clockTick = time.Second / 100

// procCPU is a live process's utime+stime (all its threads).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseProcStat(string(b))
}

// parseProcStat reads utime+stime from /proc/PID/stat: fields 14 and 15,
// counted after the parenthesised command name, which may hold spaces.
func parseProcStat(s string) (time.Duration, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("no ')' in /proc/PID/stat")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, errors.New("short /proc/PID/stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(u+st) * clockTick, nil
}

// machineBusy is the CPU time all CPUs spent not idle since boot (first
// line of /proc/stat, idle and iowait excluded).
func machineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, errors.New("unexpected /proc/stat")
	}
	var busy int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest times are already in user
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, err
		}
		busy += n
	}
	return time.Duration(busy) * clockTick, nil
}

// selfCPU is this process's CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runChild runs bin with args to completion, its output in logPath; name
// names it in an error.
func runChild(ctx context.Context, name, bin, logPath string, args ...string) (ProcessRun, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return ProcessRun{}, err
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	busy0, busyErr := machineBusy()
	self0 := selfCPU()
	start := time.Now()
	err = cmd.Run()
	run := ProcessRun{Wall: time.Since(start)}
	busy1, busyErr1 := machineBusy()
	self := selfCPU() - self0
	if err != nil {
		b, _ := os.ReadFile(logPath)
		return run, fmt.Errorf("%s: %v; the end of %s:\n%s", name, err, logPath, lastLines(b, 15))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		run.PeakRSS = ru.Maxrss * 1024 // kilobytes on Linux
		run.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if busyErr == nil && busyErr1 == nil {
		run.OtherCPU = max(busy1-busy0-run.CPU-self, 0)
	}
	return run, nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// readResults reads the default queries' result files, q1.csv..q4.csv.
func readResults(dir string) (map[string][]byte, error) {
	m := map[string][]byte{}
	for _, name := range schema.ResultFiles(queries.Names) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		m[name] = b
	}
	return m, nil
}

// compareResults describes every result file in dir that is not
// byte-equal to want's.
func compareResults(want map[string][]byte, dir string) []string {
	var diffs []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		got, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case err != nil:
			diffs = append(diffs, fmt.Sprintf("%s: %v", name, err))
		case !bytes.Equal(got, want[name]):
			diffs = append(diffs, fmt.Sprintf("%s differs (%d bytes, the reference's %d)", filepath.Join(dir, name), len(got), len(want[name])))
		}
	}
	return diffs
}

// profile runs go tool pprof on one process's profile: the top 15 for the
// report, every function for the groups.
func profile(ctx context.Context, goCmd, bin, prof string, proc ProcStat) (*Profile, error) {
	if _, err := os.Stat(prof); err != nil {
		return nil, err
	}
	top, err := exec.CommandContext(ctx, goCmd, "tool", "pprof", "-top", "-nodecount=15", bin, prof).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof: %v", exitDetail(err))
	}
	all, err := exec.CommandContext(ctx, goCmd, "tool", "pprof", "-top", "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0", bin, prof).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof: %v", exitDetail(err))
	}
	traces, err := exec.CommandContext(ctx, goCmd, "tool", "pprof", "-traces", bin, prof).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof: %v", exitDetail(err))
	}
	var kept []string
	for _, line := range strings.Split(strings.TrimRight(string(top), "\n"), "\n") {
		if strings.HasPrefix(line, "Build ID:") || strings.HasPrefix(line, "File:") {
			continue
		}
		kept = append(kept, line)
	}
	return &Profile{
		Instance:   proc.Instance,
		CPU:        proc.CPU,
		Components: ComponentShares(ParseTraces(string(traces))),
		Command:    fmt.Sprintf("go tool pprof -top -nodecount=15 %s %s", relPath(bin), relPath(prof)),
		Top:        strings.Join(kept, "\n"),
		Groups:     GroupShares(ParseTop(string(all))),
	}, nil
}

func exitDetail(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Sprintf("%v: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err.Error()
}

// relPath is path relative to the working directory when it is below it.
func relPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// dataset counts the input's records.
func dataset(matches, players string) (Dataset, error) {
	d := Dataset{Matches: matches, Players: players}
	var err error
	if d.MatchRows, d.MatchBytes, err = countRecords(matches); err != nil {
		return d, err
	}
	if d.PlayerRows, d.PlayerBytes, err = countRecords(players); err != nil {
		return d, err
	}
	return d, nil
}

// countRecords counts a CSV file's records after its header, malformed
// ones included, as the system reads them.
func countRecords(path string) (rows, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	sc := csvio.NewScanner(f)
	var n int64
	for sc.Scan() {
		n++
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return max(n-1, 0), info.Size(), nil
}

// machine describes this machine.
func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					kb, _ := strconv.ParseInt(f[0], 10, 64)
					m.MemTotal = kb * 1024
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	var u syscall.Utsname
	if err := syscall.Uname(&u); err == nil {
		m.Kernel = utsString(u.Release[:])
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	return m
}

func utsString[T int8 | uint8](b []T) string {
	var s []byte
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}
