// Package wire is the codec of the rows a job's channels carry: an
// exec.Batch (or some of its rows, a Selection) as the ColumnBatch of a
// wololo.v1.RowBatch and back (ToRows, ToSelectedRows, FromRows: the
// message, which the in-process runners hand on as a Go value and
// operators' snapshots hold their rows as), and the same rows straight
// to and from the message's bytes (Writer.Append, Read: what a
// deployment's channels carry), byte for byte what proto.Marshal writes
// of the message.
//
// What it may touch: exec's batches and vectors, plan's column types,
// value's decimals, the batch package's reading of a ColumnBatch, the
// RowBatch messages and protoscan. What it may not: the stage runtime,
// the physical plan, and the rest of sqlops (tasks, operators, the stage
// adapter), which use it; imports_test.go holds it to that. Why a
// package of its own: the dependency is one way (sqlops's exchanges write
// with it, its tasks read with it, its snapshots hold rows in its form)
// and its API is small (a Selection and its two makers, a Writer, four functions), so that
// nothing of sqlops's internals is exported for it; the wire format is
// one place, tested and fuzzed apart from the operators.
//
// The package does no I/O and no logging.
package wire
