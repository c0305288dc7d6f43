// Package operators holds the computations of the four queries, one
// stage.Operator per stage of the default graph:
//
//	matches-filter  matches ──► q1-tokens, q3-matches, q4-matches
//	players-filter  players ──► q2-players, q3-players, q4-players
//	q2-grouper      q2-players ──► q2-tokens                 (keyed by match)
//	q3-joiner       q3-matches + q3-players ──► q3-partials   (keyed by match)
//	q4-joiner       q4-matches + q4-players ──► q4-partials   (keyed by match)
//	q3-aggregator   q3-partials ──► q3-civs
//	q4-aggregator   q4-partials ──► q4-civs (top 5)
//	results         q1-tokens, q2-tokens, q3-civs, q4-civs ──► the four files
//
// Where the plan chains q2-grouper, q3-joiner and q4-joiner into one task
// (the shard), SpecFor runs a MatchTable in their place: the same three
// computations over one table keyed by match, so that a player row is
// looked up once, not three times (matchtable.go says how).
//
// Operators are pure and deterministic: they read row batches and write
// through a stage.Emitter, with no I/O, clocks or goroutines, and Finish
// iterates in sorted order, so the same inputs always give the same output
// batches. The semantics are those of docs/queries.md; the reference evaluator is
// an independent implementation of the same contract.
package operators
