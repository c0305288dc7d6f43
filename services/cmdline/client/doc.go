// Package client is Wololo's command-line client and its library form: it
// submits a job (both files' headers, then each file's bytes, resuming from
// the gateway's acknowledged offset after a broken stream), with the job's
// own SQL queries if it has any (--query NAME=FILE.sql, compiled by the
// gateway), follows the job, fetches its result files (q1.csv..q4.csv, or
// NAME.csv of each query) and prints the job report; it lists the
// client's own jobs at the gateway and cancels one (list.go).
//
// Its inputs (sources.go) are opened once per command with
// services/cmdline/inputfile: a gzip-compressed file is uploaded as its
// decompressed CSV (sized by a counting pass, offsets in the CSV), "-"
// is standard input spooled to a temporary file that a resume or a lost
// job submitted again reads again, removed at the end. Without --matches
// and --players a job is of its --table files only.
//
// It talks only to the gateway's JobService; it never parses rows beyond
// each file's header, which it reads and checks as the gateway will
// (services/dataflow/ingest.ReadHeader).
package client
