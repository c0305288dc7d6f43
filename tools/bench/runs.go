package bench

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Modes, as Sample names them.
const (
	// ModeDuckDBPlain is the DuckDB a user would write (duckdb-queries
	// --plain: read_csv, try_cast, plain SQL): the baseline the targets
	// against DuckDB are set on, not held to the reference's answers.
	ModeDuckDBPlain = "duckdb-plain"
	// ModeDuckDB is exact DuckDB: the contract's value rules in SQL, its
	// answers byte-equal to the reference's.
	ModeDuckDB    = "duckdb"
	ModeReference = "reference"
	// ModeDemo is `wololo demo` as a user runs it: the four default
	// queries (queries/q1.sql .. q4.sql, in the binary) compiled to their
	// SQL plan and run by the SQL engine's in-process runner.
	ModeDemo = "demo"
	// ModeLocal is `wololo local run` as a user runs it: the durable local
	// cluster running the SQL plan of the four default queries (the
	// gateway fills them in for a job without queries of its own).
	ModeLocal = "local"
	// ModeDemoExamples is demo mode running a job of the example user
	// queries (queries/examples, given as --query NAME=FILE).
	ModeDemoExamples = "demo-examples"
	// ModeDemoStanding is demo mode running the four default queries as
	// a standing job fed in StandingEpochs appends (`wololo demo --epochs`,
	// docs/standing.md): every version computed, the final answers the
	// batch job's.
	ModeDemoStanding = "demo-standing"
	// ModeDemoAppend is demo mode running the four default queries as a
	// standing job of all but AppendPercent of the rows in one epoch,
	// then the rest appended (`wololo demo --epochs 2
	// --last-epoch-percent 1`): its Sample's CPU and wall time are the
	// last epoch's alone, as its version line prints them, its peak RSS
	// the process's.
	ModeDemoAppend = "demo-append"
	// ModeLocalStanding is local mode running the four default queries as
	// a standing job of one upload that the gateway cuts into an epoch
	// every StandingEpochEvery of input (`client submit --standing
	// --epoch-every`, as `wololo local run --epoch-every` runs it), then
	// closed: when its first version came out, and its wall time against
	// ModeLocal's; its final answers the batch job's.
	ModeLocalStanding = "local-standing"
	// ModeDuckDBAnalyst is DuckDB running the analyst queries
	// (queries/analyst), the same texts, all in one process over a user's
	// load of the two files (duckdb-queries --query: read_csv, try_cast).
	ModeDuckDBAnalyst = "duckdb-analyst"
	// ModeDuckDBAnalystBounded is ModeDuckDBAnalyst within the memory a
	// Wololo process keeps to (duckdb-queries --memory-limit
	// BoundedDuckDBMemory, its operators spilling past it): not the
	// baseline of a target (that is DuckDB as a user runs it), but what
	// DuckDB does under the bound Wololo holds itself to.
	ModeDuckDBAnalystBounded = "duckdb-analyst-bounded"
	// ModeDemoAnalyst is demo mode running the analyst queries
	// (`wololo demo --query NAME=FILE ...`, one run per job of
	// AnalystJobs, one after the other).
	ModeDemoAnalyst = "demo-analyst"
	// ModeLocalAnalyst is local mode running the analyst queries (a
	// cluster per job, as ModeLocal, the job submitted with its queries).
	ModeLocalAnalyst = "local-analyst"
)

// BoundedDuckDBMemory is ModeDuckDBAnalystBounded's memory_limit: the
// memory budget of a Wololo process (wololo worker --memory-budget's
// default, 512 MiB).
const BoundedDuckDBMemory = "512MiB"

// Issue 41's targets on the analyst queries: demo mode's median wall time
// at most TargetDemoAnalystVsDuckDB times DuckDB's on the same texts
// (ModeDuckDBAnalyst), durable local mode's at most
// TargetLocalAnalystVsDuckDB times.
const (
	TargetDemoAnalystVsDuckDB  = 1.0
	TargetLocalAnalystVsDuckDB = 1.5
)

// AppendPercent is the share of the rows ModeDemoAppend appends last.
const AppendPercent = 1

// TargetAppendVsBatch is issue 40's target on CPU time: appending
// AppendPercent of the dataset to a standing job of the rest against one
// batch job of it all (demo mode, medians).
const TargetAppendVsBatch = 0.05

// StandingEpochEvery is ModeLocalStanding's --epoch-every.
const StandingEpochEvery = time.Second

// Issue 40's targets for ModeLocalStanding: its first version out within
// TargetFirstVersion of the upload's start, and its wall time at most
// TargetEpochEveryVsBatch times ModeLocal's (medians).
const (
	TargetFirstVersion      = 2 * time.Second
	TargetEpochEveryVsBatch = 1.2
)

// TargetAddedVsBatch is issue 40's target for queries added to an open
// standing job: answered within this many times the same queries' batch
// job over the same rows (ModeLocalStanding's added_q1..q4 against
// ModeLocal's wall time, medians).
const TargetAddedVsBatch = 1.5

// StandingEpochs is how many appends ModeDemoStanding feeds the input in.
const StandingEpochs = 100

// TargetStandingVsBatch is issue 40's target on CPU time: the dataset
// as StandingEpochs appends to a standing job against one batch job of
// it (demo mode, medians).
const TargetStandingVsBatch = 1.5

// retiredModes are mode names of earlier benches, refused by ParseModes
// with the names that took their place: before the four default queries
// ran as SQL by default, "demo" and "local" were the hand-written graph
// and these were the SQL plan; the -graph ones ran the hand-written
// graph, retired since (issue 39).
var retiredModes = map[string]string{
	"demo-sql":    "demo (the SQL plan is now the default)",
	"local-sql":   "local (the SQL plan is now the default)",
	"demo-graph":  "demo (the hand-written graph is retired: the SQL plan is measured against the DuckDB baselines)",
	"local-graph": "local (the hand-written graph is retired: the SQL plan is measured against the DuckDB baselines)",
}

// TargetExamplesVsSQL is the SQL target on CPU time: a job of ten user
// queries against the four default ones (both SQL, demo mode).
const TargetExamplesVsSQL = 2.0

// roundModes are the modes that run in the rounds, in their order.
var roundModes = []string{ModeDuckDBPlain, ModeDuckDB, ModeDemo, ModeDemoExamples, ModeDuckDBAnalyst, ModeDuckDBAnalystBounded, ModeDemoAnalyst, ModeDemoStanding, ModeDemoAppend, ModeLocal, ModeLocalStanding, ModeLocalAnalyst}

// Targets against the DuckDB baselines: a mode's median wall time at most
// this many times exact DuckDB's (ModeDuckDB), or plain DuckDB's
// (ModeDuckDBPlain). The targets against plain DuckDB are issue 42's,
// which holds them at 1x and at 2x the dataset (the 2x rows come from
// the sizes table: VsPlainAtSizes); issue 27 had asked 0.7x and 0.4x and
// ended blocked on them.
const (
	TargetLocalVsDuckDB = 0.8
	TargetDemoVsDuckDB  = 0.5
	TargetLocalVsPlain  = 1.0
	TargetDemoVsPlain   = 0.6
)

// VsPlainAtSizes are the multiples of the dataset, besides the rounds'
// own 1x, at which the targets against plain DuckDB are held too, on the
// sizes table's medians (issue 42: at 1x and 2x).
var VsPlainAtSizes = []int{2}

// modeOrder is the order modes are listed in.
var modeOrder = []string{ModeDuckDBPlain, ModeDuckDB, ModeReference, ModeDemo, ModeDemoExamples, ModeDuckDBAnalyst, ModeDuckDBAnalystBounded, ModeDemoAnalyst, ModeDemoStanding, ModeDemoAppend, ModeLocal, ModeLocalStanding, ModeLocalAnalyst}

// modeLabel names a mode in the report.
func modeLabel(mode string) string {
	switch mode {
	case ModeDuckDBPlain:
		return "Plain DuckDB (SQL as a user writes it, one process; the baseline)"
	case ModeDuckDB:
		return "Exact DuckDB (the value rules in SQL, one process)"
	case ModeReference:
		return "Reference evaluator (one process)"
	case ModeDemo:
		return "Demo: the four default queries, SQL plan (one process, in memory)"
	case ModeDemoExamples:
		return "Demo: a SQL job of the example user queries (one process, in memory)"
	case ModeDemoStanding:
		return fmt.Sprintf("Demo: the four default queries as a standing job of %d appends (one process, in memory)", StandingEpochs)
	case ModeDemoAppend:
		return fmt.Sprintf("Demo: %d%% of the rows appended to a standing job of the rest, the append alone (one process, in memory)", AppendPercent)
	case ModeLocal:
		return "Local: the four default queries, SQL plan (separate processes, segment logs, fsync, mutual TLS)"
	case ModeLocalStanding:
		return fmt.Sprintf("Local: the four default queries as a standing job of one upload cut every %s (--epoch-every), then closed", StandingEpochEvery)
	case ModeDuckDBAnalyst:
		return "DuckDB: the analyst queries on a user's load (read_csv, try_cast; one process, the files loaded once)"
	case ModeDuckDBAnalystBounded:
		return "DuckDB: the analyst queries as duckdb-analyst, within memory_limit " + BoundedDuckDBMemory + " (a Wololo process's budget; not a bound on its RSS)"
	case ModeDemoAnalyst:
		return "Demo: the analyst queries (one process per job, in memory)"
	case ModeLocalAnalyst:
		return "Local: the analyst queries (a cluster per job: separate processes, segment logs, fsync, mutual TLS)"
	}
	return mode
}

// Sample is one run of one mode.
type Sample struct {
	Mode string
	// Run is the round it belongs to, from 1; 0 for the reference
	// evaluator's one run before the rounds.
	Run  int
	Wall time.Duration
	// CPU is every process of the run's: the child's rusage, or local
	// mode's processes and its client (the bench process) added up.
	CPU     time.Duration
	PeakRSS int64 // the process's, or local mode's largest
	Equal   bool  // outputs byte-equal to the reference's
	// OtherCPU is what the rest of the machine used meanwhile, over Span
	// (the wall time; for local mode with the cluster's start).
	OtherCPU time.Duration
	Span     time.Duration
	// FirstVersion is, for a standing job of local mode
	// (ModeLocalStanding), when its first version was out.
	FirstVersion time.Duration `json:",omitempty"`
	// AddedQueries is, for that job, how long adding the four default
	// queries to it took (LocalRun.AddedQueries).
	AddedQueries time.Duration `json:",omitempty"`
}

// sampleOf is a single-process run as a Sample.
func sampleOf(mode string, run int, p ProcessRun) Sample {
	return Sample{Mode: mode, Run: run, Wall: p.Wall, CPU: p.CPU, PeakRSS: p.PeakRSS, Equal: p.Equal, OtherCPU: p.OtherCPU, Span: p.Wall}
}

// localSample is a run of local mode (ModeLocal) as a
// Sample: its other work measured over the cluster's start too.
func localSample(mode string, run int, l LocalRun) Sample {
	s := sampleOf(mode, run, l.processRun())
	s.Span = l.Startup + l.Wall
	s.FirstVersion, s.AddedQueries = l.FirstVersion, l.AddedQueries
	return s
}

// processRun sums a run of local mode up as one process's: its
// processes' CPU and the client's, the largest process's peak RSS.
func (l LocalRun) processRun() ProcessRun {
	return ProcessRun{Wall: l.Wall, CPU: l.Totals().CPU + l.ClientCPU, PeakRSS: l.Targets().MaxRSS.PeakRSS, Equal: l.Equal, OtherCPU: l.OtherCPU}
}

// SamplesOf is the runs of one mode, in the order they ran.
func (r Report) SamplesOf(mode string) []Sample {
	var out []Sample
	for _, s := range r.Samples {
		if s.Mode == mode {
			out = append(out, s)
		}
	}
	return out
}

// Median is the median of a mode's runs: wall time and CPU each on its
// own (the mean of the two middle values when there is an even number).
type Median struct {
	Runs      int
	Wall, CPU time.Duration
	// FirstVersion and AddedQueries are the medians of the runs' (a
	// standing job's; 0 for others).
	FirstVersion, AddedQueries time.Duration
}

// MedianOf is the median of a mode's runs (Runs 0 when it has none).
func (r Report) MedianOf(mode string) Median {
	s := r.SamplesOf(mode)
	walls := make([]time.Duration, len(s))
	cpus := make([]time.Duration, len(s))
	firsts := make([]time.Duration, len(s))
	added := make([]time.Duration, len(s))
	for i, x := range s {
		walls[i], cpus[i], firsts[i], added[i] = x.Wall, x.CPU, x.FirstVersion, x.AddedQueries
	}
	return Median{Runs: len(s), Wall: median(walls), CPU: median(cpus), FirstVersion: median(firsts), AddedQueries: median(added)}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianRun is the index, among samples, of the run whose wall time is
// the median (the lower of the two middle ones for an even count): the
// run whose details the report shows. -1 if there is none.
func MedianRun(samples []Sample) int {
	if len(samples) == 0 {
		return -1
	}
	idx := make([]int, len(samples))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(samples[a].Wall, samples[b].Wall) })
	return idx[(len(idx)-1)/2]
}

// medianOfRuns is the run of median wall time among runs (MedianRun's
// pick; runs must not be empty) and whether every run's outputs were
// equal to the reference's: what each run gives is said by of.
func medianOfRuns[T any](runs []T, of func(T) (wall time.Duration, equal bool)) (T, bool) {
	samples := make([]Sample, len(runs))
	all := true
	for i, run := range runs {
		wall, equal := of(run)
		samples[i] = Sample{Wall: wall}
		all = all && equal
	}
	return runs[MedianRun(samples)], all
}

// Ratio is a mode's median against a baseline's: wall time and CPU, each
// the mode's over the baseline's (below 1 is faster). ok is false when
// either has no run.
type Ratio struct {
	Wall, CPU float64
	ok        bool
}

// RatioTo is mode's Ratio to base's (ModeDuckDBPlain or ModeDuckDB).
func (r Report) RatioTo(mode, base string) Ratio {
	m, d := r.MedianOf(mode), r.MedianOf(base)
	if m.Runs == 0 || d.Runs == 0 {
		return Ratio{}
	}
	return ratioOf(m.Wall, m.CPU, d.Wall, d.CPU)
}

// ratioOf is a run's Ratio to a baseline's from their wall and CPU times
// (not ok without a wall time on either side; no CPU ratio without the
// baseline's CPU): the rounds' medians' (RatioTo) and a size's
// (SizeResult.VsPlain).
func ratioOf(wall, cpu, baseWall, baseCPU time.Duration) Ratio {
	if wall <= 0 || baseWall <= 0 {
		return Ratio{}
	}
	ratio := Ratio{Wall: wall.Seconds() / baseWall.Seconds(), ok: true}
	if baseCPU > 0 {
		ratio.CPU = cpu.Seconds() / baseCPU.Seconds()
	}
	return ratio
}

// against is how a target's row gives its measure: the wall times'
// ratio, the one the target holds, with the two wall times, and the CPU
// times' ratio where it is known ("1.13x (9.64 s against 8.51 s; CPU
// 1.05x)"). The CPU drifts less than the wall time when the machine is
// busier in one round than in another, so it shows what the drift hides.
func against(ratio Ratio, wall, baseWall time.Duration) string {
	text := fmt.Sprintf("%.2fx (%s against %s", ratio.Wall, secs(wall), secs(baseWall))
	if ratio.CPU > 0 {
		text += fmt.Sprintf("; CPU %.2fx", ratio.CPU)
	}
	return text + ")"
}

// VsDuckDB is a target on a mode's median wall time against a DuckDB
// baseline's.
type VsDuckDB struct {
	Mode  string
	Label string // how the target names the mode
	Base  string // ModeDuckDBPlain or ModeDuckDB
	Max   float64
}

// vsDuckDBTargets are the targets against the baselines.
var vsDuckDBTargets = []VsDuckDB{
	{ModeLocal, "Durable local mode", ModeDuckDBPlain, TargetLocalVsPlain},
	{ModeDemo, "In-memory demo", ModeDuckDBPlain, TargetDemoVsPlain},
	{ModeLocal, "Durable local mode", ModeDuckDB, TargetLocalVsDuckDB},
	{ModeDemo, "In-memory demo", ModeDuckDB, TargetDemoVsDuckDB},
}

// Met says whether r meets t, and whether it could be measured at all.
func (t VsDuckDB) Met(r Report) (met, measured bool) {
	ratio := r.RatioTo(t.Mode, t.Base)
	return ratio.ok && ratio.Wall <= t.Max, ratio.ok
}

// CPURatio is mode's median CPU time over base's (ok false when either
// has no run).
func (r Report) CPURatio(mode, base string) (ratio float64, ok bool) {
	m, b := r.MedianOf(mode), r.MedianOf(base)
	if m.Runs == 0 || b.Runs == 0 || m.CPU <= 0 || b.CPU <= 0 {
		return 0, false
	}
	return m.CPU.Seconds() / b.CPU.Seconds(), true
}
