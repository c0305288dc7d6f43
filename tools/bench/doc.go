// Package bench is `wololo bench`: the end-to-end benchmark behind `make
// bench` and BENCHMARKS.md. In one run on one dataset it measures
//
//   - the reference evaluator (`wololo reference`, a child process, once:
//     its outputs are what every other run must equal): wall time, peak
//     RSS, CPU, rows/s;
//   - the two DuckDB baselines (tools/duckdb, a module of its own built
//     with CGO into bin/duckdb-queries first; a child process): plain
//     DuckDB (--plain: the SQL a user would write, read_csv and try_cast;
//     the baseline the targets are set on), whose outputs are compared
//     with the reference's and reported "not exact" where they differ,
//     never a mismatch; and exact DuckDB (the contract's value rules in
//     SQL), whose four outputs must be byte-equal to the reference's. The
//     same, wall time, peak RSS, CPU, for both. Where they cannot be built
//     or one fails, the report says why in one line and the bench goes on
//     without it;
//   - demo mode (`wololo demo` as a user runs it, ModeDemo: the four
//     default queries, queries/q1.sql .. q4.sql compiled into the binary,
//     through their SQL plan on the SQL engine's in-process runner): the
//     same, its outputs byte-equal to the reference's;
//   - demo mode on a job of the example user queries (`wololo demo
//     --query NAME=FILE ...`, queries/examples/*.sql; sqljobs.go,
//     ModeDemoExamples), whose outputs must be written, its CPU against
//     the four default queries' (TargetExamplesVsSQL; sqlreport.go);
//   - demo mode on the four default queries as a standing job fed in
//     StandingEpochs appends (`wololo demo --epochs 100`,
//     ModeDemoStanding; docs/standing.md): every version computed, its
//     final answers byte-equal to the reference's, its CPU against one
//     batch job's (TargetStandingVsBatch) and its peak RSS;
//   - demo mode appending AppendPercent of the rows to a standing job of
//     the rest (`wololo demo --epochs 2 --last-epoch-percent 1`,
//     ModeDemoAppend): the last epoch's CPU and wall time, read from its
//     version line, its CPU against one batch job's of all the rows
//     (TargetAppendVsBatch);
//   - local mode on the four default queries as a standing job of one
//     upload that the gateway cuts every StandingEpochEvery
//     (ModeLocalStanding: `client submit --standing --epoch-every 1s`,
//     then closed): when its first version came out (TargetFirstVersion)
//     and its wall time against the batch job's (TargetEpochEveryVsBatch);
//   - local mode (ModeLocal: the topology as separate OS processes with
//     durable segment-log stores, through services/roles/local on a fresh
//     data directory, running the job `wololo local run` submits, the SQL
//     plan of the four default queries): the wall time from submit to
//     results on disk, rows/s, and per process its peak RSS, CPU seconds
//     and store counters (from its Status RPC); outputs byte-equal to the
//     reference's again;
//   - the analyst queries (queries/analyst) run by DuckDB on a user's load
//     of the files, all in one process (duckdb-queries --query,
//     ModeDuckDBAnalyst), and the same texts as one job
//     (DefaultAnalystJobQueries, AnalystJobs) by demo mode (ModeDemoAnalyst)
//     and durable local mode (ModeLocalAnalyst): their median wall times against DuckDB's (issue 41's
//     TargetDemoAnalystVsDuckDB and TargetLocalAnalystVsDuckDB), and their
//     files compared with DuckDB's (analyst.go);
//   - the modes of --modes (all by default) --runs times, interleaved
//     (plain DuckDB, exact DuckDB, demo, demo-examples, local, then
//     again), for each mode's median wall time and CPU
//     and its ratios to plain and exact DuckDB's, with the other
//     load on the machine during every run; the run of median wall time
//     of each mode is the one detailed; without local mode, none of its
//     runs below (which are all of local mode, the SQL plan);
//   - local mode once more with --insecure, for what TLS costs;
//   - with --sizes (make bench: 1,2,4), the cost of more data: plain
//     DuckDB, demo and durable local mode on the dataset and on datasets
//     generated that many times as large, interleaved, with their CPU per
//     million rows and largest process against issue 42's targets
//     (sizes.go);
//   - the local process that used the most CPU, with the top of its CPU
//     profile (every process runs with --cpuprofile) and where its time
//     goes, by group of functions;
//
// and renders a markdown report with the targets (end to end < 30 s, every
// process < 512 MiB, local mode within 1.0x and demo within 0.6x of plain
// DuckDB's wall time, at 1x and at 2x the dataset, and within 0.8x and
// 0.5x of exact DuckDB's; the job
// of example queries at most 2x the four default queries' CPU; the analyst
// queries in demo mode within 1x, in local mode within 1.5x DuckDB's on
// the same texts) and the
// machine it ran on.
//
// The report (Report and its parts) and its rendering (Render) are pure
// code, and so are the medians and ratios (runs.go); Bench (rounds.go) is
// the thin layer that runs processes and fills a Report.
package bench
