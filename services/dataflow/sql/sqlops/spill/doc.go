// Package spill is the scratch files of an operator whose state is past
// its job's memory budget (sqlops: a hash join's rows, an aggregate's
// groups and rows): a Space, one task instance's directory and disk
// budget, and in it Files, an operator's rows of one kind of columns in
// P partitions, each a file that batches are appended to (Append) and
// read back batch by batch (Read), in the order they were appended, or
// one of the operator's own bytes (AppendBytes, ReadBytes: an
// aggregate's groups' state).
//
// The files are scratch, not state: the stage runtime's journal holds
// the batches the operator was given, and a restarted process replays
// them through a fresh operator, which spills them again the same way
// (the same batches in the same order make the same files). So nothing
// is synced, a Space's directory is made anew (what a previous
// incarnation left there removed) when its first file is, and it is
// removed whole on Close; a process removes its spill root at start.
//
// A batch is written with the wire codec (sqlops/wire, the form a
// channel's rows travel in), each after its length; the bytes written
// are counted against the Space's limit, and an Append past it fails
// with an *OverLimit, which the operator turns into its job's budget
// error (sqlops.OverBudget, --job-max-spill-bytes).
//
// What it may touch: exec's batches, plan's columns, the wire codec.
// Not the rest of sqlops, which uses it.
package spill
