// Package sqlops runs a job's physical plan (services/dataflow/sql/physical):
// each of the plan's operators as an operator over exec's columnar
// batches (New), and Run, an in-process runner of the whole plan over the
// job's tables that returns each query's NAME.csv; Answer plans a job's
// queries as the gateway does (sqljob) and runs them with Run, the
// expected answers the end-to-end tests and the chaos harness compare a
// cluster's with.
//
// (Named sqlops, not ops, so that it is not taken for the services/ops
// floor.) Why a package of its own, and not inside physical or exec: physical is
// the plan as data (what runs where), pure and shared with explain and
// the job store; exec is the single-process executor of a logical plan.
// Running the physical plan needs both, plus the stage runtime's pieces
// that every place which runs operators shares (stage.Driver for the ends
// of inputs, stage.Route for the key hash, stage.Snapshotter for state)
// and the wire's row kind (batch.ColumnBuilder, the ColumnBatch of
// wololo.v1.RowBatch). Keeping that here leaves physical free of the
// runtime and exec free of the wire.
//
// # Its parts
//
// The package is five concerns, each in files of its own, and one
// sub-package; TestConcernsKeepApart holds each concern to what it may
// use (what its own files and the concerns it builds on declare;
// the stage runtime's names for a job and its outputs, stage.Emitter,
// JobSpec, Edge and the like, the stage adapter's alone):
//
//   - The operators and their snapshots (ops.go, join.go, exchange.go,
//     snapshot.go, budget.go, pool.go: the process's memory shared among
//     its jobs, setop.go: UNION ALL, window.go: the window
//     functions): each plan operator over exec's batches
//     (New; join.go the outer joins' unmatched rows; reads.go the
//     columns of a join that its readers read), the exchange that routes rows onto a channel and what it
//     sends (Rows, to a Sender), each operator's stage.Snapshotter, the
//     job's Budget and its meter, and the state a join (spilling.go) or
//     an aggregate (aggspill.go) moves to disk past the budget, and the
//     finished groups an aggregate under a HAVING lets go (aggfinish.go).
//     They may not touch a task, a
//     runner or the stage runtime's jobs and emitters: an operator sees
//     its input's batches, its Out and the Sender of its exchange.
//   - The task (task.go, tasksnap.go): one instance of one task of a
//     plan, its operators chained, its inputs' ends counted, and its
//     snapshot (a version, then each operator's). It uses the operators;
//     it may not touch the runners, the transport's stream names or the
//     stage runtime's JobSpec and Emitter.
//   - The epoch task (epoch.go, epochbuild.go, epochfold.go,
//     epochsnap.go, epochwire.go): EpochTask, one instance of one task
//     of a standing plan (physical.Plan.Standing), each operator in its
//     incremental form (services/dataflow/sql/incr's Op), the changes of
//     each epoch and its markers on the channels (folded into the
//     operators' state as they arrive where an operator can: epochfold.go),
//     a version of each query at its sink per epoch; CheckStanding, its
//     snapshot, and the epoch's wire form (EncodeEpochRows, EncodeEpochMarker, DecodeEpoch). It uses
//     the operators (the exchange, the meter), not the Task.
//   - The in-process runners (run.go, answer.go, runepochs.go): Run,
//     RunFeeds, Answer, RunEpochs and RunEpochsEach (an epoch at a time,
//     from an EpochFeed), every instance of a plan's tasks in
//     one process. They use the task, the epoch task and the operators,
//     not the stage adapter.
//   - The stage adapter (stage.go: StageSpec, DecodeSpec and the
//     stage.Operator a Task is in a deployment; epochstage.go: the one an
//     EpochTask is, for a standing plan; streams.go: the channels'
//     stream names; source.go: the gateway's upload feed, Source, and a
//     standing plan's EndEpoch). It
//     uses the task, the epoch task and the operators, not the
//     runners.
//   - The wire codec, the sub-package sqlops/wire: a channel's rows as a
//     RowBatch and as its bytes. It knows nothing of the rest.
//
// Why files of one package and one sub-package: the wire codec is used
// one way (exchanges write with it, tasks read with it, snapshots hold
// rows in its form) through a small API (a Selection, a Writer, a few
// functions), so it is a package, tested and fuzzed on its own. The
// other concerns are not: the task reaches into its operators' state
// (the keys they look up in a shared table, their held bytes, the scan's
// rows, the sink's answer) and the stage adapter into its task's (the
// scan the Source feeds, the meter of its budget), so as packages they
// would export those internals to each other and to every importer. As
// files they keep them unexported; the test keeps the direction.
//
// # The operators
//
// One implementation of each operator's logic: the operators here call
// exec's (filter, projection, the hash join, the semi-join's key set, the
// hash aggregate, distinct, sort, limit, row number, the CSV format), which
// the tests' oracle (services/dataflow/sql/sqlgen/oracle) runs too. What is added here is only what the
// physical plan needs beyond the logical one:
//
//   - the partial aggregate (an AVG as a sum and a count) and the final
//     aggregate that merges partials (counts and sums add up, MIN and MAX
//     are taken again, an AVG is the sum of sums over the sum of counts,
//     the same division exec's AVG does), as the table of aggregate
//     functions says (exec.PartialAggs, exec.MergeAggs);
//   - the exchange (Exchange), which writes an operator's rows on a
//     channel: each row once, with the channel's columns and the routes
//     whose condition it holds for (the routes' conditions found in one
//     pass, exec.Conds), to the instance stage.Route picks by the row's
//     key (a text key's bytes, else exec.AppendKey's, so that 2.5 and
//     2.50 go to one instance), which is hashed for those rows alone;
//     on a broadcast channel (a subquery's one row that a cross product
//     reads on every shard) to every instance;
//   - the shared tables: the keyed operators of one Plan.Tables entry on
//     one instance keep their keys in one exec.KeyTable (the plan's
//     MatchTable for the four default queries), each with its own state
//     per slot beside it; a batch arriving on a channel has each row's
//     key looked up in the table once for all of them that read it (the
//     slots handed to each with its rows: Task.Receive), not once each;
//     an EpochTask's incremental operators of one entry share one too
//     (incr.NewOpIn), and the rows of a channel's batch that they fold
//     as it comes have their keys looked up once for all of them;
//   - the sink, which formats the query's NAME.csv as exec does.
//
// Every operator with state implements stage.Snapshotter: a version, then
// its state (rows as ColumnBatches, an aggregate's groups and a distinct's
// or a semi-join's keys as exec writes them), read back into a fresh
// operator of the same plan operator; a corrupt snapshot is refused, and
// a count the snapshot cannot hold allocates nothing.
//
// # The task and the runners
//
// Task is one instance of one task of a plan: its operators chained as
// the plan chains them, the ends of each one's inputs counted by
// stage.Ends as the stage runtime counts them, given the parsed
// batches of the tables it scans (at the gateway: what an ingest would
// call per parsed row batch) and the batches and ends arriving on the
// channels it reads, handing what its exchanges write (ColumnBatches,
// each to the instance stage.Route picks) to a Sender. It is the unit a
// process runs for a job: StageSpec makes it the stage.Operator each
// process of a deployment runs for a job of queries (the gateway's upload
// feeds its scans through Source, which routes a record to its receiving
// instance as it reads it when one exchange keyed by a text column reads
// the table, each instance's rows a batch of their own). Run runs a
// whole plan in one process, for sqlops.Answer and the tests, and RunFeeds, for `wololo demo
// --query`, the same with the tables given batch by batch as the plan
// runs: every instance of every task as a Task on a goroutine of its own,
// the channels as queues of ColumnBatches between them, handed over as
// they are (not marshalled: what is sent is not modified afterwards).
//
// # Standing plans
//
// A standing plan runs as EpochTasks, one per instance as a plan's Tasks
// run, on the same placement: each operator is its incremental form,
// the changes of each epoch flow through the same channels as rows with
// one more column, their weight (+n, -n), each batch tagged with its
// epoch, and after each epoch's changes an epoch marker goes on every
// channel to every receiving instance. An operator with state steps an
// epoch once it has the epoch's marker from every sender of every input,
// having folded the epoch's changes in as they came when its rows only
// arrive (an aggregate, a join, a semi-join, a DISTINCT), else held them
// (a marker counted per epoch: the runtime does not say which instance
// sent a batch, so a batch says its epoch, and an instance ahead of
// another does not mix the next epoch's changes into this one's), and a
// sink publishes a version per epoch: the answer's CSV, byte for byte a
// batch job's over the epochs so far, and its change. Why a partial
// aggregate sends a touched group's partial row before and after, and
// not its difference: incr's package doc. In a deployment, StageSpec
// makes each process's part of a standing job an EpochTask, whose
// versions are records of the commit of the step that made them
// (Version.Records), and the gateway's upload ends each epoch on every
// table's Source (Source.EndEpoch), which sends the markers; RunEpochs
// runs a standing plan in one process, the channels as the same bytes
// (RunEpochsEach an epoch at a time, each epoch's versions handed over).
//
// # The stage adapter, the wire and the streams
//
// In a deployment a channel's batches are bytes, and the wire codec
// (sqlops/wire) writes them straight from an exchange's columns (to the
// stage.Emitter's Encoded) and reads them straight into a receiving
// Task's batch (the stage.Operator's Apply, given the bytes), without the
// RowBatch message in between; the bytes are protobuf's,
// read field by field in place (services/base/protoscan, which the stage
// runtime reads its state log with too), and whatever the codec does not
// read is read the long way (wire.FromRows). The in-process batch
// runner (Run) has no bytes to write: it hands the receiver a copy of
// the rows sent as a Batch (Rows.Batch, Task.ReceiveBatch), which costs
// less than encoding them and decoding them again; RunEpochs sends the
// bytes, as a deployment does.
//
// A channel travels on a stream of the transport named by its index in
// the plan and the beginning of its name (ChannelStream: "c3-" and at
// most MaxStreamLen bytes in all), so that no query, however long its
// keys, gets a stream name the transport refuses, and no two channels of
// a job share one. The plan is stored (physical.Encode) without stream
// names: each process derives them when the job is introduced to it. So a
// job of queries that runs across the upgrade that brought this naming
// (issue 38; streams were named by the channel's name alone before) finds
// its outboxes, watermarks and journal under names its plan no longer
// has: its receivers refuse the old streams (an unknown channel, a final
// refusal that fails the job with its reason, transport.Sender), and
// nothing resumes them under the new names. Such a job fails, and is
// submitted again; a job that had finished keeps its results.
//
// # State past the budget
//
// A Task counts what its operators hold against Budget.StateBytes after
// each batch; past it, or past the job's share of the process's memory
// (Budget.Pool, a StatePool: --memory-budget), when the job may spill
// (Budget.SpillDir), the
// join or aggregate that holds the most moves partitions of its rows or
// groups to spill files (spilling.go: a grace hash join; aggspill.go;
// the files, sqlops/spill) before the job is failed, and the job fails
// only past Budget.SpillBytes, or past Budget.StateBytes when nothing
// more can move (the key tables other operators share, a semi-join's
// keys; an aggregate alone in its table lets its spilled groups' keys go
// with them). A join's probe of its spilled partitions at its end, one
// step that emits every row it held, is checked between its chunks too
// (meter.between), so that what it feeds spills as it grows. A spilled
// partition's later rows go to disk by their key without it being added
// to the shared key table (keyUse.out), so that table stops growing
// with what went to disk. Why a task with spilled rows declines to
// snapshot rather than write them into its snapshot: spilling.go.
//
// The package does no I/O but the spill files' (through sqlops/spill),
// and no logging (Budget.Spilled tells the process).
package sqlops
