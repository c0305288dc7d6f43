// Package stage is the shared runtime of every worker process: it receives
// the channels the topology names for its stage, applies each batch to the
// stage's Operator, commits the result through the transport Store, and
// publishes what the operator emitted to the next stage.
//
// Per job, one goroutine (the job's actor) applies batches one at a time, in
// arrival order across all input channels, so operators need no locks. A
// job's actor waits for outbox room before it applies anything, so a slow
// receiver stops it and, through unacknowledged batches, its senders. When
// the EOFs of every upstream instance are applied the actor calls
// Operator.Finish, and the final rows plus an EOF on every output channel go
// out in that same commit.
//
// Operators are pure: they read row batches and write through an Emitter.
// The runtime owns routing (a stable hash of each row's key picks the
// receiver instance), batching, sequence numbers and commits. It does not
// know what the operators compute.
package stage
