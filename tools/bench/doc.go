// Package bench is `wololo bench`: the end-to-end benchmark behind `make
// bench` and BENCHMARKS.md. In one run on one dataset it measures
//
//   - the reference evaluator (`wololo reference`, a child process): wall
//     time, peak RSS, CPU, rows/s;
//   - demo mode (`wololo demo`, the whole graph in one process, in memory):
//     the same, and its four outputs must be byte-equal to the reference's;
//   - local mode (the topology as separate OS processes with durable Pebble
//     stores, through services/local on a fresh data directory): the wall
//     time from submit to results on disk, rows/s, and per process its peak
//     RSS, CPU seconds and store counters (from its Status RPC); outputs
//     byte-equal to the reference's again;
//   - the local process that used the most CPU, with the top of its CPU
//     profile (every process runs with --cpuprofile) and where its time
//     goes, by group of functions;
//
// and renders a markdown report with the targets (end to end < 30 s, every
// process < 512 MiB) and the machine it ran on.
//
// The report (Report and its parts) and its rendering (Render) are pure
// code; Bench is the thin layer that runs processes and fills a Report.
package bench
