// Package schema describes the two input files of docs/queries.md and parses
// their field values: the required columns of matches.csv and
// match_players.csv and how to find them in a header, the typed values
// (booleans, durations, exact decimal numbers) with exactly the accepted
// forms of the contract, and FileReport, the per-file counts of rows read,
// skipped and left out. It also names a query's output file (ResultFile,
// NAME.csv) and the commit record key each is stored under (ResultRecord),
// which the operators, the gateway and the client share.
//
// Every deployment mode parses values through this package, so that they
// agree byte for byte on what is a valid value and what is missing. A
// value that does not parse is missing (ok = false), never an error.
//
// The package is pure: no I/O, no logging, no gRPC, no clock; only the
// standard library. CSV record splitting lives in csvio.
package schema
