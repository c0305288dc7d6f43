// Package inmem runs a planned topology's tasks in one process with no
// transport at all: the rows of both CSV files are parsed on several
// goroutines, and every task instance (the gateway's, each shard's) is a
// goroutine that applies the batches other tasks hand it as Go values. No
// gRPC, no protobuf encoding, no store, no acknowledgement. It is what
// `wololo demo` runs by default.
//
// It computes with the same parts as a deployment, so its answers are the
// deployment's: the files' headers are checked as the client checks them
// and their records parsed and projected by the gateway's Ingest (both
// services/dataflow/ingest), stage.Outputs
// routes rows to receiver instances by the same hash and cuts the same
// batches, and the operators (chained per task by operators.SpecFor) are
// the ones the nodes run. What it leaves out is everything that makes a
// deployment survive a crash: it keeps nothing and recovers nothing; a
// failure ends the run with an error. A batch an operator rejects is not
// a failure: each task drives its operator through a stage.Driver, as a
// deployment's runtime does, and the batch is dropped, logged and counted
// (Result.DroppedBatches), as a deployment drops it.
//
// What it adds is parallel parsing. A deployment's gateway parses an
// upload as it arrives, in order, on one goroutine. Here the files are on
// disk, so a reader cuts each into pieces that end where a record ends
// (csvio.CompleteRecords, a search for quotes and line ends, far cheaper
// than a parse), and as many parsers as there are CPUs parse pieces side
// by side, each into batches for every receiver. Each piece is parsed
// whole by its own Ingest, starting at its file offset, and their reports
// are summed, so malformed rows, missing values and oversized records are
// counted as a single Ingest reading the file in order would count them;
// the rejected records listed are the first of all the pieces' lists by
// offset, and once a file is parsed the gateway's rule on the share of
// malformed records (schema.MalformedLimit) fails the run as it would fail
// the job.
//
// Order: operators here, as in a deployment, do not depend on the order in
// which a stream's batches arrive, only on its end: a stream ends for a
// task when every sender instance has sent its end, and the source sends
// the end of a file's stream once every piece of the file is parsed.
//
// It may not touch the network, the disk beyond reading the two inputs,
// or the processes; the caller writes the answers.
package inmem
