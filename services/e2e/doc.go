// Package e2e holds the in-process end-to-end tests: generated datasets run
// through whole clusters (a gateway and shards) over loopback gRPC, every output file
// compared byte for byte with the reference evaluator. It has no non-test
// code.
package e2e
