// Package client is Wololo's command-line client and its library form: it
// submits a job (both files' headers, then each file's bytes, resuming from
// the gateway's acknowledged offset after a broken stream), follows the job,
// fetches the four result files and prints the job report; it lists the
// client's own jobs at the gateway and cancels one (list.go).
//
// It talks only to the gateway's JobService; it never parses rows beyond
// each file's header, which it reads and checks as the gateway will
// (services/dataflow/ingest.ReadHeader).
package client
