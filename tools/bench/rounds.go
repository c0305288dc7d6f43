package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/cmdline/epochsplit"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
)

// bencher is one bench run in progress: what every step needs, and the
// differences from the reference found so far.
type bencher struct {
	o    Options
	bin  string // the wololo binary, absolute
	duck string // the DuckDB baseline, absolute; "" when there is none
	// duckVersion is the DuckDB version the baseline reported.
	duckVersion string
	// plainDiffs are the files where plain DuckDB's last run differs from
	// the reference (not a mismatch: plain DuckDB is not held to it).
	plainDiffs []string
	want       map[string][]byte // the reference's outputs
	mismatch   []string
	logf       func(format string, args ...any)
	// examples is ModeDemoExamples's job, when it runs.
	examples SQLJob
	// analyst are the analyst modes' jobs, when one runs.
	analyst []SQLJob
	// analystFailed are, per analyst mode, the jobs that failed in its
	// last run.
	analystFailed map[string][]string
}

// runs reports whether mode runs in the rounds.
func (b *bencher) runs(mode string) bool { return slices.Contains(b.o.Modes, mode) }

// Bench runs every measurement and returns the report. With ErrMismatch
// the report is complete but some outputs differ from the reference.
func Bench(ctx context.Context, o Options) (Report, error) {
	b, err := newBencher(o)
	if err != nil {
		return Report{}, err
	}
	r := Report{Date: time.Now(), Command: b.o.Command, Machine: machine(), Rounds: b.o.Runs}
	if len(b.analyst) > 0 {
		r.AnalystJobs = analystJobsText(b.analyst)
	}
	if b.o.Micro != "" {
		m, err := os.ReadFile(b.o.Micro)
		if err != nil {
			return r, fmt.Errorf("micro-benchmark results: %w", err)
		}
		r.Micro = string(m)
	}
	if r.Dataset, err = dataset(b.o.Matches, b.o.Players); err != nil {
		return r, err
	}
	b.logf("dataset: %s + %s rows, %s", count(r.Dataset.MatchRows), count(r.Dataset.PlayerRows), mb(r.Dataset.Bytes()))

	if b.runs(ModeDuckDB) || b.runs(ModeDuckDBPlain) || b.runs(ModeDuckDBAnalyst) || b.runs(ModeDuckDBAnalystBounded) || len(b.o.Sizes) > 0 {
		b.duck, r.DuckDBNote = b.prepareDuckDB(ctx)
	} else {
		r.DuckDBNote = "its modes were not asked for (--modes)."
	}
	if err := b.reference(ctx, &r); err != nil {
		return r, err
	}
	if err := b.rounds(ctx, &r); err != nil {
		return r, err
	}
	if b.runs(ModeLocal) {
		if err := b.insecure(ctx, &r); err != nil {
			return r, err
		}
		if b.o.Kills {
			if err := b.kills(ctx, &r); err != nil {
				return r, err
			}
		}
		if err := b.scaling(ctx, &r); err != nil {
			return r, err
		}
	}
	if err := b.sizes(ctx, &r); err != nil {
		return r, err
	}
	if b.o.Compose != "" {
		if err := b.compose(ctx, &r); err != nil {
			return r, err
		}
	}
	r.Notes = append(r.Notes, noiseNotes(r)...)
	if b.runs(ModeLocal) {
		b.profiles(ctx, &r)
	} else {
		r.ProfileNote = "Local mode did not run (--modes), so no process was profiled."
	}
	if len(b.mismatch) > 0 {
		for _, m := range b.mismatch {
			r.Notes = append(r.Notes, "MISMATCH: "+m)
		}
		return r, fmt.Errorf("%w: %s", ErrMismatch, strings.Join(b.mismatch, "; "))
	}
	return r, nil
}

// newBencher fills in the defaults of o.
func newBencher(o Options) (*bencher, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Work == "" {
		o.Work = DefaultWork
	}
	if o.LocalData == "" {
		o.LocalData = DefaultLocalData
	}
	if o.Go == "" {
		o.Go = "go"
	}
	o.Runs = max(o.Runs, 1)
	if len(o.Modes) == 0 {
		o.Modes = slices.Clone(roundModes)
	}
	if o.Examples == "" {
		o.Examples = DefaultExamples
	}
	if o.Analyst == "" {
		o.Analyst = DefaultAnalyst
	}
	if o.SizesData == "" {
		o.SizesData = "data"
	}
	if o.SizesMatches <= 0 {
		o.SizesMatches = DefaultSizesMatches
	}
	if o.AnalystJobQueries == 0 {
		o.AnalystJobQueries = DefaultAnalystJobQueries
	}
	var analyst []SQLJob
	if slices.ContainsFunc(o.Modes, isAnalystMode) {
		var err error
		if analyst, err = AnalystJobs(o.Analyst, o.AnalystJobQueries); err != nil {
			return nil, err
		}
	}
	var examples SQLJob
	if slices.Contains(o.Modes, ModeDemoExamples) {
		var err error
		if examples, err = ExamplesJob(o.Examples); err != nil {
			return nil, err
		}
	}
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		o.Binary = exe
	}
	bin, err := filepath.Abs(o.Binary)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Work, 0o755); err != nil {
		return nil, err
	}
	progress := o.Progress
	return &bencher{o: o, bin: bin, examples: examples, analyst: analyst, analystFailed: map[string][]string{}, logf: func(format string, args ...any) {
		fmt.Fprintf(progress, "bench: "+format+"\n", args...)
	}}, nil
}

// check compares the outputs in dir with the reference's, keeping every
// difference under what's name; true when they are equal.
func (b *bencher) check(what, dir string) bool {
	diffs := compareResults(b.want, dir)
	for _, d := range diffs {
		b.mismatch = append(b.mismatch, what+" "+d)
	}
	return len(diffs) == 0
}

// prepareDuckDB builds the DuckDB baseline when asked to, and returns its
// path, or "" and the one-line reason why there is none.
func (b *bencher) prepareDuckDB(ctx context.Context) (path, note string) {
	if b.o.DuckDB == "" {
		return "", "none was asked for (--duckdb \"\")."
	}
	abs, err := filepath.Abs(b.o.DuckDB)
	if err != nil {
		return "", fmt.Sprintf("%s: %v.", b.o.DuckDB, err)
	}
	if b.o.DuckDBSrc != "" {
		b.logf("building the DuckDB baseline from %s into %s...", b.o.DuckDBSrc, relPath(abs))
		if err := buildDuckDB(ctx, b.o.Go, b.o.DuckDBSrc, abs); err != nil {
			b.logf("DuckDB: %v; going on without it", err)
			return "", fmt.Sprintf("building it failed (%v), so the bench went on without it.", err)
		}
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Sprintf("%v.", err)
	}
	return abs, ""
}

// buildDuckDB builds the module in src (tools/duckdb) into out with CGO;
// an error is one line.
func buildDuckDB(ctx context.Context, goCmd, src, out string) error {
	cmd := exec.CommandContext(ctx, goCmd, "build", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	output, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("`CGO_ENABLED=1 %s build` in %s: %v%s", goCmd, src, err, firstErrorLine(output))
	}
	return nil
}

// firstErrorLine is ": " and the first line of a go build's output that is
// not a "# package" heading, cut to 200 bytes; "" if there is none.
func firstErrorLine(output []byte) string {
	for _, line := range strings.Split(string(output), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(line) > 200 {
			line = line[:200] + "..."
		}
		return ": " + line
	}
	return ""
}

// reference runs the reference evaluator once: the outputs every other
// run is compared with.
func (b *bencher) reference(ctx context.Context, r *Report) error {
	dir := filepath.Join(b.o.Work, "reference")
	b.logf("reference evaluator...")
	run, err := runChild(ctx, "wololo reference", b.bin, filepath.Join(b.o.Work, "reference.log"),
		"reference", "--matches", b.o.Matches, "--players", b.o.Players, "--out", dir)
	if err != nil {
		return err
	}
	if b.want, err = readResults(dir); err != nil {
		return fmt.Errorf("reference outputs: %w", err)
	}
	run.Equal = true
	r.Reference = run
	r.Samples = append(r.Samples, sampleOf(ModeReference, 0, run))
	b.logf("reference: %s, peak RSS %s", secs(run.Wall), mib(run.PeakRSS))
	return nil
}

// rounds runs the modes of o.Modes (DuckDB, demo, demo's job of example
// queries, local mode) o.Runs times, interleaved, and keeps
// each mode's run of median wall time as its detailed run.
func (b *bencher) rounds(ctx context.Context, r *Report) error {
	var demos []ProcessRun
	var locals []LocalRun
	ducks := map[string][]ProcessRun{}
	duckFailed := map[string]bool{}
	compared := map[string][]ComparedRun{}
	for k := 1; k <= b.o.Runs; k++ {
		for _, mode := range []string{ModeDuckDBPlain, ModeDuckDB} {
			if b.duck == "" || !b.runs(mode) || duckFailed[mode] {
				continue
			}
			run, err := b.runDuckDB(ctx, k, mode)
			if err != nil {
				b.logf("%s: %v; going on without it", modeLabel(mode), err)
				note := fmt.Sprintf("it failed in run %d (%s), so the bench went on without it; its log is %s.",
					k, firstLine(err.Error()), relPath(filepath.Join(b.o.Work, mode+".log")))
				if mode == ModeDuckDBPlain {
					r.DuckDBPlainNote = note
				} else {
					r.DuckDBNote = note
				}
				duckFailed[mode], ducks[mode] = true, nil
				r.Samples = dropMode(r.Samples, mode)
				continue
			}
			ducks[mode] = append(ducks[mode], run)
			r.Samples = append(r.Samples, sampleOf(mode, k, run))
		}
		if b.runs(ModeDemo) {
			demo, err := b.runDemo(ctx, k, ModeDemo)
			if err != nil {
				return err
			}
			demos = append(demos, demo)
			r.Samples = append(r.Samples, sampleOf(ModeDemo, k, demo))
		}
		if b.runs(ModeDemoExamples) {
			run, err := b.runDemoSQL(ctx, k, b.examples)
			if err != nil {
				return err
			}
			compared[ModeDemoExamples] = append(compared[ModeDemoExamples], ComparedRun{Mode: ModeDemoExamples, Queries: b.examples.Names(), Run: run, Span: run.Wall})
			r.Samples = append(r.Samples, sampleOf(ModeDemoExamples, k, run))
		}
		for _, mode := range []string{ModeDuckDBAnalyst, ModeDuckDBAnalystBounded, ModeDemoAnalyst} {
			if !b.runs(mode) || (isDuckDBAnalyst(mode) && (b.duck == "" || duckFailed[mode])) {
				continue
			}
			run, err := b.runAnalyst(ctx, k, mode)
			if err != nil && isDuckDBAnalyst(mode) {
				b.logf("%s: %v; going on without it", mode, err)
				if mode == ModeDuckDBAnalyst { // the baseline: the bounded one is beside it
					r.AnalystNote = fmt.Sprintf("DuckDB failed in run %d (%s), so the analyst modes are not compared with it.", k, firstLine(err.Error()))
				}
				duckFailed[mode] = true
				r.Samples = dropMode(r.Samples, mode)
				delete(compared, mode)
				continue
			}
			if err != nil {
				return err
			}
			compared[mode] = append(compared[mode], ComparedRun{Mode: mode, Queries: jobsNames(b.analyst), Run: run, Span: run.Wall})
			r.Samples = append(r.Samples, sampleOf(mode, k, run))
		}
		if b.runs(ModeDemoStanding) {
			run, err := b.runDemo(ctx, k, ModeDemoStanding, "--epochs", strconv.Itoa(StandingEpochs))
			if err != nil {
				return err
			}
			compared[ModeDemoStanding] = append(compared[ModeDemoStanding], ComparedRun{Mode: ModeDemoStanding, Queries: queries.Names, Run: run, Span: run.Wall})
			r.Samples = append(r.Samples, sampleOf(ModeDemoStanding, k, run))
		}
		if b.runs(ModeDemoAppend) {
			run, err := b.runDemoAppend(ctx, k)
			if err != nil {
				return err
			}
			compared[ModeDemoAppend] = append(compared[ModeDemoAppend], ComparedRun{Mode: ModeDemoAppend, Queries: queries.Names, Run: run, Span: run.Wall})
			r.Samples = append(r.Samples, sampleOf(ModeDemoAppend, k, run))
		}
		if b.runs(ModeLocal) {
			local, err := b.runLocalRound(ctx, k)
			if err != nil {
				return err
			}
			locals = append(locals, local)
			r.Samples = append(r.Samples, localSample(ModeLocal, k, local))
		}
		if b.runs(ModeLocalStanding) {
			run, err := b.runLocalStandingRound(ctx, k)
			if err != nil {
				return err
			}
			r.Samples = append(r.Samples, localSample(ModeLocalStanding, k, run))
		}
		if b.runs(ModeLocalAnalyst) {
			run, err := b.runAnalyst(ctx, k, ModeLocalAnalyst)
			if err != nil {
				return err
			}
			compared[ModeLocalAnalyst] = append(compared[ModeLocalAnalyst], ComparedRun{Mode: ModeLocalAnalyst, Queries: jobsNames(b.analyst), Run: run, Span: run.Wall})
			r.Samples = append(r.Samples, sampleOf(ModeLocalAnalyst, k, run))
		}
		r.AnalystFailed = nil
		for _, mode := range []string{ModeDemoAnalyst, ModeLocalAnalyst} {
			if jobs := b.analystFailed[mode]; len(jobs) > 0 {
				r.AnalystFailed = append(r.AnalystFailed, AnalystFailure{Mode: mode, Jobs: jobs})
			}
		}
		if b.runs(ModeDuckDBAnalyst) && !duckFailed[ModeDuckDBAnalyst] && b.duck != "" {
			r.AnalystOutputs = nil
			for _, mode := range []string{ModeDemoAnalyst, ModeLocalAnalyst} {
				if b.runs(mode) {
					r.AnalystOutputs = append(r.AnalystOutputs, b.compareAnalyst(mode))
				}
			}
		}
	}
	if i := MedianRun(r.SamplesOf(ModeDuckDB)); i >= 0 {
		r.DuckDB = ducks[ModeDuckDB][i]
		r.Machine.DuckDB = b.duckVersion
	}
	if i := MedianRun(r.SamplesOf(ModeDuckDBPlain)); i >= 0 {
		r.DuckDBPlain = ducks[ModeDuckDBPlain][i]
		r.PlainDiffs = b.plainDiffs
		r.Machine.DuckDB = b.duckVersion
	}
	if i := MedianRun(r.SamplesOf(ModeDemo)); i >= 0 {
		r.Demo = demos[i]
	}
	for _, mode := range modeOrder {
		if runs := compared[mode]; len(runs) > 0 {
			r.Compared = append(r.Compared, runs[MedianRun(r.SamplesOf(mode))])
		}
	}
	i := MedianRun(r.SamplesOf(ModeLocal))
	if i < 0 {
		return nil
	}
	r.Local = locals[i]
	return b.keepProfiles(i + 1)
}

// runDemoSQL is one run of demo mode on a job of SQL queries of its own
// (given as --query flags): each output there with its header.
func (b *bencher) runDemoSQL(ctx context.Context, k int, j SQLJob) (ProcessRun, error) {
	dir := filepath.Join(b.o.Work, j.Mode)
	if err := os.RemoveAll(dir); err != nil {
		return ProcessRun{}, err
	}
	b.logf("run %d/%d: %s (%d SQL queries)...", k, b.o.Runs, j.Mode, len(j.Queries))
	args := append([]string{"demo", "--matches", b.o.Matches, "--players", b.o.Players, "--out", dir, "--log-level", "warn"}, j.Args()...)
	run, err := runChild(ctx, "wololo demo --query", b.bin, filepath.Join(b.o.Work, j.Mode+".log"), args...)
	if err != nil {
		return run, err
	}
	what := fmt.Sprintf("%s (run %d)", j.Mode, k)
	diffs := checkSQLOutputs(j, dir)
	for _, d := range diffs {
		b.mismatch = append(b.mismatch, what+" "+d)
	}
	run.Equal = len(diffs) == 0
	b.logf("run %d/%d: %s %s, CPU %s, peak RSS %s, outputs as expected: %v", k, b.o.Runs, j.Mode, secs(run.Wall), secs(run.CPU), mib(run.PeakRSS), run.Equal)
	return run, nil
}

// runDuckDB is one run of a DuckDB baseline: exact DuckDB (ModeDuckDB),
// whose outputs must equal the reference's, or plain DuckDB
// (ModeDuckDBPlain, duckdb-queries --plain), whose differences from the
// reference are kept in b.plainDiffs, not counted as a mismatch.
func (b *bencher) runDuckDB(ctx context.Context, k int, mode string) (ProcessRun, error) {
	dir := filepath.Join(b.o.Work, mode)
	if err := os.RemoveAll(dir); err != nil {
		return ProcessRun{}, err
	}
	args := []string{"--matches", b.o.Matches, "--players", b.o.Players, "--out", dir}
	if mode == ModeDuckDBPlain {
		args = append(args, "--plain")
	}
	b.logf("run %d/%d: %s...", k, b.o.Runs, mode)
	logPath := filepath.Join(b.o.Work, mode+".log")
	run, err := runChild(ctx, "duckdb-queries", b.duck, logPath, args...)
	if err != nil {
		return run, err
	}
	if log, err := os.ReadFile(logPath); err == nil {
		b.duckVersion = duckDBVersion(log)
	}
	if mode == ModeDuckDBPlain {
		b.plainDiffs = compareResults(b.want, dir)
		run.Equal = len(b.plainDiffs) == 0
	} else {
		run.Equal = b.check(fmt.Sprintf("%s (run %d)", mode, k), dir)
	}
	b.logf("run %d/%d: %s %s, CPU %s, peak RSS %s, outputs equal: %v", k, b.o.Runs, mode, secs(run.Wall), secs(run.CPU), mib(run.PeakRSS), run.Equal)
	return run, nil
}

// runDemo is one run of demo mode on the four default queries, as
// `wololo demo` runs by default (ModeDemo) or with more flags
// (ModeDemoStanding: --epochs), its outputs byte-equal to the
// reference's.
func (b *bencher) runDemo(ctx context.Context, k int, mode string, flags ...string) (ProcessRun, error) {
	dir := filepath.Join(b.o.Work, mode)
	if err := os.RemoveAll(dir); err != nil {
		return ProcessRun{}, err
	}
	args := append([]string{"demo", "--matches", b.o.Matches, "--players", b.o.Players, "--out", dir, "--log-level", "warn"}, flags...)
	name := strings.TrimSpace("wololo demo " + strings.Join(flags, " "))
	b.logf("run %d/%d: %s (%s)...", k, b.o.Runs, mode, name)
	run, err := runChild(ctx, name, b.bin, filepath.Join(b.o.Work, mode+".log"), args...)
	if err != nil {
		return run, err
	}
	run.Equal = b.check(fmt.Sprintf("%s (run %d)", mode, k), dir)
	b.logf("run %d/%d: %s %s, CPU %s, peak RSS %s, outputs equal: %v", k, b.o.Runs, mode, secs(run.Wall), secs(run.CPU), mib(run.PeakRSS), run.Equal)
	return run, nil
}

// runDemoAppend is one run of ModeDemoAppend: demo mode's standing job
// of all but AppendPercent of the rows, then the rest appended, its
// outputs byte-equal to the reference's; the run's CPU and wall time are
// the last epoch's, read from its version line (epochsplit.LastCost).
func (b *bencher) runDemoAppend(ctx context.Context, k int) (ProcessRun, error) {
	run, err := b.runDemo(ctx, k, ModeDemoAppend, "--epochs", "2", "--last-epoch-percent", strconv.Itoa(AppendPercent))
	if err != nil {
		return run, err
	}
	logPath := filepath.Join(b.o.Work, ModeDemoAppend+".log")
	out, err := os.ReadFile(logPath)
	if err != nil {
		return run, err
	}
	epoch, cpu, wall, ok := epochsplit.LastCost(out)
	if !ok || epoch != 2 {
		return run, fmt.Errorf("%s: no cost of version 2 in %s", ModeDemoAppend, logPath)
	}
	b.logf("run %d/%d: %s: the %d%% append %s, CPU %s (the whole process %s of CPU)", k, b.o.Runs, ModeDemoAppend, AppendPercent, secs(wall), secs(cpu), secs(run.CPU))
	run.CPU, run.Wall = cpu, wall
	return run, nil
}

// runLocalRound is one run of local mode, its profiles in a directory of
// its own until keepProfiles.
func (b *bencher) runLocalRound(ctx context.Context, k int) (LocalRun, error) {
	b.logf("run %d/%d: local mode...", k, b.o.Runs)
	out := filepath.Join(b.o.Work, "local")
	run, err := runLocal(ctx, b.o, b.bin, out, b.roundProfiles(k), false, b.logf)
	if err != nil {
		return run, err
	}
	run.Equal = b.check(fmt.Sprintf("local (run %d)", k), out)
	b.logf("run %d/%d: local %s end to end, outputs equal: %v", k, b.o.Runs, secs(run.Wall), run.Equal)
	return run, nil
}

// runLocalStandingRound is round k's run of ModeLocalStanding: local
// mode's job as a standing job of one upload cut every
// StandingEpochEvery, closed at its end; its results checked as a batch
// job's are.
func (b *bencher) runLocalStandingRound(ctx context.Context, k int) (LocalRun, error) {
	b.logf("run %d/%d: local mode, a standing job cut every %s...", k, b.o.Runs, StandingEpochEvery)
	out := filepath.Join(b.o.Work, ModeLocalStanding)
	o := b.o
	o.epochEvery = StandingEpochEvery
	run, err := runLocal(ctx, o, b.bin, out, filepath.Join(b.o.Work, "profiles-"+ModeLocalStanding), false, b.logf)
	if err != nil {
		return run, err
	}
	run.Equal = b.check(fmt.Sprintf("%s (run %d)", ModeLocalStanding, k), out)
	b.logf("run %d/%d: %s: first version after %s, the four queries added to it answered after %s, %s end to end, outputs equal: %v", k, b.o.Runs, ModeLocalStanding, secs(run.FirstVersion), secs(run.AddedQueries), secs(run.Wall), run.Equal)
	return run, nil
}

// roundProfiles is where run k's local processes write their profiles.
func (b *bencher) roundProfiles(k int) string {
	return filepath.Join(b.o.Work, fmt.Sprintf("profiles-run-%d", k))
}

// keepProfiles makes run k's profiles the report's (Work/profiles) and
// removes the other runs'.
func (b *bencher) keepProfiles(k int) error {
	profDir := filepath.Join(b.o.Work, "profiles")
	if err := os.RemoveAll(profDir); err != nil {
		return err
	}
	if b.o.Profile {
		if err := os.Rename(b.roundProfiles(k), profDir); err != nil {
			return fmt.Errorf("keeping the profiles of local run %d: %w", k, err)
		}
	}
	for j := 1; j <= b.o.Runs; j++ {
		os.RemoveAll(b.roundProfiles(j))
	}
	return nil
}

// insecure runs local mode once more with --insecure, for what TLS costs:
// profiled too when the rounds were (into a directory of its own), so
// that both carry the same overhead.
func (b *bencher) insecure(ctx context.Context, r *Report) error {
	b.logf("local mode with --insecure (what TLS costs)...")
	out := filepath.Join(b.o.Work, "local-insecure")
	run, err := runLocal(ctx, b.o, b.bin, out, filepath.Join(b.o.Work, "profiles-insecure"), true, b.logf)
	if err != nil {
		return err
	}
	run.Equal = b.check("local --insecure", out)
	r.LocalInsecure = run
	b.logf("local --insecure: %s end to end, outputs equal: %v", secs(run.Wall), run.Equal)
	return nil
}

// profiles reads the CPU profiles of the detailed local run: its busiest
// process, and the busiest instance of its busiest stage.
func (b *bencher) profiles(ctx context.Context, r *Report) {
	if !b.o.Profile {
		r.ProfileNote = "Profiling was off (--profile=false)."
		return
	}
	profDir := filepath.Join(b.o.Work, "profiles")
	r.Profiles = relPath(profDir)
	s, ok := r.Local.Slowest()
	if !ok {
		r.ProfileNote = "No process's CPU time was measured, so none was profiled."
		return
	}
	var err error
	if r.Profile, err = profile(ctx, b.o.Go, b.bin, filepath.Join(profDir, s.Instance+".prof"), s); err != nil {
		r.ProfileNote = fmt.Sprintf("No profile of %s: %v.", s.Instance, err)
		b.logf("profile: %v", err)
	}
	if busiest, ok := r.Local.BusiestOfTopStage(); ok && busiest.Instance != s.Instance && stageOf(busiest.Instance) != stageOf(s.Instance) {
		if r.StageProfile, err = profile(ctx, b.o.Go, b.bin, filepath.Join(profDir, busiest.Instance+".prof"), busiest); err != nil {
			b.logf("profile: %v", err)
		}
	}
}

// noiseNotes names every run during which other work used more than a
// tenth of the machine.
func noiseNotes(r Report) []string {
	var notes []string
	cpus := max(r.Machine.CPUs, 1)
	for _, s := range r.Samples {
		capacity := s.Span * time.Duration(cpus)
		if s.OtherCPU > capacity/10 {
			notes = append(notes, fmt.Sprintf("While %s ran (%s), other work on the machine (other programs, the kernel) used about %s of CPU time, %.0f%% of its %d CPUs, so its figures are noisy.",
				runName(s), secs(s.Span), secs(s.OtherCPU), 100*s.OtherCPU.Seconds()/capacity.Seconds(), r.Machine.CPUs))
		}
	}
	return notes
}

// runName names a sample in a sentence.
func runName(s Sample) string {
	name := map[string]string{ModeDuckDB: "exact DuckDB", ModeDuckDBPlain: "plain DuckDB", ModeReference: "the reference evaluator",
		ModeDemo: "demo mode (SQL)", ModeDemoExamples: "demo mode's job of example queries", ModeDemoStanding: "demo mode's standing job", ModeDemoAppend: "demo mode's 1% append",
		ModeLocal: "local mode (SQL)", ModeLocalStanding: "local mode's standing job cut by --epoch-every",
		ModeDuckDBAnalyst: "DuckDB's analyst queries", ModeDuckDBAnalystBounded: "DuckDB's analyst queries within " + BoundedDuckDBMemory, ModeDemoAnalyst: "demo mode's analyst queries", ModeLocalAnalyst: "local mode's analyst queries"}[s.Mode]
	if name == "" {
		name = s.Mode
	}
	if s.Run == 0 {
		return name
	}
	return fmt.Sprintf("run %d of %s", s.Run, name)
}

// dropMode is samples without mode's.
func dropMode(samples []Sample, mode string) []Sample {
	kept := samples[:0]
	for _, s := range samples {
		if s.Mode != mode {
			kept = append(kept, s)
		}
	}
	return kept
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// duckDBVersion is the DuckDB version in duckdb-queries' summary line of
// a log, "" if there is none.
func duckDBVersion(log []byte) string {
	if m := duckDBVersionRE.FindSubmatch(log); m != nil {
		return string(m[1])
	}
	return ""
}

var duckDBVersionRE = regexp.MustCompile(`duckdb-queries: DuckDB (v[0-9][^ ,]*)`)

// compose submits the job, as `make submit` does, Runs times to the
// deployed compose project at Options.Compose, each run's outputs checked
// against the reference's.
func (b *bencher) compose(ctx context.Context, r *Report) (err error) {
	if b.o.ComposeUp != "" {
		b.logf("compose deployment: %s", b.o.ComposeUp)
		if err := b.shell(ctx, b.o.ComposeUp); err != nil {
			return fmt.Errorf("compose deployment: %s: %w", b.o.ComposeUp, err)
		}
	}
	if b.o.ComposeDown != "" {
		defer func() {
			b.logf("compose deployment: %s", b.o.ComposeDown)
			if derr := b.shell(context.WithoutCancel(ctx), b.o.ComposeDown); derr != nil && err == nil {
				err = fmt.Errorf("compose deployment: %s: %w", b.o.ComposeDown, derr)
			}
		}()
	}
	tlsConfig, err := (&tlsflags.Flags{Dir: b.o.ComposeTLS, Name: tlsflags.DefaultClient}).GatewayTLS(b.o.Compose)
	if err != nil {
		return fmt.Errorf("compose deployment: %w", err)
	}
	for round := range max(1, b.o.Runs) {
		b.logf("compose deployment at %s: submitting (round %d)...", b.o.Compose, round+1)
		out := filepath.Join(b.o.Work, "compose")
		if err := os.RemoveAll(out); err != nil {
			return err
		}
		busy0, _ := machineBusy()
		self0 := selfCPU()
		start := time.Now()
		_, err := client.Submit(ctx, client.SubmitOptions{Server: b.o.Compose, TLS: tlsConfig, Matches: b.o.Matches, Players: b.o.Players, Out: out})
		run := ProcessRun{Wall: time.Since(start)}
		if err != nil {
			return fmt.Errorf("compose deployment at %s: %w", b.o.Compose, err)
		}
		// The containers' CPU is not this process's to read (they are
		// the engine's children): the machine's busy time stands for it.
		if busy1, err := machineBusy(); err == nil && busy0 > 0 {
			run.CPU = busy1 - busy0 - (selfCPU() - self0)
		}
		run.Equal = b.check("compose", out)
		r.Compose = append(r.Compose, run)
		b.logf("compose: %s end to end, outputs equal: %v", secs(run.Wall), run.Equal)
	}
	return nil
}

// shell runs command with sh -c, its output going to the progress log.
func (b *bencher) shell(ctx context.Context, command string) error {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Stdout, cmd.Stderr = b.o.Progress, b.o.Progress
	return cmd.Run()
}
