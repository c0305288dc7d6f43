package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Targets of the system, checked by the report.
const (
	// TargetWall bounds local mode's end-to-end time on the full dataset.
	TargetWall = 30 * time.Second
	// TargetRSS bounds every local-mode process's peak resident set.
	TargetRSS = 512 << 20
)

// Report is everything one bench run measured. The zero values of optional
// parts render as "not measured".
type Report struct {
	Date      time.Time
	Command   string // the command that produced the report
	Machine   Machine
	Dataset   Dataset
	Reference ProcessRun
	// DuckDB is exact DuckDB's run of median wall time; zero if it did
	// not run (DuckDBNote says why: it covers both baselines when the
	// binary could not be built).
	DuckDB     ProcessRun
	DuckDBNote string
	// DuckDBPlain is plain DuckDB's run of median wall time; zero if it
	// did not run (DuckDBPlainNote or DuckDBNote says why). PlainDiffs are
	// the output files where it differs from the reference: plain DuckDB
	// is not exact, which is reported, not a mismatch.
	DuckDBPlain     ProcessRun
	DuckDBPlainNote string
	PlainDiffs      []string
	// Demo and Local are the runs of median wall time of their modes (the
	// defaults: the SQL plan of the four default queries).
	Demo  ProcessRun
	Local LocalRun
	// Compared are the runs of the modes measured beside the defaults:
	// the job of example queries (ModeDemoExamples), its run of median
	// wall time.
	Compared []ComparedRun
	// AnalystOutputs compare the analyst modes' files with DuckDB's of
	// the last round; AnalystNote says why they were not, when DuckDB
	// failed.
	AnalystOutputs []AnalystOutputs `json:",omitempty"`
	// AnalystJobs says how Wololo's analyst modes split the queries
	// (analystJobsText): "one job of 26 queries".
	AnalystJobs string `json:",omitempty"`
	// AnalystFailed are the jobs that failed in the analyst modes' last
	// runs.
	AnalystFailed []AnalystFailure `json:",omitempty"`
	AnalystNote   string           `json:",omitempty"`
	// Rounds is how many times each mode of the rounds ran,
	// interleaved; Samples is every run of every mode, in the order they
	// ran (the reference's one run first).
	Rounds  int
	Samples []Sample
	// Compose are the runs of the job on a deployed compose project
	// (Options.Compose), in the order they ran; their CPU is the
	// machine's busy time but the bench's own.
	Compose []ProcessRun `json:",omitempty"`
	// LocalInsecure is local mode again with --insecure (no TLS), for
	// what TLS costs.
	LocalInsecure LocalRun
	// Profile is the CPU profile of the local process that used the most
	// CPU; nil if there is none (ProfileNote says why).
	Profile     *Profile
	ProfileNote string
	// StageProfile is the profile of the busiest instance of the stage
	// whose instances used the most CPU together, when that is another
	// stage than Profile's; nil otherwise.
	StageProfile *Profile
	// Profiles is where every local process's CPU profile was written
	// ("" if profiling was off).
	Profiles string
	// Micro is the output of the Go micro-benchmarks ("" if not run).
	Micro string
	// Notes are free-form lines the runner wants in the report (warnings).
	Notes []string
	// Kills are local runs with one process SIGKILLed at KillAt of the
	// median local run's wall time.
	Kills []LocalRun
	// Scaling are local runs at other replica counts of the sharded task.
	Scaling []ScalingRun
	// Sizes are the runs at each multiple of the dataset (sizes.go).
	Sizes []SizeResult `json:",omitempty"`
}

// Machine describes where the bench ran.
type Machine struct {
	CPUs      int
	CPUModel  string
	MemTotal  int64 // bytes
	GoVersion string
	OS, Arch  string
	Kernel    string
	LoadAvg   string // /proc/loadavg's 1, 5 and 15 minute figures at the start
	DuckDB    string // the DuckDB version of the baselines, "" if neither ran
}

// Dataset is the input.
type Dataset struct {
	Matches, Players        string // paths
	MatchRows, PlayerRows   int64  // data records (malformed ones too), headers excluded
	MatchBytes, PlayerBytes int64
}

// Rows is the number of input rows of both files.
func (d Dataset) Rows() int64 { return d.MatchRows + d.PlayerRows }

// Bytes is the size of both files.
func (d Dataset) Bytes() int64 { return d.MatchBytes + d.PlayerBytes }

// ProcessRun is one single-process run (reference or demo).
type ProcessRun struct {
	Wall    time.Duration
	PeakRSS int64 // bytes
	CPU     time.Duration
	// Equal says the four outputs are byte-equal to the reference's
	// (always true for the reference itself once it ran).
	Equal bool
	// OtherCPU is the CPU time the rest of the machine (other programs,
	// the kernel) used meanwhile: the machine's busy time minus this
	// run's and the bench's own. Noise, when large.
	OtherCPU time.Duration
}

// ComparedRun is a run of a mode measured beside the defaults: demo mode
// on a job of SQL queries of its own.
type ComparedRun struct {
	Mode string
	// Queries are the names of the job's queries.
	Queries []string
	Run     ProcessRun
	// Span is what Run.OtherCPU was measured over: the wall time, and for
	// local mode the cluster's start too.
	Span time.Duration
}

// ComparedOf is the run of a mode measured beside the defaults (ok false
// when it did not run).
func (r Report) ComparedOf(mode string) (ComparedRun, bool) {
	for _, c := range r.Compared {
		if c.Mode == mode {
			return c, true
		}
	}
	return ComparedRun{}, false
}

// outputs says how a run's outputs compared, by its mode.
func outputs(mode string, p ProcessRun) string {
	if mode == ModeDuckDBPlain && p.Wall > 0 && !p.Equal {
		return "not exact: differs from the reference (see Against DuckDB)"
	}
	if isAnalystMode(mode) && p.Wall > 0 {
		if p.Equal {
			return "every file written (compared with DuckDB's below)"
		}
		return "**some job failed or file missing** (below)"
	}
	if mode == ModeDemoExamples && p.Wall > 0 {
		if p.Equal {
			return "every file written (no reference: tools/duckdb's test holds them against DuckDB)"
		}
		return "**some file missing**"
	}
	return equal(p)
}

// otherShare is OtherCPU as a part of the machine's capacity over d.
func otherShare(other, d time.Duration, cpus int) string {
	if d <= 0 || cpus <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100*max(other, 0).Seconds()/(d.Seconds()*float64(cpus)))
}

// LocalRun is one job through a local cluster.
type LocalRun struct {
	Startup time.Duration // local.Start until every process answers
	Wall    time.Duration // submit start until the results are on disk
	// FirstVersion is, for a standing job (ModeLocalStanding), when its
	// first version was out, from the submit's start.
	FirstVersion time.Duration `json:",omitempty"`
	// AddedQueries is, for that standing job, how long adding the four
	// default queries again (as added_q1..added_q4) took, from the call
	// until their first version was out: over every row so far, from
	// the gateway's retained input, with no upload.
	AddedQueries time.Duration `json:",omitempty"`
	Upload       time.Duration // the client's upload of both files
	Durable      bool          // the processes kept their state in durable stores
	Procs        []ProcStat
	Equal        bool
	// CPUNote says how CPU time was measured.
	CPUNote string
	// ClientCPU is the bench process's CPU during the run (the client).
	ClientCPU time.Duration
	// MachineBusy is the CPU time the whole machine was busy from the
	// cluster's start to the end of the job (every program, all CPUs).
	MachineBusy time.Duration
	// OtherCPU is MachineBusy minus the processes' and the client's CPU.
	OtherCPU time.Duration
	// DiskIdle is what the processes' data directories held on disk once
	// the cluster was up, before the job; DiskPeak the most their stores
	// held during the job (sampled), RetainedPeak the most the gateway's
	// copy of the job's input (inputlog) held.
	DiskIdle, DiskPeak int64
	RetainedPeak       int64 `json:",omitempty"`
	// Killed is the instance SIGKILLed during the job ("" for none), and
	// KilledAt when, from the submit.
	Killed   string
	KilledAt time.Duration
	// DiskLost: the killed instance's data directory was deleted before
	// its restart (local.Cluster.LoseDisk); Share is then its share of
	// the work up to the kill: KilledAt split evenly among the instances
	// of its task.
	DiskLost bool          `json:",omitempty"`
	Share    time.Duration `json:",omitempty"`
	// Rebuilds are the job's report of what it rebuilt (Job.rebuilds),
	// one line per loss: a lost disk's says how.
	Rebuilds []string `json:",omitempty"`
	// KillWalls are the wall times of every run of a kill case, in the
	// order they ran, when it ran more than once (the LocalRun is the
	// median one's).
	KillWalls []time.Duration `json:",omitempty"`
	// Reference is, for a kill run, the wall time of the run without a
	// kill that its round made just before its kills (0: none; the
	// median local run is its reference).
	Reference time.Duration `json:",omitempty"`
}

// stageOf is an instance's stage: "shard-1" → "shard".
func stageOf(instance string) string {
	if i := strings.LastIndexByte(instance, '-'); i > 0 && i < len(instance)-1 && strings.Trim(instance[i+1:], "0123456789") == "" {
		return instance[:i]
	}
	return instance
}

// BusiestOfTopStage is the instance with the most CPU of the stage whose
// instances used the most CPU together.
func (l LocalRun) BusiestOfTopStage() (ProcStat, bool) {
	stages := l.StageCPU()
	if len(stages) == 0 || stages[0].CPU <= 0 {
		return ProcStat{}, false
	}
	var best ProcStat
	found := false
	for _, p := range l.Procs {
		if stageOf(p.Instance) == stages[0].Stage && (!found || p.CPU > best.CPU) {
			best, found = p, true
		}
	}
	return best, found
}

// StageCPU is the CPU of every stage (instances summed: "shard-1" is
// stage "shard"), largest first.
func (l LocalRun) StageCPU() []StageStat {
	var out []StageStat
	at := map[string]int{}
	for _, p := range l.Procs {
		name := stageOf(p.Instance)
		i, ok := at[name]
		if !ok {
			i = len(out)
			at[name] = i
			out = append(out, StageStat{Stage: name})
		}
		out[i].CPU += p.CPU
		out[i].Instances++
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CPU > out[j].CPU })
	return out
}

// StageStat is one stage's CPU.
type StageStat struct {
	Stage     string
	Instances int
	CPU       time.Duration
}

// ProcStat is one local-mode process.
type ProcStat struct {
	Instance string
	PID      int
	PeakRSS  int64 // bytes
	CPU      time.Duration
	Restarts int
	// Store counters from the process's Status RPC just before the stop.
	Commits, Syncs, StoreBytes int64
	Durable                    bool
	// DiskIdle is what its data directory held once the cluster was up.
	DiskIdle int64
}

// Slowest is the process that used the most CPU (ok false if none has
// any).
func (l LocalRun) Slowest() (ProcStat, bool) {
	var best ProcStat
	found := false
	for _, p := range l.Procs {
		if p.CPU > 0 && (!found || p.CPU > best.CPU) {
			best, found = p, true
		}
	}
	return best, found
}

// Totals sums the processes.
func (l LocalRun) Totals() ProcStat {
	t := ProcStat{Instance: "total"}
	for _, p := range l.Procs {
		t.PeakRSS += p.PeakRSS
		t.CPU += p.CPU
		t.Restarts += p.Restarts
		t.Commits += p.Commits
		t.Syncs += p.Syncs
		t.StoreBytes += p.StoreBytes
	}
	return t
}

// Profile is the top of one process's CPU profile.
type Profile struct {
	Instance string
	Command  string // the pprof command line
	Top      string // its output
	// Groups is the profile's flat time by kind of work, largest first
	// (see Classify).
	Groups []Share
	// Components is its time by the code that asked for it, largest first
	// (see Component).
	Components []Share
	// CPU is the process's CPU time (for the heading).
	CPU time.Duration
}

// Share is a group's part of a profile, with its parts (the packages of
// wololo's own code and of the standard library), largest first.
type Share struct {
	Group   string
	Percent float64
	Parts   []Share
}

// TargetCheck is the outcome of the targets.
type TargetCheck struct {
	WallMet   bool
	RSSMet    bool
	MaxRSS    ProcStat   // the process with the largest peak RSS
	Offenders []ProcStat // processes at or above TargetRSS
}

// Targets checks the local run against TargetWall and TargetRSS.
func (l LocalRun) Targets() TargetCheck {
	c := TargetCheck{WallMet: l.Wall > 0 && l.Wall < TargetWall, RSSMet: len(l.Procs) > 0}
	for _, p := range l.Procs {
		if p.PeakRSS > c.MaxRSS.PeakRSS {
			c.MaxRSS = p
		}
		if p.PeakRSS >= TargetRSS {
			c.Offenders = append(c.Offenders, p)
			c.RSSMet = false
		}
	}
	return c
}

// Render writes the report as markdown.
func Render(w io.Writer, r Report) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	rows := r.Dataset.Rows()

	p("# Benchmarks\n\n")
	p("Generated by `make bench` on %s", r.Date.UTC().Format("2006-01-02 15:04 MST"))
	if r.Command != "" {
		p(" with `%s`", r.Command)
	}
	p(". Do not edit by hand: run `make bench` again.\n\n")

	// Targets first: the answer people look for.
	t := r.Local.Targets()
	p("## Targets\n\n")
	p("| Target | Measured | Met |\n|---|---|---|\n")
	localRan := r.Local.Wall > 0 || r.MedianOf(ModeLocal).Runs > 0
	p("| End to end in local mode (durable, separate processes) < %g s | %s | %s |\n", TargetWall.Seconds(), secs(r.Local.Wall), metIf(localRan, t.WallMet))
	rssMeasured := "not measured"
	if len(r.Local.Procs) > 0 {
		rssMeasured = fmt.Sprintf("largest %s (%s)", mib(t.MaxRSS.PeakRSS), t.MaxRSS.Instance)
	}
	rssMet := metIf(localRan, t.RSSMet)
	if len(t.Offenders) > 0 {
		var names []string
		for _, o := range t.Offenders {
			names = append(names, fmt.Sprintf("%s %s", o.Instance, mib(o.PeakRSS)))
		}
		rssMet += ": " + strings.Join(names, ", ")
	}
	p("| Every local-mode process < %s peak RSS | %s | %s |\n", mib(TargetRSS), rssMeasured, rssMet)
	renderVsDuckDBTargets(p, r)
	renderSQLTargets(p, r)
	renderStorageTargets(p, r)
	p("\n")
	renderKills(p, r)
	renderScaling(p, r)
	renderSizes(p, r)

	p("## Machine\n\n| | |\n|---|---|\n")
	p("| CPUs (nproc) | %d |\n", r.Machine.CPUs)
	if r.Machine.CPUModel != "" {
		p("| CPU | %s |\n", r.Machine.CPUModel)
	}
	p("| Memory | %.1f GiB |\n", float64(r.Machine.MemTotal)/(1<<30))
	p("| Go | %s %s/%s |\n", r.Machine.GoVersion, r.Machine.OS, r.Machine.Arch)
	if r.Machine.DuckDB != "" {
		p("| DuckDB (the baselines, through go-duckdb) | %s |\n", r.Machine.DuckDB)
	}
	if r.Machine.Kernel != "" {
		p("| Kernel | %s |\n", r.Machine.Kernel)
	}
	if r.Machine.LoadAvg != "" {
		p("| Load average at the start (1, 5, 15 min) | %s |\n", r.Machine.LoadAvg)
	}
	p("| Date | %s |\n\n", r.Date.UTC().Format(time.RFC3339))

	p("## Dataset\n\n")
	p("| File | Rows | Size |\n|---|---:|---:|\n")
	p("| `%s` | %s | %s |\n", r.Dataset.Matches, count(r.Dataset.MatchRows), mb(r.Dataset.MatchBytes))
	p("| `%s` | %s | %s |\n", r.Dataset.Players, count(r.Dataset.PlayerRows), mb(r.Dataset.PlayerBytes))
	p("| both | %s | %s |\n\n", count(rows), mb(r.Dataset.Bytes()))
	p("Rows are data records (malformed ones included, headers not); rows/s below is the rows of both files divided by the wall time.\n\n")

	p("## Summary\n\n")
	cpus := r.Machine.CPUs
	p("| Mode | Wall time | Rows/s | Peak RSS | CPU | Outputs | Other work on the machine |\n|---|---:|---:|---:|---:|---|---:|\n")
	p("| Reference evaluator (one process) | %s | %s | %s | %s | the reference | %s |\n",
		secs(r.Reference.Wall), rate(rows, r.Reference.Wall), mib(r.Reference.PeakRSS), secs(r.Reference.CPU),
		otherShare(r.Reference.OtherCPU, r.Reference.Wall, cpus))
	for _, d := range []struct {
		mode string
		run  ProcessRun
	}{{ModeDuckDBPlain, r.DuckDBPlain}, {ModeDuckDB, r.DuckDB}} {
		p("| %s | %s | %s | %s | %s | %s | %s |\n", modeLabel(d.mode),
			secs(d.run.Wall), rate(rows, d.run.Wall), mib(d.run.PeakRSS), secs(d.run.CPU), outputs(d.mode, d.run),
			otherShare(d.run.OtherCPU, d.run.Wall, cpus))
	}
	p("| %s | %s | %s | %s | %s | %s | %s |\n", modeLabel(ModeDemo),
		secs(r.Demo.Wall), rate(rows, r.Demo.Wall), mib(r.Demo.PeakRSS), secs(r.Demo.CPU), equal(r.Demo),
		otherShare(r.Demo.OtherCPU, r.Demo.Wall, cpus))
	for _, c := range r.Compared {
		p("| %s | %s | %s | %s | %s | %s | %s |\n", modeLabel(c.Mode),
			secs(c.Run.Wall), rate(rows, c.Run.Wall), mib(c.Run.PeakRSS), secs(c.Run.CPU), outputs(c.Mode, c.Run),
			otherShare(c.Run.OtherCPU, c.Span, cpus))
	}
	// A run of local mode: its processes' CPU (the client's not counted)
	// and their peak RSS, the largest and summed.
	localRow := func(label string, l LocalRun) {
		lt, ltot := l.Targets(), l.Totals()
		largest := "—"
		if len(l.Procs) > 0 {
			largest = fmt.Sprintf("%s largest, %s summed", mib(lt.MaxRSS.PeakRSS), mib(ltot.PeakRSS))
		}
		store := "in memory"
		if l.Durable {
			store = "segment logs, fsync"
		}
		p("| %s: %d processes, %s, mutual TLS | %s | %s | %s | %s | %s | %s |\n",
			label, len(l.Procs), store, secs(l.Wall), rate(rows, l.Wall), largest, secs(ltot.CPU), equal(ProcessRun{Equal: l.Equal, Wall: l.Wall}),
			otherShare(l.OtherCPU, l.Startup+l.Wall, cpus))
	}
	tot := r.Local.Totals()
	localRow("Local, the four default queries' SQL plan", r.Local)
	plain := r.LocalInsecure.Totals()
	p("| Local again with `--insecure` (no TLS) | %s | %s | %s | %s | %s | %s |\n",
		secs(r.LocalInsecure.Wall), rate(rows, r.LocalInsecure.Wall), mib(plain.PeakRSS)+" summed", secs(plain.CPU),
		equal(ProcessRun{Equal: r.LocalInsecure.Equal, Wall: r.LocalInsecure.Wall}), otherShare(r.LocalInsecure.OtherCPU, r.LocalInsecure.Startup+r.LocalInsecure.Wall, cpus))
	if c, ok := r.ComposeMedian(); ok {
		var walls []string
		for _, run := range r.Compose {
			walls = append(walls, secs(run.Wall))
		}
		p("| The compose deployment (`make up`, then the job as `make submit` sends it; runs: %s): containers, segment logs, fsync, mutual TLS | %s | %s | — | %s of the machine | %s | — |\n",
			strings.Join(walls, ", "), secs(c.Wall), rate(rows, c.Wall), secs(c.CPU), equal(c))
	}
	p("\n")
	if r.LocalInsecure.Wall > 0 && plain.CPU > 0 {
		p("What TLS costs, local mode against itself with `--insecure` in the same run: %+.1f%% wall time, %+.1f%% CPU time (%s against %s of CPU).\n\n",
			100*(r.Local.Wall.Seconds()/r.LocalInsecure.Wall.Seconds()-1), 100*(tot.CPU.Seconds()/plain.CPU.Seconds()-1), secs(tot.CPU), secs(plain.CPU))
	}
	if r.Rounds > 1 {
		p("%s ran %d times each (below); their rows here are their runs of median wall time (of two middle ones, the faster). ", r.roundModeNames(), r.Rounds)
	}
	p("Reference, DuckDB and demo run as child processes of the bench: their wall time is the whole process (start, read, compute, write), their peak RSS and CPU come from the kernel's rusage. ")
	p("Local mode's wall time runs from the client's submit to the four results on disk; starting the cluster (%s) is not included. ", secs(r.Local.Startup))
	p("Other work on the machine is the CPU time the rest of the machine (other programs and the kernel) used during the run, as a part of all %d CPUs: /proc/stat's busy time minus the run's own and the bench's; large values mean noisy figures.\n\n", cpus)

	renderVsDuckDB(p, r)
	renderCompared(p, r)

	p("## Local mode, per process\n\n")
	if len(r.Local.Procs) == 0 {
		p("Not measured.\n\n")
	} else {
		wall := r.Local.Wall.Seconds()
		p("| Process | Peak RSS | CPU | CPU share | Store commits | Commits/s | Syncs | Bytes committed | Restarts |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		procs := append([]ProcStat(nil), r.Local.Procs...)
		procs = append(procs, tot)
		for i, pr := range procs {
			name := pr.Instance
			if i == len(procs)-1 {
				name = "**total**"
			}
			share := "—"
			if tot.CPU > 0 {
				share = fmt.Sprintf("%.1f%%", 100*pr.CPU.Seconds()/tot.CPU.Seconds())
			}
			cps := "—"
			if wall > 0 {
				cps = count(int64(float64(pr.Commits)/wall + 0.5))
			}
			p("| %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", name, mib(pr.PeakRSS), secs(pr.CPU), share,
				count(pr.Commits), cps, count(pr.Syncs), mb(pr.StoreBytes), pr.Restarts)
		}
		p("\n")
		cores := float64(max(r.Machine.CPUs, 1))
		if wall > 0 {
			p("The %d processes used %s of CPU in %s of wall time: %.0f%% of the machine's %d CPUs. ",
				len(r.Local.Procs), secs(tot.CPU), secs(r.Local.Wall), 100*tot.CPU.Seconds()/wall/cores, r.Machine.CPUs)
			var stages []string
			for _, st := range r.Local.StageCPU() {
				stages = append(stages, fmt.Sprintf("%s %s", st.Stage, secs(st.CPU)))
			}
			p("By stage (instances summed): %s. ", strings.Join(stages, ", "))
			p("The stores committed %s batches (%s commits/s) with %s syncs, writing %s. ",
				count(tot.Commits), count(int64(float64(tot.Commits)/wall+0.5)), count(tot.Syncs), mb(tot.StoreBytes))
		}
		p("The client's upload of both files took %s", secs(r.Local.Upload))
		if r.Local.ClientCPU > 0 {
			p("; the client (inside the bench process) used %s of CPU", secs(r.Local.ClientCPU))
		}
		p(". ")
		if r.Local.MachineBusy > 0 {
			p("From the cluster's start to the job's end the whole machine was busy for %s of CPU time, every program counted: %.0f%% of its capacity. ",
				secs(r.Local.MachineBusy), 100*r.Local.MachineBusy.Seconds()/((r.Local.Startup+r.Local.Wall).Seconds()*cores))
		}
		if r.Local.CPUNote != "" {
			p("%s ", r.Local.CPUNote)
		}
		p("Store counters are each process's `wololo.v1.Status/Get` just before the stop (since the process started, so they include the idle start); peak RSS is the kernel's once the process exited.\n\n")
	}

	p("## Slowest stage\n\n")
	if s, ok := r.Local.Slowest(); ok {
		p("`%s` used the most CPU: %s", s.Instance, secs(s.CPU))
		if tot.CPU > 0 {
			p(", %.0f%% of the cluster's", 100*s.CPU.Seconds()/tot.CPU.Seconds())
		}
		if r.Local.Wall > 0 {
			p(" (%.0f%% of one CPU over the job)", 100*s.CPU.Seconds()/r.Local.Wall.Seconds())
		}
		p(".\n\n")
	} else {
		p("Not measured.\n\n")
	}
	if r.Profile != nil {
		renderProfile(p, r.Profile)
	}
	if stages := r.Local.StageCPU(); len(stages) > 0 && tot.CPU > 0 {
		st := stages[0]
		p("By stage, instances summed, `%s` used the most CPU: %s in %d process(es), %.0f%% of the cluster's.",
			st.Stage, secs(st.CPU), st.Instances, 100*st.CPU.Seconds()/tot.CPU.Seconds())
		if r.StageProfile != nil {
			p(" Its busiest instance is `%s` (%s):", r.StageProfile.Instance, secs(r.StageProfile.CPU))
		}
		p("\n\n")
		if r.StageProfile != nil {
			renderProfile(p, r.StageProfile)
		}
	}
	if r.ProfileNote != "" {
		p("%s\n\n", r.ProfileNote)
	}
	if r.Profiles != "" {
		p("Every local process ran with `--cpuprofile`; the profiles are in `%s/<instance>.prof` (look at one with `go tool pprof -top bin/wololo %s/<instance>.prof`). Profiling costs a few percent of CPU.\n\n", r.Profiles, r.Profiles)
	}

	p("## Micro-benchmarks\n\n")
	p("The Go benchmarks of the hot paths (CSV parsing, schema, batches, the generator, the segment store and the Pebble store) run with `make bench-micro` (`WOLOLO_BENCH_JOB_MIB=290 go test -run '^$' -bench . -benchmem ./services/dataflow/csvio/ ./services/dataflow/schema/ ./services/dataflow/batch/ ./services/base/datagen/ ./transport/segstore/ ./transport/durable/`); `make bench` runs them before the end-to-end bench.\n\n")
	if r.Micro != "" {
		p("```\n%s\n```\n\n", strings.TrimRight(r.Micro, "\n"))
	}

	if len(r.Notes) > 0 {
		p("## Notes\n\n")
		for _, n := range r.Notes {
			p("- %s\n", n)
		}
		p("\n")
	}

	p("## Reproduce\n\n")
	p("`make bench` generates the full dataset once into `data/full/` (`wololo datagen` defaults), runs the micro-benchmarks, then `wololo bench`, which builds the DuckDB baselines (`tools/duckdb`, a module of its own, with CGO; `--plain` for plain DuckDB) into `bin/duckdb-queries` and writes this file. ")
	p("Local mode runs on a fresh data directory, `data/bench-local/` (the stores are deleted after the run unless `--keep-data`; each process's log stays as `data/bench-local/<instance>.log`); the outputs of every mode, the reference's and demo's logs and the profiles are under `data/bench/`.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// baseName names a DuckDB baseline in a sentence.
func baseName(base string) string {
	if base == ModeDuckDBPlain {
		return "plain DuckDB"
	}
	return "exact DuckDB"
}

// renderVsDuckDBTargets writes the rows of the targets against DuckDB.
func renderVsDuckDBTargets(p func(string, ...any), r Report) {
	for _, t := range vsDuckDBTargets {
		d := r.MedianOf(t.Base)
		m := r.MedianOf(t.Mode)
		met, measured := t.Met(r)
		text := "not measured"
		switch {
		case measured:
			text = against(r.RatioTo(t.Mode, t.Base), m.Wall, d.Wall)
			if t.Base == ModeDuckDBPlain && !r.DuckDBPlain.Equal {
				text += "; plain DuckDB's answers not exact"
			}
		case d.Runs == 0:
			text = fmt.Sprintf("not measured: %s did not run", baseName(t.Base))
		}
		p("| %s <= %gx %s's wall time (median of %d) | %s | %s |\n", t.Label, t.Max, baseName(t.Base), max(m.Runs, r.Rounds), text, metIf(m.Runs > 0, met))
	}
	renderVsPlainAtSizes(p, r)
}

// renderVsDuckDB writes every mode's median against DuckDB's and every
// run.
func renderVsDuckDB(p func(string, ...any), r Report) {
	p("## Against DuckDB\n\n")
	p("DuckDB answers the same four queries in SQL (`tools/duckdb`, run as `bin/duckdb-queries`), in two ways. ")
	p("**Plain DuckDB** (`--plain`, `tools/duckdb/plain.sql`) is what a user would write: `read_csv` with every column as text and unreadable rows skipped, `try_cast` to BOOLEAN, DOUBLE and INTERVAL, plain SQL; it is the baseline the targets are set on. ")
	p("**Exact DuckDB** loads both files the same way but applies the value rules of docs/queries.md in SQL (regular-expression macros, exact decimals), and its four files must be byte-equal to the reference's.")
	if r.DuckDBNote != "" {
		p(" **No DuckDB baseline in this run**: %s", r.DuckDBNote)
	}
	if r.DuckDBPlainNote != "" {
		p(" **No plain DuckDB in this run**: %s", r.DuckDBPlainNote)
	}
	p("\n\n")
	switch {
	case r.DuckDBPlain.Wall > 0 && !r.DuckDBPlain.Equal:
		p("Plain DuckDB's answers are **not exact**: DuckDB's casts are not the contract's value rules (they accept `+1500`, `1500.`, `1.5e+03` and `NaN` as ratings, NaN above any number, `yes`/`no`/`Y`/`N`/`T`/`F` as booleans, and read no `N days, H:MM:SS` duration; `tools/duckdb/doc.go` lists where they part on this dataset). Its files that differ from the reference's: %s.\n\n", strings.Join(r.PlainDiffs, "; "))
	case r.DuckDBPlain.Wall > 0:
		p("Plain DuckDB's answers were byte-equal to the reference's on this dataset.\n\n")
	}
	if len(r.Samples) == 0 {
		p("Not measured.\n\n")
		return
	}
	if r.MedianOf(ModeDuckDBPlain).Runs > 0 || r.MedianOf(ModeDuckDB).Runs > 0 {
		p("Each mode's median over its runs; %s ran %d time(s) each, interleaved (in that order, then again), after the reference evaluator's one run. ", r.roundModeNames(), max(r.Rounds, 1))
		p("A ratio is the mode's median over plain or exact DuckDB's: below 1.00x is faster than that DuckDB.\n\n")
	} else {
		p("Each mode's median over its runs; %s ran %d time(s) each, interleaved, after the reference evaluator's one run. Without DuckDB there is no ratio.\n\n", r.roundModeNames(), max(r.Rounds, 1))
	}
	p("| Mode | Runs | Median wall time | Wall vs plain DuckDB | Wall vs exact DuckDB | Median CPU | CPU vs plain DuckDB | CPU vs exact DuckDB |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, mode := range modeOrder {
		m := r.MedianOf(mode)
		if m.Runs == 0 {
			continue
		}
		plainWall, plainCPU := ratioCells(r.RatioTo(mode, ModeDuckDBPlain))
		exactWall, exactCPU := ratioCells(r.RatioTo(mode, ModeDuckDB))
		p("| %s | %d | %s | %s | %s | %s | %s | %s |\n", modeLabel(mode), m.Runs, secs(m.Wall), plainWall, exactWall, secs(m.CPU), plainCPU, exactCPU)
	}
	p("\n### Every run\n\n")
	p("| Run | Mode | Wall time | CPU | Peak RSS | Outputs | Other work on the machine |\n|---:|---|---:|---:|---:|---|---:|\n")
	for _, s := range r.Samples {
		p("| %d | %s | %s | %s | %s | %s | %s |\n", s.Run, modeLabel(s.Mode), secs(s.Wall), secs(s.CPU), mib(s.PeakRSS),
			outputs(s.Mode, ProcessRun{Wall: s.Wall, Equal: s.Equal}), otherShare(s.OtherCPU, s.Span, r.Machine.CPUs))
	}
	p("\nRun 0 is the reference evaluator's, whose outputs the others are compared with. ")
	p("CPU is each child process's from the kernel's rusage (every thread); for local mode, its processes' added up plus the client's (the bench process's during the job), and its peak RSS is the largest process's. ")
	p("Local mode's wall time runs from the submit to the results on disk, without the cluster's start. ")
	p("Other work on the machine is measured as in the summary, over each run.\n\n")
}

// ratioCells are a Ratio's wall and CPU as table cells, "—" where there is
// none.
func ratioCells(ratio Ratio) (wall, cpu string) {
	wall, cpu = "—", "—"
	if ratio.ok {
		wall = fmt.Sprintf("%.2fx", ratio.Wall)
		if ratio.CPU > 0 {
			cpu = fmt.Sprintf("%.2fx", ratio.CPU)
		}
	}
	return wall, cpu
}

// renderProfile writes where a profile's time goes and its top.
func renderProfile(p func(string, ...any), prof *Profile) {
	if len(prof.Components) > 0 {
		p("Where the time of `%s` goes, by the code that asked for it (each sample charged to the innermost function on its stack outside the Go runtime and standard library, so copies, allocations and system calls count for their caller): %s.\n\n",
			prof.Instance, WhereTimeGoes(prof.Components))
	}
	if len(prof.Groups) > 0 {
		p("By kind of work (flat time of the functions themselves): %s.\n\n", WhereTimeGoes(prof.Groups))
	}
	p("`%s`:\n\n```\n%s\n```\n\n", prof.Command, strings.TrimRight(prof.Top, "\n"))
}

// metIf is yesNo of met when its mode ran, else "not run" (--modes left
// it out): a target of a mode that did not run is neither met nor missed.
func metIf(ran, met bool) string {
	if !ran {
		return "not run"
	}
	return yesNo(met)
}

func yesNo(ok bool) string {
	if ok {
		return "**yes**"
	}
	return "**no**"
}

func equal(r ProcessRun) string {
	switch {
	case r.Wall == 0:
		return "not run"
	case r.Equal:
		return "byte-equal to the reference"
	}
	return "**DIFFER from the reference**"
}

func secs(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func mib(b int64) string {
	if b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

func mb(b int64) string {
	if b <= 0 {
		return "0 MB"
	}
	return fmt.Sprintf("%.1f MB", float64(b)/1e6)
}

func rate(rows int64, d time.Duration) string {
	if d <= 0 || rows <= 0 {
		return "—"
	}
	r := float64(rows) / d.Seconds()
	if r >= 1e6 {
		return fmt.Sprintf("%.2f M", r/1e6)
	}
	return fmt.Sprintf("%.0f k", r/1e3)
}

// count formats n with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// renderStorageTargets writes the rows of the disk and recovery targets.
func renderStorageTargets(p func(string, ...any), r Report) {
	var largest ProcStat
	for _, ps := range r.Local.Procs {
		if ps.DiskIdle > largest.DiskIdle {
			largest = ps
		}
	}
	if largest.Instance != "" {
		p("| An idle store <= %s on disk | largest %s (%s); %s for the whole idle cluster | %s |\n",
			mib(TargetIdleDisk), mib(largest.DiskIdle), largest.Instance, mib(r.Local.DiskIdle), yesNo(largest.DiskIdle <= TargetIdleDisk))
	}
	if in := r.Dataset.Bytes(); in > 0 && r.Local.DiskPeak > 0 {
		ratio := float64(r.Local.DiskPeak) / float64(in)
		p("| The stores' disk during the job <= %.1fx the input | %s at the peak, %.2fx the input; besides, the gateway's copy of the input a rebuild replays: %s, %.2fx | %s |\n",
			TargetDiskRatio, mib(r.Local.DiskPeak), ratio, mib(r.Local.RetainedPeak), float64(r.Local.RetainedPeak)/float64(in), yesNo(ratio <= TargetDiskRatio))
	}
	if len(r.Kills) > 0 {
		worst, met := time.Duration(0), true
		victim := ""
		for _, k := range r.Kills {
			if k.DiskLost {
				continue
			}
			d, ok := r.KillCost(k)
			met = met && ok
			if victim == "" || d > worst {
				worst, victim = d, k.Killed
			}
		}
		p("| A SIGKILL of any one process at %.0f%% of the job adds <= %g s (median run) | worst %+.2f s (%s) | %s |\n",
			KillAt*100, TargetKillCost.Seconds(), worst.Seconds(), victim, yesNo(met))
		for _, k := range r.Kills {
			if k.DiskLost {
				d, ok := r.KillCost(k)
				p("| %s SIGKILLed at %.0f%% of the job with its data directory deleted adds <= its share of the work so far + %g s | %+.2f s (killed at %s; its share %s) | %s |\n",
					k.Killed, KillAt*100, TargetDiskLossSlack.Seconds(), d.Seconds(), secs(k.KilledAt), secs(k.Share), yesNo(ok))
			}
		}
	}
}

// renderKills writes the recovery case's table.
func renderKills(p func(string, ...any), r Report) {
	if len(r.Kills) == 0 {
		return
	}
	p("## A SIGKILL at %.0f%% of the job\n\n", KillAt*100)
	p("Local mode again, once per kind of process, with that process SIGKILLed at %.0f%% of the median local run's wall time (%s); the runner restarts it (local mode without masters, as above), it recovers from its store, and the job goes on. The last row's victim also loses its data directory before the restart, as a node that does not come back: the gateway sends it again the batches it kept and the shard alone is rebuilt, the job keeping its id (where the plan allows it: else the job runs again from the gateway's copy of its input); its share of the work so far is the time to the kill split evenly among its task's instances. Each case ran as many times as the rounds above, interleaved, and each round began with a run without a kill: what a kill adds is against its own round's run, so that a machine busier in one round than in another is not counted as the kill's. A row is the run of the median cost, and the wall time of every run is beside it.\n\n", KillAt*100, secs(r.Local.Wall))
	p("| Killed | At | Job wall time | Added to its round's run without a kill | Every run | Restarts | Outputs |\n|---|---:|---:|---:|---|---:|---|\n")
	for _, k := range r.Kills {
		d, _ := r.KillCost(k)
		restarts := 0
		for _, ps := range k.Procs {
			if ps.Instance == k.Killed {
				restarts = ps.Restarts
			}
		}
		killed := k.Killed
		if k.DiskLost {
			killed += ", data directory deleted"
		}
		every := secs(k.Wall)
		if len(k.KillWalls) > 0 {
			var ws []string
			for _, w := range k.KillWalls {
				ws = append(ws, secs(w))
			}
			every = strings.Join(ws, ", ")
		}
		p("| %s | %s | %s | %+.2f s | %s | %d | %s |\n", killed, secs(k.KilledAt), secs(k.Wall), d.Seconds(), every, restarts, equal(ProcessRun{Wall: k.Wall, Equal: k.Equal}))
	}
	p("\n")
	for _, k := range r.Kills {
		if k.DiskLost && len(k.Rebuilds) > 0 {
			p("What the job's report said of that row's run: %s.\n\n", k.Rebuilds[len(k.Rebuilds)-1])
		}
	}
}

// roundModeNames names the modes that ran in the rounds, in the order
// they ran: "DuckDB, demo mode and local mode".
func (r Report) roundModeNames() string {
	var names []string
	for _, mode := range roundModes {
		if r.MedianOf(mode).Runs > 0 {
			names = append(names, runName(Sample{Mode: mode}))
		}
	}
	switch len(names) {
	case 0:
		return "no mode"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// ComposeMedian is the compose deployment's run of median wall time, its
// outputs equal only if every run's were; false when it did not run.
func (r Report) ComposeMedian() (ProcessRun, bool) {
	if len(r.Compose) == 0 {
		return ProcessRun{}, false
	}
	m, equal := medianOfRuns(r.Compose, func(p ProcessRun) (time.Duration, bool) { return p.Wall, p.Equal })
	m.Equal = equal
	return m, true
}
