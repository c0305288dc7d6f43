package stage

import (
	"errors"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// Operator is one stage's computation for one job (a task's part of the
// job's plan: sqlops.StageSpec). The runtime calls it from a single
// goroutine, through a Driver.
type Operator interface {
	// Apply consumes one batch of input k, the stream at index k of the
	// job's Wiring.Inputs, as it travels (a RowBatch's bytes), and
	// returns the rows it applied. Nothing the operator keeps may alias
	// batch.
	Apply(input int, batch []byte, out Emitter) (rows int, err error)
	// Finish is called once, after the EOF of every input; it emits the
	// final rows. The operator is discarded afterwards.
	Finish(out Emitter) error
}

// ErrFailsJob marks an operator's error that the job cannot go past at
// this instance: a budget of the job's is spent (sqlops.OverBudget). Such
// an error is not a rejected batch, dropped and counted while the job
// goes on: the Driver lets the operator go, and the runtime fails the job
// here in the commit of the step that met it (nothing emitted, its state
// log dropped, the failure recorded so that a restart does not replay the
// job into it again), and reports it (Config.OnFail). Operators wrap it.
var ErrFailsJob = errors.New("the job cannot go on")

// Spender is implemented by operators that count what their job spends
// of a budget (sqlops): Usage is that, as log key-values, which the
// runtime logs when the job finishes or fails here.
type Spender interface {
	Usage() []any
}

// InputEnder is implemented by operators that act when one input ends
// (the EOFs of all its sender instances are applied) before the others
// do: a task whose operators finish input by input (sqlops).
type InputEnder interface {
	EndInput(input int, out Emitter) error
}

// Emitter is where an operator writes its output: batches it has built
// and routed itself (a SQL plan's exchange, whose rows are a ColumnBatch
// routed by the plan's key, Route), the ends of its output streams, and
// records.
type Emitter interface {
	// Batch emits rows to receiver instance to of stream.
	Batch(stream string, to int, rows *wololov1.RowBatch)
	// Encoded is Batch of rows already encoded, as a RowBatch's bytes,
	// of the given rows (a plan's exchange writes its rows straight from
	// its columns to the bytes they travel as).
	Encoded(stream string, to int, encoded []byte, rows int)
	// End ends an output stream before the operator finishes: its EOF
	// goes to every receiver with this step, and nothing more is emitted
	// on it (a SQL plan's exchange from shard to shard ends when its own
	// input does, or the shards would wait on each other's ends).
	End(stream string)
	// Record stores a small per-job value in the same commit (the gateway's
	// results).
	Record(key string, value []byte)
}

// Snapshotter is implemented by stateful operators that can write their
// whole state as bytes and read it back, so that the runtime can cut the
// state log short (see SnapshotMinBytes). AppendSnapshot appends the state
// to dst and returns the extended slice, so that a chain's operators and
// the journal record around them share one buffer (a snapshot is tens of
// megabytes at full scale, and every copy of it costs). Restore is called
// on a fresh operator with exactly the bytes AppendSnapshot appended.
type Snapshotter interface {
	AppendSnapshot(dst []byte) ([]byte, error)
	Restore(state []byte) error
}

// SnapshotDecliner is a Snapshotter that cannot write its state at
// times without taking it back into memory (a SQL task whose join has
// spilled rows to disk, sqlops): while NoSnapshot says so, the runtime
// takes no snapshot and keeps the log, whose batches a restart replays
// through a fresh operator instead.
type SnapshotDecliner interface {
	NoSnapshot() bool
}

// SnapshotSizer is a Snapshotter that knows about the size of its next
// snapshot, so that the runtime makes room for it at once: a snapshot
// that outgrows its buffer is copied into a larger one.
type SnapshotSizer interface {
	SnapshotSize() int
}

// Discard is an Emitter that keeps nothing: a replay's (what the
// operator emits then is already in the outbox, or acknowledged), and
// the tests' and benchmarks' that look only at an operator's state.
var Discard Emitter = discard{}

type discard struct{}

func (discard) Batch(string, int, *wololov1.RowBatch) {}
func (discard) Encoded(string, int, []byte, int)      {}
func (discard) End(string)                            {}
func (discard) Record(string, []byte)                 {}
