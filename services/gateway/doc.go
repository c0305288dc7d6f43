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
// The gateway does not compute any query itself and touches no disk except
// through the transport Store.
package gateway
