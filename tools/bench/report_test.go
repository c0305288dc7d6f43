package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/services/dataflow/reference"
)

const mib64 = int64(1 << 20)

func fixedReport() Report {
	return Report{
		Date:        time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Command:     "wololo bench --matches m.csv --players p.csv",
		Machine:     Machine{CPUs: 2, CPUModel: "Test CPU", MemTotal: 24 << 30, GoVersion: "go1.26.0", OS: "linux", Arch: "amd64", Kernel: "6.1", LoadAvg: "0.50 0.40 0.30"},
		Dataset:     Dataset{Matches: "m.csv", Players: "p.csv", MatchRows: 3_000_000, PlayerRows: 9_000_000, MatchBytes: 250e6, PlayerBytes: 550e6},
		Reference:   ProcessRun{Wall: 20 * time.Second, PeakRSS: 1500 * mib64, CPU: 25 * time.Second, Equal: true, OtherCPU: 4 * time.Second},
		Demo:        ProcessRun{Wall: 10 * time.Second, PeakRSS: 700 * mib64, CPU: 18 * time.Second, Equal: true},
		DuckDB:      ProcessRun{Wall: 40 * time.Second, PeakRSS: 900 * mib64, CPU: 65 * time.Second, Equal: true, OtherCPU: 8 * time.Second},
		DuckDBPlain: ProcessRun{Wall: 36 * time.Second, PeakRSS: 800 * mib64, CPU: 52 * time.Second, Equal: false},
		PlainDiffs:  []string{"data/bench/duckdb-plain/q1.csv differs (90 bytes, the reference's 100)"},
		Rounds:      3,
		Samples:     fixedSamples(),
		Local: LocalRun{
			Startup: 1500 * time.Millisecond, Wall: 24 * time.Second, Upload: 12 * time.Second, Durable: true,
			Procs: []ProcStat{
				{Instance: "gateway-0", PeakRSS: 100 * mib64, CPU: 8 * time.Second, Commits: 1000, Syncs: 500, StoreBytes: 800e6},
				{Instance: "q3-joiner-0", PeakRSS: 300 * mib64, CPU: 12 * time.Second, Commits: 2000, Syncs: 900, StoreBytes: 100e6, Restarts: 1},
			},
			Equal: true, CPUNote: "CPU from /proc.", ClientCPU: 3 * time.Second, MachineBusy: 40 * time.Second, OtherCPU: 17 * time.Second,
		},
		Profile: &Profile{
			Instance: "q3-joiner-0", Command: "go tool pprof -top -nodecount=15 bin/wololo p/q3-joiner-0.prof",
			Top: "      flat  flat%   sum%        cum   cum%\n     5s 41.67% 41.67%  5s 41.67%  runtime.memmove",
			Groups: []Share{
				{Group: "memory copies", Percent: 41.7},
				{Group: "garbage collection and allocation", Percent: 30},
				{Group: "wololo's own code", Percent: 20, Parts: []Share{{Group: "operators", Percent: 15}, {Group: "csvio", Percent: 4.5}, {Group: "batch", Percent: 0.5}}},
				{Group: "protobuf", Percent: 2},
				{Group: "other Go runtime", Percent: 1},
			},
			Components: []Share{{Group: "Pebble (durable store)", Percent: 60}, {Group: "wololo's own code", Percent: 40, Parts: []Share{{Group: "operators", Percent: 40}}}},
		},
		Profiles: "data/bench/profiles",
		Micro:    "BenchmarkSplit-2   100  1000 ns/op\nPASS\n",
	}
}

// fixedSamples are three rounds after the reference: plain DuckDB's
// median is 36 s of wall time and 52 s of CPU (its answers not exact),
// exact DuckDB's 40 s and 65 s, demo's 10 s and 18 s, local's 24 s and
// 23 s.
func fixedSamples() []Sample {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	s := []Sample{{Mode: ModeReference, Run: 0, Wall: sec(20), CPU: sec(25), PeakRSS: 1500 * mib64, Equal: true, OtherCPU: sec(4), Span: sec(20)}}
	walls := map[string][3]int{ModeDuckDBPlain: {38, 34, 36}, ModeDuckDB: {42, 38, 40}, ModeDemo: {11, 9, 10}, ModeLocal: {26, 23, 24}}
	cpus := map[string][3]int{ModeDuckDBPlain: {50, 55, 52}, ModeDuckDB: {60, 70, 65}, ModeDemo: {18, 19, 17}, ModeLocal: {23, 22, 25}}
	for run := 1; run <= 3; run++ {
		for _, mode := range []string{ModeDuckDBPlain, ModeDuckDB, ModeDemo, ModeLocal} {
			w := sec(walls[mode][run-1])
			s = append(s, Sample{Mode: mode, Run: run, Wall: w, CPU: sec(cpus[mode][run-1]), PeakRSS: 100 * mib64, Equal: mode != ModeDuckDBPlain, Span: w})
		}
	}
	s[6].OtherCPU = 30 * time.Second // run 2 of exact DuckDB: 30 s of 2 × 38 s
	return s
}

// TestRender renders fixed numbers and checks the figures land where they
// belong.
func TestRender(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*Report)
		want    []string
		notWant []string
	}{
		{
			name: "all targets met",
			edit: func(*Report) {},
			want: []string{
				"# Benchmarks", "## Targets", "## Machine", "## Dataset", "## Summary", "## Local mode, per process",
				"## Slowest stage", "## Micro-benchmarks", "## Reproduce",
				"on 2026-01-02 03:04 UTC with `wololo bench --matches m.csv --players p.csv`",
				"| End to end in local mode (durable, separate processes) < 30 s | 24.00 s | **yes** |",
				"| Every local-mode process < 512 MiB peak RSS | largest 300 MiB (q3-joiner-0) | **yes** |",
				"| CPUs (nproc) | 2 |", "| Memory | 24.0 GiB |", "| Go | go1.26.0 linux/amd64 |", "| Load average at the start (1, 5, 15 min) | 0.50 0.40 0.30 |",
				"| `m.csv` | 3,000,000 | 250.0 MB |", "| both | 12,000,000 | 800.0 MB |",
				// 12M rows in 20 s, 10 s, 24 s.
				// Others: 4 s of 2 × 20 s; 0; 17 s of 2 × 25.5 s.
				"| Reference evaluator (one process) | 20.00 s | 600 k | 1500 MiB | 25.00 s | the reference | 10% |",
				"| Demo: the four default queries, SQL plan (one process, in memory) | 10.00 s | 1.20 M | 700 MiB | 18.00 s | byte-equal to the reference | 0% |",
				"| Local, the four default queries' SQL plan: 2 processes, segment logs, fsync, mutual TLS | 24.00 s | 500 k | 300 MiB largest, 400 MiB summed | 20.00 s | byte-equal to the reference | 33% |",
				"starting the cluster (1.50 s) is not included",
				// 2000 commits / 24 s = 83/s; 12 s of 20 s = 60%.
				"| q3-joiner-0 | 300 MiB | 12.00 s | 60.0% | 2,000 | 83 | 900 | 100.0 MB | 1 |",
				"| **total** | 400 MiB | 20.00 s | 100.0% | 3,000 | 125 | 1,400 | 900.0 MB | 1 |",
				"The 2 processes used 20.00 s of CPU in 24.00 s of wall time: 42% of the machine's 2 CPUs.",
				"the client (inside the bench process) used 3.00 s of CPU",
				"By stage (instances summed): q3-joiner 12.00 s, gateway 8.00 s.",
				"the whole machine was busy for 40.00 s of CPU time, every program counted: 78% of its capacity.",
				"`q3-joiner-0` used the most CPU: 12.00 s, 60% of the cluster's (50% of one CPU over the job).",
				"By kind of work (flat time of the functions themselves): memory copies 42%, garbage collection and allocation 30%, wololo's own code 20% (operators 15%, csvio 4%), everything else 3%.",
				"Where the time of `q3-joiner-0` goes, by the code that asked for it (each sample charged to the innermost function on its stack outside the Go runtime and standard library, so copies, allocations and system calls count for their caller): Pebble (durable store) 60%, wololo's own code 40% (operators 40%).",
				"By stage, instances summed, `q3-joiner` used the most CPU: 12.00 s in 1 process(es), 60% of the cluster's.\n\nEvery local process ran",
				"`go tool pprof -top -nodecount=15 bin/wololo p/q3-joiner-0.prof`:\n\n```\n      flat",
				"runtime.memmove\n```",
				"profiles are in `data/bench/profiles/<instance>.prof`",
				"make bench-micro", "```\nBenchmarkSplit-2   100  1000 ns/op\nPASS\n```",
				// Against DuckDB: medians plain 36 s, exact 40 s, demo 10 s,
				// local 24 s; the reference's one run 20 s.
				"| Durable local mode <= 1x plain DuckDB's wall time (median of 3) | 0.67x (24.00 s against 36.00 s; CPU 0.44x); plain DuckDB's answers not exact | **yes** |",
				"| In-memory demo <= 0.6x plain DuckDB's wall time (median of 3) | 0.28x (10.00 s against 36.00 s; CPU 0.35x); plain DuckDB's answers not exact | **yes** |",
				"| Durable local mode <= 0.8x exact DuckDB's wall time (median of 3) | 0.60x (24.00 s against 40.00 s; CPU 0.35x) | **yes** |",
				"| In-memory demo <= 0.5x exact DuckDB's wall time (median of 3) | 0.25x (10.00 s against 40.00 s; CPU 0.28x) | **yes** |",
				"| Plain DuckDB (SQL as a user writes it, one process; the baseline) | 36.00 s | 333 k | 800 MiB | 52.00 s | not exact: differs from the reference (see Against DuckDB) | 0% |",
				"| Exact DuckDB (the value rules in SQL, one process) | 40.00 s | 300 k | 900 MiB | 65.00 s | byte-equal to the reference | 10% |",
				"## Against DuckDB\n\nDuckDB answers the same four queries in SQL",
				"Plain DuckDB's answers are **not exact**", "Its files that differ from the reference's: data/bench/duckdb-plain/q1.csv differs (90 bytes, the reference's 100).\n",
				"plain DuckDB, exact DuckDB, demo mode (SQL) and local mode (SQL) ran 3 time(s) each, interleaved",
				"| Mode | Runs | Median wall time | Wall vs plain DuckDB | Wall vs exact DuckDB | Median CPU | CPU vs plain DuckDB | CPU vs exact DuckDB |",
				"| Plain DuckDB (SQL as a user writes it, one process; the baseline) | 3 | 36.00 s | 1.00x | 0.90x | 52.00 s | 1.00x | 0.80x |",
				"| Exact DuckDB (the value rules in SQL, one process) | 3 | 40.00 s | 1.11x | 1.00x | 65.00 s | 1.25x | 1.00x |",
				"| Reference evaluator (one process) | 1 | 20.00 s | 0.56x | 0.50x | 25.00 s | 0.48x | 0.38x |",
				"| Demo: the four default queries, SQL plan (one process, in memory) | 3 | 10.00 s | 0.28x | 0.25x | 18.00 s | 0.35x | 0.28x |",
				"| Local: the four default queries, SQL plan (separate processes, segment logs, fsync, mutual TLS) | 3 | 24.00 s | 0.67x | 0.60x | 23.00 s | 0.44x | 0.35x |",
				"### Every run\n\n| Run | Mode | Wall time | CPU | Peak RSS | Outputs | Other work on the machine |\n|---:|---|---:|---:|---:|---|---:|\n" +
					"| 0 | Reference evaluator (one process) | 20.00 s | 25.00 s | 1500 MiB | byte-equal to the reference | 10% |\n" +
					"| 1 | Plain DuckDB (SQL as a user writes it, one process; the baseline) | 38.00 s | 50.00 s | 100 MiB | not exact: differs from the reference (see Against DuckDB) | 0% |\n" +
					"| 1 | Exact DuckDB (the value rules in SQL, one process) | 42.00 s | 60.00 s | 100 MiB | byte-equal to the reference | 0% |\n" +
					"| 1 | Demo: the four default queries, SQL plan (one process, in memory) | 11.00 s | 18.00 s | 100 MiB | byte-equal to the reference | 0% |\n" +
					"| 1 | Local: the four default queries, SQL plan (separate processes, segment logs, fsync, mutual TLS) | 26.00 s | 23.00 s | 100 MiB | byte-equal to the reference | 0% |\n" +
					"| 2 | Plain DuckDB (SQL as a user writes it, one process; the baseline) | 34.00 s | 55.00 s | 100 MiB | not exact: differs from the reference (see Against DuckDB) | 0% |\n" +
					"| 2 | Exact DuckDB (the value rules in SQL, one process) | 38.00 s | 70.00 s | 100 MiB | byte-equal to the reference | 39% |\n",
				"their rows here are their runs of median wall time",
			},
			notWant: []string{"## Notes", "DIFFER", "**no**", "Not measured", "No DuckDB baseline"},
		},
		{
			name: "targets missed, offenders, demo differs",
			edit: func(r *Report) {
				r.Local.Wall = 45 * time.Second
				r.Local.Procs[0].PeakRSS = 512 * mib64
				r.Local.Procs[1].PeakRSS = 900 * mib64
				r.Demo.Equal = false
				r.Notes = []string{"MISMATCH: demo q1.csv differs"}
			},
			want: []string{
				"| End to end in local mode (durable, separate processes) < 30 s | 45.00 s | **no** |",
				"| Every local-mode process < 512 MiB peak RSS | largest 900 MiB (q3-joiner-0) | **no**: gateway-0 512 MiB, q3-joiner-0 900 MiB |",
				"| **DIFFER from the reference** |",
				"## Notes\n\n- MISMATCH: demo q1.csv differs\n",
			},
		},
		{
			name: "busiest stage differs from the busiest process",
			edit: func(r *Report) {
				r.Local.Procs = append(r.Local.Procs, ProcStat{Instance: "q2-grouper-0", CPU: 7 * time.Second}, ProcStat{Instance: "q2-grouper-1", CPU: 9 * time.Second})
				r.StageProfile = &Profile{Instance: "q2-grouper-1", CPU: 9 * time.Second, Command: "go tool pprof -top -nodecount=15 bin/wololo p/q2-grouper-1.prof", Top: "q2 top",
					Groups: []Share{{Group: "maps and hashing", Percent: 50}}}
			},
			want: []string{
				"By stage (instances summed): q2-grouper 16.00 s, q3-joiner 12.00 s, gateway 8.00 s.",
				"By stage, instances summed, `q2-grouper` used the most CPU: 16.00 s in 2 process(es), 44% of the cluster's. Its busiest instance is `q2-grouper-1` (9.00 s):\n\n" +
					"By kind of work (flat time of the functions themselves): maps and hashing 50%.\n\n`go tool pprof -top -nodecount=15 bin/wololo p/q2-grouper-1.prof`:\n\n```\nq2 top\n```",
			},
		},
		{
			name: "slower than DuckDB, plain DuckDB exact",
			edit: func(r *Report) {
				for i := range r.Samples {
					switch r.Samples[i].Mode {
					case ModeDuckDB:
						r.Samples[i].Wall /= 4 // median 10 s
					case ModeDuckDBPlain:
						r.Samples[i].Wall /= 2 // median 18 s
						r.Samples[i].Equal = true
					}
				}
				r.DuckDBPlain.Equal, r.PlainDiffs = true, nil
			},
			want: []string{
				"| Durable local mode <= 1x plain DuckDB's wall time (median of 3) | 1.33x (24.00 s against 18.00 s; CPU 0.44x) | **no** |",
				"| In-memory demo <= 0.6x plain DuckDB's wall time (median of 3) | 0.56x (10.00 s against 18.00 s; CPU 0.35x) | **yes** |",
				"| Durable local mode <= 0.8x exact DuckDB's wall time (median of 3) | 2.40x (24.00 s against 10.00 s; CPU 0.35x) | **no** |",
				"| In-memory demo <= 0.5x exact DuckDB's wall time (median of 3) | 1.00x (10.00 s against 10.00 s; CPU 0.28x) | **no** |",
				"| Local: the four default queries, SQL plan (separate processes, segment logs, fsync, mutual TLS) | 3 | 24.00 s | 1.33x | 2.40x | 23.00 s | 0.44x | 0.35x |",
				"Plain DuckDB's answers were byte-equal to the reference's on this dataset.",
			},
			notWant: []string{"not exact"},
		},
		{
			name: "a 1% append, against demo's 18 s of CPU",
			edit: func(r *Report) {
				for run, ms := range []int{500, 400, 1200} {
					r.Samples = append(r.Samples, Sample{Mode: ModeDemoAppend, Run: run + 1, Wall: time.Duration(ms) * time.Millisecond, CPU: time.Duration(ms) * time.Millisecond, PeakRSS: 300 * mib64, Equal: true})
				}
				r.Compared = append(r.Compared, ComparedRun{Mode: ModeDemoAppend, Queries: []string{"q1"}, Run: ProcessRun{Wall: 500 * time.Millisecond, CPU: 500 * time.Millisecond, PeakRSS: 300 * mib64, Equal: true}})
			},
			want: []string{
				"| Appending 1% of the dataset to a standing job of the rest (`demo-append`: the last epoch of `wololo demo --epochs 2 --last-epoch-percent 1`) <= 5% of the CPU of one batch job of it all (`demo`, medians) | 2.8% (0.50 s against 18.00 s of CPU) | **yes** |",
				"costs 2.8% of the CPU of one batch job of all the rows",
			},
		},
		{
			name: "no DuckDB",
			edit: func(r *Report) {
				r.DuckDB, r.DuckDBPlain, r.PlainDiffs = ProcessRun{}, ProcessRun{}, nil
				r.DuckDBNote = "building it failed (`CGO_ENABLED=1 go build` in tools/duckdb: exit status 1: cgo: C compiler \"gcc\" not found), so the bench went on without it."
				r.Samples = dropMode(dropMode(r.Samples, ModeDuckDB), ModeDuckDBPlain)
			},
			want: []string{
				"| Durable local mode <= 1x plain DuckDB's wall time (median of 3) | not measured: plain DuckDB did not run | **no** |",
				"| Durable local mode <= 0.8x exact DuckDB's wall time (median of 3) | not measured: exact DuckDB did not run | **no** |",
				"| In-memory demo <= 0.5x exact DuckDB's wall time (median of 3) | not measured: exact DuckDB did not run | **no** |",
				"| Plain DuckDB (SQL as a user writes it, one process; the baseline) | — | — | — | — | not run | — |",
				"| Exact DuckDB (the value rules in SQL, one process) | — | — | — | — | not run | — |",
				"the reference's. **No DuckDB baseline in this run**: building it failed (`CGO_ENABLED=1 go build` in tools/duckdb: exit status 1: cgo: C compiler \"gcc\" not found), so the bench went on without it.\n",
				"| Demo: the four default queries, SQL plan (one process, in memory) | 3 | 10.00 s | — | — | 18.00 s | — | — |",
				"| 1 | Demo: the four default queries, SQL plan (one process, in memory) | 11.00 s |",
			},
			notWant: []string{"| Exact DuckDB (the value rules in SQL, one process) | 3", "1.00x", "Plain DuckDB's answers"},
		},
		{
			name: "plain DuckDB failed, exact ran",
			edit: func(r *Report) {
				r.DuckDBPlain, r.PlainDiffs = ProcessRun{}, nil
				r.DuckDBPlainNote = "it failed in run 1 (exit status 1), so the bench went on without it; its log is data/bench/duckdb-plain.log."
				r.Samples = dropMode(r.Samples, ModeDuckDBPlain)
			},
			want: []string{
				"| Durable local mode <= 1x plain DuckDB's wall time (median of 3) | not measured: plain DuckDB did not run | **no** |",
				"| Durable local mode <= 0.8x exact DuckDB's wall time (median of 3) | 0.60x (24.00 s against 40.00 s; CPU 0.35x) | **yes** |",
				" **No plain DuckDB in this run**: it failed in run 1 (exit status 1), so the bench went on without it; its log is data/bench/duckdb-plain.log.\n",
				"| Local: the four default queries, SQL plan (separate processes, segment logs, fsync, mutual TLS) | 3 | 24.00 s | — | 0.60x | 23.00 s | — | 0.35x |",
			},
		},
		{
			name: "local not measured, no profile, no micro",
			edit: func(r *Report) {
				r.Local = LocalRun{}
				r.Samples = dropMode(r.Samples, ModeLocal)
				r.Profile, r.Profiles, r.Micro = nil, "", ""
				r.ProfileNote = "Profiling was off (--profile=false)."
			},
			want: []string{
				"| End to end in local mode (durable, separate processes) < 30 s | — | not run |",
				"| Every local-mode process < 512 MiB peak RSS | not measured | not run |",
				"| Local, the four default queries' SQL plan: 0 processes, in memory, mutual TLS | — | — | — | — | not run | — |",
				"## Local mode, per process\n\nNot measured.",
				"## Slowest stage\n\nNot measured.\n\nProfiling was off (--profile=false).",
			},
			notWant: []string{"Where its time goes", "```\nBenchmark", "| Local: the four default queries, SQL plan (separate processes"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := fixedReport()
			c.edit(&r)
			var b strings.Builder
			if err := Render(&b, r); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("report lacks %q", w)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("report has %q", w)
				}
			}
			if t.Failed() {
				t.Logf("report:\n%s", got)
			}
		})
	}
}

func TestMedians(t *testing.T) {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	for _, c := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0}, {[]time.Duration{sec(3)}, sec(3)}, {[]time.Duration{sec(5), sec(1), sec(3)}, sec(3)}, {[]time.Duration{sec(4), sec(1), sec(2), sec(9)}, sec(3)},
	} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	r := fixedReport()
	if m := r.MedianOf(ModeDuckDB); m != (Median{Runs: 3, Wall: sec(40), CPU: sec(65)}) {
		t.Errorf("DuckDB's median %+v", m)
	}
	if m := r.MedianOf("nothing"); m.Runs != 0 || m.Wall != 0 {
		t.Errorf("median of no run %+v", m)
	}
	// The detailed run is the one of median wall time: the lower middle
	// one for an even count.
	for _, c := range []struct {
		walls []int
		want  int
	}{{nil, -1}, {[]int{5}, 0}, {[]int{9, 3, 5}, 2}, {[]int{9, 3, 5, 7}, 2}, {[]int{4, 4}, 0}} {
		var s []Sample
		for _, w := range c.walls {
			s = append(s, Sample{Wall: sec(w)})
		}
		if got := MedianRun(s); got != c.want {
			t.Errorf("MedianRun(%v) = %d, want %d", c.walls, got, c.want)
		}
	}
}

func TestRatiosAndVsDuckDBTargets(t *testing.T) {
	r := fixedReport()
	if got := r.RatioTo(ModeLocal, ModeDuckDB); !got.ok || got.Wall != 0.6 || got.CPU != 23.0/65 {
		t.Errorf("local against exact DuckDB %+v", got)
	}
	if got := r.RatioTo(ModeLocal, ModeDuckDBPlain); !got.ok || got.Wall != 24.0/36 || got.CPU != 23.0/52 {
		t.Errorf("local against plain DuckDB %+v", got)
	}
	target := func(mode, base string) VsDuckDB {
		for _, tg := range vsDuckDBTargets {
			if tg.Mode == mode && tg.Base == base {
				return tg
			}
		}
		t.Fatalf("no target of %s against %s", mode, base)
		return VsDuckDB{}
	}
	for _, c := range []struct {
		mode, base string
		max        float64
	}{{ModeLocal, ModeDuckDBPlain, 1.0}, {ModeDemo, ModeDuckDBPlain, 0.6}, {ModeLocal, ModeDuckDB, 0.8}, {ModeDemo, ModeDuckDB, 0.5}} {
		tg := target(c.mode, c.base)
		if tg.Max != c.max {
			t.Errorf("%s against %s: at most %gx, want %gx", c.mode, c.base, tg.Max, c.max)
		}
		if met, measured := tg.Met(r); !met || !measured {
			t.Errorf("%s against %s: met %v measured %v", c.mode, c.base, met, measured)
		}
	}
	localPlain, localExact := target(ModeLocal, ModeDuckDBPlain), target(ModeLocal, ModeDuckDB)
	r.Samples = append(r.Samples, Sample{Mode: ModeLocal, Run: 4, Wall: 33 * time.Second}, Sample{Mode: ModeLocal, Run: 5, Wall: 34 * time.Second})
	// Local's walls 23 24 26 33 34: median 26 s, 0.65x exact's, still
	// within 0.8x; 0.72x plain's, within 1.0x.
	if met, _ := localExact.Met(r); !met {
		t.Error("0.65x is within 0.8x")
	}
	if met, measured := localPlain.Met(r); !met || !measured {
		t.Errorf("0.72x met %v measured %v", met, measured)
	}
	r.Samples = append(r.Samples, Sample{Mode: ModeLocal, Run: 6, Wall: 40 * time.Second}, Sample{Mode: ModeLocal, Run: 7, Wall: 41 * time.Second})
	// 23 24 26 33 34 40 41: median 33 s, 0.825x.
	if met, measured := localExact.Met(r); met || !measured {
		t.Errorf("0.825x met %v measured %v", met, measured)
	}
	for k, w := range []time.Duration{45, 46, 47, 48} {
		r.Samples = append(r.Samples, Sample{Mode: ModeLocal, Run: 8 + k, Wall: w * time.Second})
	}
	// 23 24 26 33 34 40 41 45 46 47 48: median 40 s, 1.11x plain's.
	if met, measured := localPlain.Met(r); met || !measured {
		t.Errorf("1.11x met %v measured %v", met, measured)
	}
	r.Samples = dropMode(r.Samples, ModeDuckDB)
	if got := r.RatioTo(ModeDemo, ModeDuckDB); got.ok {
		t.Errorf("a ratio without exact DuckDB: %+v", got)
	}
	if met, measured := target(ModeDemo, ModeDuckDB).Met(r); met || measured {
		t.Errorf("without exact DuckDB: met %v measured %v", met, measured)
	}
	if met, measured := target(ModeDemo, ModeDuckDBPlain).Met(r); !met || !measured {
		t.Errorf("plain DuckDB still ran: met %v measured %v", met, measured)
	}
}

func TestSamples(t *testing.T) {
	l := fixedReport().Local
	s := localSample(ModeLocal, 2, l)
	// 8 s + 12 s of the processes and 3 s of the client; the largest RSS;
	// other work over the start and the job.
	if s.Mode != ModeLocal || s.Run != 2 || s.CPU != 23*time.Second || s.PeakRSS != 300*mib64 || s.Span != 25500*time.Millisecond || s.OtherCPU != 17*time.Second || !s.Equal {
		t.Errorf("localSample %+v", s)
	}
	p := sampleOf(ModeDuckDB, 1, ProcessRun{Wall: time.Second, CPU: 2 * time.Second, PeakRSS: 5, OtherCPU: time.Millisecond})
	if p.Span != time.Second || p.CPU != 2*time.Second || p.Mode != ModeDuckDB || p.Equal {
		t.Errorf("sampleOf %+v", p)
	}
}

func TestNoiseNotes(t *testing.T) {
	r := fixedReport()
	notes := noiseNotes(r)
	// The reference: 4 s of 2 × 20 s is 10%, not over it; run 2 of
	// exact DuckDB: 30 s of 2 × 38 s.
	if len(notes) != 1 || notes[0] != "While run 2 of exact DuckDB ran (38.00 s), other work on the machine (other programs, the kernel) used about 30.00 s of CPU time, 39% of its 2 CPUs, so its figures are noisy." {
		t.Errorf("notes %q", notes)
	}
}

func TestDuckDBHelpers(t *testing.T) {
	if got := firstErrorLine([]byte("# github.com/x/y\n\n  cgo: C compiler \"gcc\" not found  \nmore\n")); got != `: cgo: C compiler "gcc" not found` {
		t.Errorf("firstErrorLine: %q", got)
	}
	if got := firstErrorLine([]byte("# only\n")); got != "" {
		t.Errorf("firstErrorLine of nothing: %q", got)
	}
	if got := firstErrorLine([]byte(strings.Repeat("x", 300))); len(got) != 2+200+3 {
		t.Errorf("firstErrorLine not cut: %d bytes", len(got))
	}
	if got := duckDBVersion([]byte("duckdb-queries: DuckDB v1.5.6, 20 match rows ...\n")); got != "v1.5.6" {
		t.Errorf("duckDBVersion: %q", got)
	}
	if got := duckDBVersion([]byte("nothing")); got != "" {
		t.Errorf("duckDBVersion of nothing: %q", got)
	}
}

// TestPrepareDuckDB: no baseline asked for, and one whose build fails:
// the bench goes on, with the reason in one line.
func TestPrepareDuckDB(t *testing.T) {
	dir := t.TempDir()
	b := &bencher{o: Options{Go: "go"}, logf: func(string, ...any) {}}
	if path, note := b.prepareDuckDB(context.Background()); path != "" || note != "none was asked for (--duckdb \"\")." {
		t.Errorf("no --duckdb: %q %q", path, note)
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"go.mod": "module broken\n\ngo 1.26\n", "main.go": "package main\n\nfunc main() { undefined() }\n"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.o.DuckDB, b.o.DuckDBSrc = filepath.Join(dir, "duckdb-queries"), src
	path, note := b.prepareDuckDB(context.Background())
	if path != "" || !strings.HasPrefix(note, "building it failed (`CGO_ENABLED=1 go build` in "+src+": exit status 1: ") ||
		!strings.Contains(note, "undefined: undefined") || !strings.HasSuffix(note, "), so the bench went on without it.") || strings.Contains(note, "\n") {
		t.Errorf("broken build: %q %q", path, note)
	}
	b.o.DuckDBSrc = ""
	if path, note := b.prepareDuckDB(context.Background()); path != "" || !strings.Contains(note, "no such file") {
		t.Errorf("no binary: %q %q", path, note)
	}
}

func TestTargetsAndSlowest(t *testing.T) {
	l := fixedReport().Local
	if s, ok := l.Slowest(); !ok || s.Instance != "q3-joiner-0" {
		t.Errorf("slowest %v %v", s, ok)
	}
	if _, ok := (LocalRun{Procs: []ProcStat{{Instance: "a"}}}).Slowest(); ok {
		t.Error("a process without CPU time is the slowest")
	}
	c := l.Targets()
	if !c.WallMet || !c.RSSMet || c.MaxRSS.Instance != "q3-joiner-0" || len(c.Offenders) != 0 {
		t.Errorf("%+v", c)
	}
	l.Wall = TargetWall // the target is strict
	l.Procs[0].PeakRSS = TargetRSS
	c = l.Targets()
	if c.WallMet || c.RSSMet || len(c.Offenders) != 1 || c.Offenders[0].Instance != "gateway-0" {
		t.Errorf("%+v", c)
	}
}

const pprofTop = `File: wololo
Type: cpu
Duration: 30.13s, Total samples = 20s (66.38%)
Showing nodes accounting for 20s, 100% of 20s total
      flat  flat%   sum%        cum   cum%
        5s 25.00% 25.00%         5s 25.00%  runtime.memmove
        3s 15.00% 40.00%         4s 20.00%  runtime.mallocgc
        2s 10.00% 50.00%         2s 10.00%  runtime.scanobject
        2s 10.00% 60.00%         2s 10.00%  internal/runtime/syscall/linux.Syscall6
        2s 10.00% 70.00%         9s 45.00%  github.com/wololo/wololo/services/dataflow/operators.(*joiner).apply
        1s  5.00% 75.00%         1s  5.00%  github.com/wololo/wololo/services/dataflow/batch.numberView.at
        1s  5.00% 80.00%         1s  5.00%  github.com/cockroachdb/pebble/v2.(*DB).Apply
        1s  5.00% 85.00%         1s  5.00%  google.golang.org/protobuf/proto.UnmarshalOptions.unmarshal
        1s  5.00% 90.00%         1s  5.00%  runtime.futex
     0.50s  2.50% 92.50%      0.50s  2.50%  runtime.(*mspan).nextFreeIndex
     0.50s  2.50% 95.00%      0.50s  2.50%  github.com/wololo/wololo/services/dataflow/operators.glob..func1 (inline)
     0.50s  2.50% 97.50%      0.50s  2.50%  strconv.ParseInt
     0.50s  2.50%   100%      0.50s  2.50%  github.com/klauspost/compress/zstd.(*blockDec).decode
         0     0%   100%        20s   100%  runtime.goexit
`

func TestParseTopAndGroups(t *testing.T) {
	flat := ParseTop(pprofTop)
	if len(flat) != 14 || flat["runtime.memmove"] != 25 || flat["github.com/wololo/wololo/services/dataflow/operators.glob..func1 (inline)"] != 2.5 || flat["runtime.goexit"] != 0 {
		t.Fatalf("ParseTop: %v", flat)
	}
	got := map[string]float64{}
	shares := GroupShares(flat)
	for _, s := range shares {
		got[s.Group] = s.Percent
	}
	want := map[string]float64{
		"memory copies":                       25,
		"garbage collection and allocation":   27.5,
		"system calls (network, disk, fsync)": 10,
		"wololo's own code":                   17.5,
		"Pebble (durable store)":              5,
		"protobuf":                            5,
		"scheduling, channels and locks":      5, // futex, goexit
		"Go standard library":                 2.5,
		"compression and checksums":           2.5,
	}
	if len(got) != len(want) {
		t.Errorf("groups %v, want %v", got, want)
	}
	for g, pct := range want {
		if p, ok := got[g]; !ok || p < pct-1e-9 || p > pct+1e-9 {
			t.Errorf("%s: %v (present %v), want %v", g, p, ok, pct)
		}
	}
	for _, sh := range shares {
		if sh.Group == "wololo's own code" && (len(sh.Parts) != 2 || sh.Parts[0].Group != "operators" || sh.Parts[0].Percent != 12.5 || sh.Parts[1].Group != "batch" || sh.Parts[1].Percent != 5) {
			t.Errorf("wololo's parts: %v", sh.Parts)
		}
	}
	if shares[0].Group != "garbage collection and allocation" || shares[1].Group != "memory copies" {
		t.Errorf("not largest first: %v", shares)
	}
	if s := WhereTimeGoes(shares); !strings.HasPrefix(s, "garbage collection and allocation 28%, memory copies 25%, wololo's own code 18% (operators 12%, batch 5%), system calls (network, disk, fsync) 10%") {
		t.Errorf("WhereTimeGoes: %s", s)
	}
	for fn, want := range map[string][2]string{
		"github.com/some/lib/sub/pkg.Func":                                  {"github.com/some/lib", ""},
		"encoding/json.Marshal":                                             {"Go standard library", "encoding/json"},
		"golang.org/x/net/http2.(*Framer).ReadFrame":                        {"gRPC and HTTP/2", ""},
		"github.com/wololo/wololo/deploy.Load":                              {"wololo's own code", "deploy"},
		"github.com/wololo/wololo/services/dataflow/csvio.(*Splitter).Next": {"wololo's own code", "csvio"},
		"aeshashbody": {"maps and hashing", ""},
		"internal/runtime/syscall/linux.Syscall6": {"system calls (network, disk, fsync)", ""},
	} {
		if g, p := Classify(fn); g != want[0] || p != want[1] {
			t.Errorf("Classify(%s) = %q %q, want %q", fn, g, p, want)
		}
	}
}

const pprofTraces = `File: wololo
Type: cpu
Duration: 27.54s, Total samples = 6.56s (23.82%)
-----------+-------------------------------------------------------
      40ms   internal/runtime/syscall/linux.Syscall6
             internal/runtime/syscall/linux.EpollWait
             runtime.netpoll
             runtime.findRunnable
             runtime.schedule
             runtime.park_m
             runtime.mcall
-----------+-------------------------------------------------------
      10ms   runtime.futex
             runtime.gcMarkDone
             runtime.gcBgMarkWorker
-----------+-------------------------------------------------------
     1.10s   runtime.memmove
             runtime.growslice
             github.com/wololo/wololo/services/dataflow/operators.(*tokenMap[go.shape.struct { github.com/wololo/wololo/services/dataflow/operators.rows uint8 }]).put (inline)
             github.com/wololo/wololo/services/dataflow/operators.(*Q2Grouper).Apply.func1
             github.com/wololo/wololo/services/dataflow/batch.EachPlayer
-----------+-------------------------------------------------------
     800ms   runtime.memmove
             github.com/cockroachdb/pebble/v2/internal/arenaskl.newNode
             github.com/wololo/wololo/transport/durable.(*Store).Commit
-----------+-------------------------------------------------------
      30ms   google.golang.org/protobuf/encoding/protowire.AppendVarint
             google.golang.org/grpc/encoding/proto.codecV2.Marshal
-----------+-------------------------------------------------------
      10ms   syscall.Syscall
             os.(*File).Write
             runtime.goexit
-----------+-------------------------------------------------------
      10ms   runtime.asyncPreempt
`

func TestTracesAndComponents(t *testing.T) {
	traces := ParseTraces(pprofTraces)
	if len(traces) != 7 {
		t.Fatalf("%d traces: %+v", len(traces), traces)
	}
	if traces[2].Value != 1100*time.Millisecond || len(traces[2].Stack) != 5 || traces[2].Stack[0] != "runtime.memmove" ||
		!strings.HasSuffix(traces[2].Stack[2], "]).put (inline)") {
		t.Errorf("trace 2: %+v", traces[2])
	}
	wantComp := []struct{ group, part string }{
		{"Go scheduler and network poller", ""},
		{"garbage collector (background)", ""},
		{"wololo's own code", "operators"},
		{"Pebble (durable store)", ""},
		{"protobuf", ""},
		{"Go standard library", ""},
		{"other Go runtime", ""},
	}
	for i, tr := range traces {
		if g, p := Component(tr.Stack); g != wantComp[i].group || p != wantComp[i].part {
			t.Errorf("trace %d: %q %q, want %v", i, g, p, wantComp[i])
		}
	}
	shares := ComponentShares(traces)
	// 2 s in all: operators 1.1 s, Pebble 0.8 s, ...
	if shares[0].Group != "wololo's own code" || shares[0].Percent != 55 || shares[0].Parts[0].Group != "operators" ||
		shares[1].Group != "Pebble (durable store)" || shares[1].Percent != 40 {
		t.Errorf("shares %+v", shares)
	}
	if got := WhereTimeGoes(shares); got != "wololo's own code 55% (operators 55%), Pebble (durable store) 40%, everything else 5%" {
		t.Errorf("WhereTimeGoes: %s", got)
	}
	for fn, want := range map[string]string{
		"github.com/wololo/wololo/services/dataflow/operators.(*tokenMap[go.shape.struct { github.com/x/y.z }]).get": "github.com/wololo/wololo/services/dataflow/operators",
		"github.com/cockroachdb/pebble/v2.(*DB).Apply":                                                               "github.com/cockroachdb/pebble/v2",
		"runtime.memmove":              "runtime",
		"aeshashbody":                  "aeshashbody",
		"gopkg.in/yaml%2ev3.Unmarshal": "gopkg.in/yaml%2ev3",
	} {
		if got := packageOf(fn); got != want {
			t.Errorf("packageOf(%s) = %s, want %s", fn, got, want)
		}
	}
}

func TestStages(t *testing.T) {
	for in, want := range map[string]string{"q3-joiner-1": "q3-joiner", "gateway-0": "gateway", "odd": "odd", "x-": "x-", "a-b": "a-b"} {
		if got := stageOf(in); got != want {
			t.Errorf("stageOf(%s) = %s, want %s", in, got, want)
		}
	}
	l := LocalRun{Procs: []ProcStat{
		{Instance: "gateway-0", CPU: 8 * time.Second},
		{Instance: "q2-grouper-0", CPU: 5 * time.Second},
		{Instance: "q2-grouper-1", CPU: 6 * time.Second},
	}}
	st := l.StageCPU()
	if len(st) != 2 || st[0] != (StageStat{"q2-grouper", 2, 11 * time.Second}) || st[1] != (StageStat{"gateway", 1, 8 * time.Second}) {
		t.Errorf("StageCPU %+v", st)
	}
	if b, ok := l.BusiestOfTopStage(); !ok || b.Instance != "q2-grouper-1" {
		t.Errorf("BusiestOfTopStage %+v %v", b, ok)
	}
}

func TestParseProcStat(t *testing.T) {
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
	line := "1234 (wololo worker) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 12 0\n"
	d, err := parseProcStat(line)
	if err != nil || d != 2870*time.Millisecond {
		t.Fatalf("%v %v, want 2.87s", d, err)
	}
	if _, err := parseProcStat("garbage"); err == nil {
		t.Fatal("no error on garbage")
	}
	if d, err := procCPU(os.Getpid()); err != nil || d < 0 {
		t.Fatalf("procCPU(self): %v %v", d, err)
	}
}

// TestProfileWrapper runs the wrapper script with echo standing in for
// wololo.
func TestProfileWrapper(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "w.sh")
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip("no echo")
	}
	if err := os.WriteFile(script, []byte(ProfileWrapper(echo, "/pro'files")), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"worker", "--instance", "q3-joiner-1", "--listen", "127.0.0.1:1"}, "worker --instance q3-joiner-1 --listen 127.0.0.1:1 --cpuprofile /pro'files/q3-joiner-1.prof"},
		{[]string{"worker", "--instance=q2-grouper-0", "--listen=x"}, "worker --instance=q2-grouper-0 --listen=x --cpuprofile /pro'files/q2-grouper-0.prof"},
		{[]string{"gateway", "--topology", "t.json", "--listen", "a b"}, "gateway --topology t.json --listen a b --cpuprofile /pro'files/gateway-0.prof"},
		{[]string{"gateway", "-h"}, "gateway -h"},
		{[]string{"worker", "-h"}, "worker -h"},
	} {
		out, err := exec.Command(script, c.args...).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out)); got != c.want {
			t.Errorf("%v: %q, want %q", c.args, got, c.want)
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestRunDuckDB runs stand-ins for duckdb-queries: one that writes the
// reference's answers, one that writes another q4.csv (a mismatch for
// exact DuckDB, kept as plain DuckDB's difference), one that fails.
func TestRunDuckDB(t *testing.T) {
	dir := t.TempDir()
	// The reference's answers on empty inputs: each file its header.
	ref, err := reference.Evaluate(strings.NewReader("token,ladder,mirror,average_rating,map,server,duration\n"), strings.NewReader("match,rating,civ,winner\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := ref.Files()
	// script writes want's files, q4.csv's replaced by q4 unless empty.
	script := func(name, q4 string, exit int) string {
		path := filepath.Join(dir, name)
		body := "#!/bin/sh\n# args: --matches M --players P --out DIR [--plain]\nout=$6\nmkdir -p \"$out\"\necho \"$7\" > \"$out/flag\"\n"
		for f, data := range want {
			if f == "q4.csv" && q4 != "" {
				data = []byte(q4)
			}
			body += "printf '%s' '" + string(data) + "' > \"$out/" + f + "\"\n"
		}
		body += "echo 'duckdb-queries: DuckDB v9.8.7, 0 match rows' >&2\nexit " + fmt.Sprint(exit) + "\n"
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	b := &bencher{o: Options{Matches: "m.csv", Players: "p.csv", Work: dir, Runs: 1}, want: want, logf: func(string, ...any) {}}

	b.duck = script("same", "", 0)
	flag := func(mode string) string {
		b, _ := os.ReadFile(filepath.Join(dir, mode, "flag"))
		return strings.TrimSpace(string(b))
	}
	run, err := b.runDuckDB(context.Background(), 1, ModeDuckDB)
	if err != nil || !run.Equal || run.Wall <= 0 || len(b.mismatch) != 0 || b.duckVersion != "v9.8.7" || flag(ModeDuckDB) != "" {
		t.Errorf("same answers: %+v %v %v %q %q", run, err, b.mismatch, b.duckVersion, flag(ModeDuckDB))
	}
	if run, err := b.runDuckDB(context.Background(), 1, ModeDuckDBPlain); err != nil || !run.Equal || len(b.plainDiffs) != 0 || flag(ModeDuckDBPlain) != "--plain" {
		t.Errorf("plain, same answers: %+v %v %v %q", run, err, b.plainDiffs, flag(ModeDuckDBPlain))
	}
	b.duck = script("other", "rank,civ,players\n1,Franks,3\n", 0)
	if run, err := b.runDuckDB(context.Background(), 1, ModeDuckDBPlain); err != nil || run.Equal || len(b.mismatch) != 0 ||
		len(b.plainDiffs) != 1 || !strings.Contains(b.plainDiffs[0], "q4.csv differs") {
		t.Errorf("plain, other answers: %+v %v %v %v", run, err, b.mismatch, b.plainDiffs)
	}
	if run, err := b.runDuckDB(context.Background(), 1, ModeDuckDB); err != nil || run.Equal || len(b.mismatch) != 1 || !strings.HasPrefix(b.mismatch[0], "duckdb (run 1) ") {
		t.Errorf("other answers: %+v %v %v", run, err, b.mismatch)
	}
	b.duck = script("failing", "x", 3)
	if _, err := b.runDuckDB(context.Background(), 1, ModeDuckDB); err == nil || !strings.HasPrefix(err.Error(), "duckdb-queries: exit status 3; the end of ") {
		t.Errorf("failing: %v", err)
	}
}

// TestRenderStorageAndKills: the disk targets and the SIGKILL case appear
// with their verdicts, a kill that costs too much or breaks the outputs
// failing the target.
func TestRenderStorageAndKills(t *testing.T) {
	r := fixedReport()
	r.Local.Procs[0].DiskIdle = 2 << 20
	r.Local.Procs[1].DiskIdle = 40 << 20
	r.Local.DiskIdle, r.Local.DiskPeak, r.Local.RetainedPeak = 42<<20, 900e6, 800e6
	r.Kills = []LocalRun{
		{Killed: "gateway-0", KilledAt: 17 * time.Second, Wall: 25 * time.Second, Equal: true, Procs: []ProcStat{{Instance: "gateway-0", Restarts: 1}},
			KillWalls: []time.Duration{26 * time.Second, 25 * time.Second, 24 * time.Second}},
		{Killed: "q3-joiner-0", KilledAt: 17 * time.Second, Wall: 28 * time.Second, Equal: true},
		// The disk loss: allowed its share of the time to the kill and
		// 1 s more, and left out of the plain kills' worst.
		{Killed: "shard-1", KilledAt: 17 * time.Second, Wall: 34 * time.Second, Equal: true, DiskLost: true, Share: 8500 * time.Millisecond,
			Rebuilds: []string{"state lost at 10:00:00 UTC, found by gateway-0: channel state lost: ...; shard-1 alone was rebuilt from the batches the gateway kept, and caught up in 3.2s"}},
	}
	var b strings.Builder
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| An idle store <= 16 MiB on disk | largest 40 MiB (q3-joiner-0); 42 MiB for the whole idle cluster | **no** |",
		"| The stores' disk during the job <= 1.5x the input | 858 MiB at the peak, 1.12x the input; besides, the gateway's copy of the input a rebuild replays: 763 MiB, 1.00x | **yes** |",
		"| A SIGKILL of any one process at 70% of the job adds <= 1 s (median run) | worst +4.00 s (q3-joiner-0) | **no** |",
		"## A SIGKILL at 70% of the job",
		"| gateway-0 | 17.00 s | 25.00 s | +1.00 s | 26.00 s, 25.00 s, 24.00 s | 1 | byte-equal to the reference |",
		"| shard-1, data directory deleted | 17.00 s | 34.00 s | +10.00 s | 34.00 s | 0 | byte-equal to the reference |",
		"| shard-1 SIGKILLed at 70% of the job with its data directory deleted adds <= its share of the work so far + 1 s | +10.00 s (killed at 17.00 s; its share 8.50 s) | **no** |",
		"What the job's report said of that row's run: state lost at 10:00:00 UTC, found by gateway-0: channel state lost: ...; shard-1 alone was rebuilt from the batches the gateway kept, and caught up in 3.2s.",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if got := killVictims([]ProcStat{{Instance: "gateway-0"}, {Instance: "shard-0"}, {Instance: "shard-1"}, {Instance: "master-1"}}); strings.Join(got, ",") != "gateway-0,shard-1" {
		t.Errorf("victims %v, want gateway-0 and shard-1", got)
	}
}

func TestScaling(t *testing.T) {
	got, err := ParseScaling(" 1, 2,4,")
	if err != nil || fmt.Sprint(got) != "[1 2 4]" {
		t.Fatalf("ParseScaling: %v, %v", got, err)
	}
	for _, bad := range []string{"0", "x", "1,-2", "5000"} {
		if _, err := ParseScaling(bad); err == nil {
			t.Errorf("ParseScaling(%q) accepted", bad)
		}
	}
	r := fixedReport()
	r.Dataset = Dataset{MatchRows: 1_000_000, PlayerRows: 3_000_000}
	r.Scaling = []ScalingRun{
		{Replicas: 1, Plan: "gateway[1] = matches-filter + players-filter + q2-grouper + q3-joiner + q4-joiner + q3-aggregator + q4-aggregator + gateway", Run: LocalRun{Wall: 5 * time.Second, Equal: true, Procs: []ProcStat{
			{Instance: "gateway-0", CPU: 2 * time.Second}, {Instance: "shard-0", CPU: 6 * time.Second}, {Instance: "master-1", CPU: 400 * time.Millisecond}}}},
		{Replicas: 2, Run: LocalRun{Wall: 5 * time.Second, Equal: false, Procs: []ProcStat{
			{Instance: "gateway-0", CPU: 2 * time.Second}, {Instance: "shard-0", CPU: 3 * time.Second}, {Instance: "shard-1", CPU: 3200 * time.Millisecond}}}},
	}
	var b strings.Builder
	renderScaling(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, r)
	out := b.String()
	for _, want := range []string{
		"## The cost of a row with more shards",
		"| shard replicas | Wall time | gateway | master | shard | Total |",
		"| 1 | 5.00 s | 0.500 | 0.100 | 1.500 | **2.100** |",
		"gateway[1] = matches-filter + players-filter + q2-grouper + q3-joiner + q4-joiner + q3-aggregator + q4-aggregator + gateway |",
		"| 2 | 5.00 s | 0.500 | 0.000 | 1.550 | **2.050** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// TestMedianKill: a kill case reports its run of median wall time, every
// run's wall time, and outputs equal only if every run's were.
func TestMedianKill(t *testing.T) {
	runs := []LocalRun{
		{Wall: 30 * time.Second, Equal: true, KilledAt: 1},
		{Wall: 25 * time.Second, Equal: false, KilledAt: 2},
		{Wall: 27 * time.Second, Equal: true, KilledAt: 3},
	}
	m := medianKill(runs)
	if m.Wall != 27*time.Second || m.KilledAt != 3 || m.Equal || len(m.KillWalls) != 3 || m.KillWalls[1] != 25*time.Second {
		t.Fatalf("median of 30, 25 (unequal), 27 s: %+v", m)
	}
	if one := medianKill(runs[:1]); one.Wall != 30*time.Second || !one.Equal || one.KillWalls != nil {
		t.Fatalf("one run: %+v", one)
	}
}

// TestKillCostAgainstItsRound: a kill run's cost is its wall time less
// its round's run without a kill, and the median case is the run of
// median cost, not of median wall time; a run without a reference is
// against the median local run.
func TestKillCostAgainstItsRound(t *testing.T) {
	runs := []LocalRun{
		{Wall: 30 * time.Second, Reference: 29 * time.Second, Equal: true, KilledAt: 1}, // +1 s
		{Wall: 24 * time.Second, Reference: 20 * time.Second, Equal: true, KilledAt: 2}, // +4 s
		{Wall: 27 * time.Second, Reference: 25 * time.Second, Equal: true, KilledAt: 3}, // +2 s
	}
	m := medianKill(runs)
	if m.KilledAt != 3 {
		t.Fatalf("median cost of +1, +4, +2 s: the run killed at %d", m.KilledAt)
	}
	r := Report{Local: LocalRun{Wall: 26 * time.Second}}
	if d, ok := r.KillCost(m); d != 2*time.Second || ok {
		t.Fatalf("cost %v (within the target: %v), want +2 s, over", d, ok)
	}
	if d, _ := r.KillCost(LocalRun{Wall: 27 * time.Second}); d != time.Second {
		t.Fatalf("without a reference: %v, want +1 s against the median local run", d)
	}
}

// TestRenderCompose: the compose deployment's runs give a summary row of
// their median run and every run's wall time; one run that differs from
// the reference makes the row say so.
func TestRenderCompose(t *testing.T) {
	r := fixedReport()
	r.Compose = []ProcessRun{
		{Wall: 9 * time.Second, CPU: 12 * time.Second, Equal: true},
		{Wall: 8 * time.Second, CPU: 11 * time.Second, Equal: true},
		{Wall: 10 * time.Second, CPU: 13 * time.Second, Equal: true},
	}
	var b strings.Builder
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "| The compose deployment (`make up`, then the job as `make submit` sends it; runs: 9.00 s, 8.00 s, 10.00 s): containers, segment logs, fsync, mutual TLS | 9.00 s |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q", want)
	}
	r.Compose[2].Equal = false
	if m, ok := r.ComposeMedian(); !ok || m.Wall != 9*time.Second || m.Equal {
		t.Errorf("a differing run: median %+v, %v; want 9 s, not equal", m, ok)
	}
	if _, ok := (Report{}).ComposeMedian(); ok {
		t.Error("no compose runs, yet a median")
	}
}
