// Package reference is the reference evaluator of Wololo: the plainest
// correct single-process implementation of the four queries of docs/queries.md,
// used as the oracle by the tests and benchmarks of every deployment mode,
// and as the `wololo reference` command.
//
// It streams matches.csv once, keeping only the sets of match tokens that
// qualify for Q1, Q3 and Q4, then streams match_players.csv once, keeping a
// small per-match state for Q2 (the row count, the first row's winner flag
// and rating text until the second row arrives, then the verdict on the
// pair) and per-civ counters for Q3 and Q4. Every numeric comparison is
// exact (math/big.Rat); durations are compared as big integers, so huge day
// counts cannot overflow.
//
// What it may not touch: this package is deliberately independent of the
// distributed pipeline so that it can cross-check it. It imports the
// standard library only — never another package of this module (no shared
// CSV reader, schema, value parser or result writer) — and it must not grow
// an optimisation that makes it harder to check by reading against
// docs/queries.md. If the two disagree, docs/queries.md decides, not this code.
// It reads only the two inputs it is given, writes only q1.csv..q4.csv into
// the one folder WriteDir or Run is given (creating it), uses no network,
// sets no global state and never calls os.Exit.
package reference
