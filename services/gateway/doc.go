// Package gateway is the one public endpoint of a Wololo deployment. It
// implements JobService: it creates jobs after checking both files' headers,
// takes each file's upload as raw CSV bytes, parses and validates the rows
// (skipping and counting malformed ones), projects them to the columns the
// queries need and shards them into the graph through the channel protocol.
// It is also the graph's sink: a stage runtime with the results operator
// collects the four answers, which clients fetch with GetResults.
//
// An upload is acknowledged by byte offset, and only at record boundaries
// after the rows up to there are committed, so a client whose stream breaks
// resumes by re-sending its file from the last acknowledged offset.
//
// The package is in four parts, each with one concern:
//
//   - jobs.go, the job domain: create (headers and id checked), the upload
//     slots and committed offsets, results, retention; every durable fact a
//     protobuf record (job_record.proto) in the store. No gRPC.
//   - upload.go, the upload path: parse a chunk (the pure Ingest), commit
//     its rows with the new offset through the transport.Committer, then
//     acknowledge the offset. A failed commit uses up no sequence number.
//   - service.go, the JobService adapter; errors.go maps the domain's
//     errors to gRPC codes in one function (toStatus).
//   - gateway.go, the Gateway itself: its Config and its lifecycle, Serve,
//     which sweeps abandoned jobs and drops deleted jobs everywhere.
//
// The gateway does not compute any query itself and touches no disk except
// through the transport Store.
package gateway
