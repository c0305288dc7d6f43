// Package stage is the shared runtime of every worker process: for each
// job it receives the channels the job's plan names for the instance's
// task (Config.Plans: a JobSpec), applies each batch to the job's
// Operator, and hands each step (watermarks, the operator's journal
// entry, what it emitted) to the transport.Committer, which commits it,
// publishes the output to the next stage and acknowledges the input.
//
// The runtime is in two layers: planGroup (plan.go) decides from the
// durable watermarks alone which deliveries of a group to apply, which are
// duplicates and which are refused, and the job's actor carries the plan
// out on the operator (build) and commits it. Its tests need no network.
// The runtime lives by Serve(ctx); a commit failure ends it with that error,
// since the operator is then ahead of the store and only a restart from the
// store brings them back together.
//
// Per job, one goroutine (the job's actor) applies batches one at a time, in
// arrival order across all input channels, so operators need no locks. A
// job's actor waits for outbox room before it applies anything, so a slow
// receiver stops it and, through unacknowledged batches, its senders. It
// waits only on channels to other stages: on a channel from a stage to
// itself (a SQL plan's shuffle from shard to shard) two instances would
// each wait for the other to take a batch while taking none. When
// the EOFs of every upstream instance are applied the actor calls
// Operator.Finish, and the final rows plus an EOF on every output channel go
// out in that same commit.
//
// Per job, the actor takes up to MaxGroup queued deliveries at a time and
// commits them together (one sync for several batches); each delivery is
// still checked against its own channel's watermark, and all are
// acknowledged only after the commit.
//
// Recovery. Every commit records, besides the watermarks and the emitted
// batches, which inputs have ended (the Committer's transport.EndedRecord,
// from Step.Ended) and, in the
// final commit, that the job finished here ("stage/finished"). A stateful
// operator's state is never written row by row: the commit appends a
// journal entry holding the input batches it applied, and on restart
// Recover replays the journal through a fresh operator whose output is
// discarded (it is in the outbox already, with the same sequence numbers,
// because emitted batches are cut at every commit and numbering restarts
// from the store). Operators that implement Snapshotter let the log be cut
// short by a snapshot once it outgrows the policy of SnapshotMinBytes. This
// design was chosen over serialising every operator's state after each
// batch because it needs nothing from the operators (replay is just Apply
// again), keeps commits one record per batch, and makes restart cost the
// time the operator already spent, which is seconds at full scale.
//
// A job whose state log does not replay (its entries are read, an
// operator cannot restore them) is not rebuilt and not started afresh:
// Recover goes on with the other jobs, refuses the job's streams as a
// dropped job's, and lists it in Unrestorable, which the process reports
// to the gateway as the job's failure.
//
// Admission. The runtime keeps state only for jobs introduced to it
// (IntroduceJob: a record in the store, counted against MaxJobs, which is
// where the limit is checked) or, on the gateway, known to its job table
// (Config.Known). A stream of any other job is refused before a job
// exists for it (transport.ErrUnknownJob). Recover reaps what the store
// holds of jobs it does not admit, tombstoned like dropped ones, and takes
// them out of the image before the Committer restores it; Serve's sweep
// (Config.SweepEvery) does the same for what the runtime holds. The
// ordering argument is services/roles/gateway's.
//
// Ended inputs. The commit that applies an input's EOF names it in
// Step.Ended, and the plan refuses anything numbered past it
// (transport.ErrAfterEOF) before the operator or the journal sees it;
// resends at or below the watermark are still duplicates.
//
// Driving an operator. The runtime drives each job's operator through a
// Driver (driver.go), live and in replay: the one definition of an
// input's end (every sender's end noted, by input index and sending
// instance: Ends, then InputEnder.EndInput), of when an operator
// finishes (every input ended) and of what a rejected batch does. A
// plan's task (sqlops.Task) counts the ends of the operators it chains
// with the same Ends.
//
// A rejected batch is dropped and counted. A batch the operator rejects
// (it does not decode, or its columns are not the input's) is skipped:
// what the operator emitted for it is discarded, the runtime acknowledges
// it and logs it, and the count (Runtime.Dropped) says how many. It is
// not retried and does not fail the job. This was chosen over failing
// the whole job because it is the product's
// rule for bad input everywhere else (a malformed record is skipped and
// counted, and no input crashes a process), because a retry could only
// fail again (the operators are deterministic, so a batch rejected once
// is rejected on every replay too), and because failing a job on one bad
// batch would let one corrupt message cost a client every answer.
//
// Operators are pure: they read batches and write through an Emitter the
// batches they built and routed (Route: the stable hash of a row's key
// that picks the receiver instance). The runtime owns sequence numbers,
// commits and the journal. It does not know what the operators compute.
package stage
