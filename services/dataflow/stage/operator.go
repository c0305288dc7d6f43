package stage

import (
	"errors"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
)

// Operator is one stage's computation for one job. The runtime calls it
// from a single goroutine.
type Operator interface {
	// Apply consumes one input batch of the named stream.
	Apply(stream string, rows *wololov1.RowBatch, out Emitter) error
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

// StreamEnder is implemented by operators that act when one input stream
// ends (the EOFs of all its sender instances are applied) before the
// others do: a joiner stops buffering once it has every qualifying match.
type StreamEnder interface {
	EndStream(stream string, out Emitter) error
}

// RowSink is implemented by operators that can take their input rows one
// at a time: a chain (see Chain) then hands them each row an operator
// before them emits, by a call, instead of collecting the rows into a
// batch first.
type RowSink interface {
	// Rows returns the functions that apply one row to the operator, which
	// emits into out.
	Rows(out Emitter) RowFuncs
}

// RowFuncs apply one row of each kind; nil for a kind the operator does not
// take.
type RowFuncs struct {
	Match  func(stream string, m *batch.Match)
	Player func(stream string, p *batch.Player)
	Token  func(stream string, token []byte)
	Civ    func(stream string, civ string, wins, count int64)
}

// Emitter is where an operator writes its output rows. Each row goes to the
// receiver instance picked by a stable hash of its key (the match token, or
// the civilization name).
type Emitter interface {
	Match(stream string, m *batch.Match)
	Player(stream string, p *batch.Player)
	Token(stream string, token []byte)
	Civ(stream string, civ string, wins, count int64)
	// Record stores a small per-job value in the same commit (the gateway's
	// results).
	Record(key string, value []byte)
	// Batch emits rows the operator has built and routed itself: to
	// receiver instance to of stream (a SQL plan's exchange, whose rows
	// are a ColumnBatch routed by the plan's key).
	Batch(stream string, to int, rows *wololov1.RowBatch)
	// End ends an output stream before the operator finishes: its EOF
	// goes to every receiver with this step, and nothing more is emitted
	// on it (a SQL plan's exchange from shard to shard ends when its own
	// input does, or the shards would wait on each other's ends).
	End(stream string)
}

// EncodedApplier is implemented by operators that read a batch straight
// from the bytes it travels as (a SQL plan's ColumnBatch, read by
// sqlops' wire codec), skipping the RowBatch the runtime would decode it
// into first. ApplyEncoded is Apply of those bytes, and returns the rows
// applied; nothing the operator keeps may alias encoded. The runtime
// prefers it to Apply (Driver.ApplyEncoded).
type EncodedApplier interface {
	ApplyEncoded(stream string, encoded []byte, out Emitter) (rows int, err error)
}

// EncodedEmitter is implemented by Emitters that take a batch already
// encoded, as a RowBatch's bytes (a SQL plan's exchange writes its rows
// straight from its columns to the bytes they travel as): Encoded is
// Batch of those bytes, of the given rows. An operator uses it where its
// Emitter has it, and Batch where not (the in-process runners, which
// hand batches on as Go values).
type EncodedEmitter interface {
	Encoded(stream string, to int, encoded []byte, rows int)
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

// SnapshotSizer is a Snapshotter that knows about the size of its next
// snapshot, so that the runtime makes room for it at once: a snapshot
// that outgrows its buffer is copied into a larger one.
type SnapshotSizer interface {
	SnapshotSize() int
}

// Spec describes an operator: the streams it reads and writes (checked
// against the topology at start-up) and how to make one per job.
type Spec struct {
	Inputs  []string
	Outputs []string
	New     func() Operator
	// Stateless operators keep nothing between batches (filters): the
	// runtime logs no state for them, and a restart needs no replay.
	Stateless bool
}

// Discard is an Emitter that keeps nothing: a replay's (what the
// operator emits then is already in the outbox, or acknowledged), and
// the tests' and benchmarks' that look only at an operator's state.
var Discard Emitter = discard{}

type discard struct{}

func (discard) Match(string, *batch.Match)            {}
func (discard) Player(string, *batch.Player)          {}
func (discard) Token(string, []byte)                  {}
func (discard) Civ(string, string, int64, int64)      {}
func (discard) Record(string, []byte)                 {}
func (discard) Batch(string, int, *wololov1.RowBatch) {}
func (discard) End(string)                            {}
