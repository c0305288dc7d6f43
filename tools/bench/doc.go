// Package bench is `wololo bench`: the end-to-end benchmark behind `make
// bench` and BENCHMARKS.md. In one run on one dataset it measures
//
//   - the reference evaluator (`wololo reference`, a child process, once:
//     its outputs are what every other run must equal): wall time, peak
//     RSS, CPU, rows/s;
//   - the DuckDB baseline (tools/duckdb, a module of its own built with
//     CGO into bin/duckdb-queries first; a child process): the same, and
//     its four outputs must be byte-equal to the reference's. Where it
//     cannot be built or fails, the report says why in one line and the
//     bench goes on without it;
//   - demo mode (`wololo demo`, the whole graph in one process, in memory):
//     the same;
//   - demo mode on SQL jobs (`wololo demo --query NAME=FILE ...`, the SQL
//     engine's in-process runner; sqljobs.go): the four default queries
//     (queries/q1.sql .. q4.sql), whose outputs must be byte-equal to the
//     reference's, and one job of the example user queries
//     (queries/examples/*.sql), whose outputs must be written; their CPU
//     per row against the hand-written graph's and against each other
//     (the SQL targets, sqlreport.go). A mode "local, SQL" is local mode
//     given a SQLJob's Args once `wololo local run` takes --query;
//   - local mode (the topology as separate OS processes with durable segment-log
//     stores, through services/roles/local on a fresh data directory): the wall
//     time from submit to results on disk, rows/s, and per process its peak
//     RSS, CPU seconds and store counters (from its Status RPC); outputs
//     byte-equal to the reference's again;
//   - the modes of --modes (all by default) --runs times, interleaved
//     (DuckDB, demo, its SQL jobs, local, then again), for each mode's
//     median wall time and CPU and its ratio to DuckDB's, with the other
//     load on the machine during every run; the run of median wall time
//     of each mode is the one detailed; without local mode, none of its
//     runs below;
//   - local mode once more with --insecure, for what TLS costs;
//   - the local process that used the most CPU, with the top of its CPU
//     profile (every process runs with --cpuprofile) and where its time
//     goes, by group of functions;
//
// and renders a markdown report with the targets (end to end < 30 s, every
// process < 512 MiB, local mode within 0.8x and demo within 0.5x of
// DuckDB's wall time) and the machine it ran on.
//
// The report (Report and its parts) and its rendering (Render) are pure
// code, and so are the medians and ratios (runs.go); Bench (rounds.go) is
// the thin layer that runs processes and fills a Report.
package bench
